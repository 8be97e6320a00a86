#pragma once
// Ctrl-C during a long call. Python runs its SIGINT handler (which raises KeyboardInterrupt) in
// the main thread only, and only when that thread checks for signals, which a thread blocked in
// C++ never does. So a long call waits in short slices with the GIL released, checks for signals
// between them, and where a handler raised (KeyboardInterrupt, or whatever a handler of the
// program raises) cancels the operation through its progress callback, waits for it to stop (a
// cancelled write leaves the previous file as it was) and raises the handler's exception.

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include <nanobind/nanobind.h>

#include <h5tile/options.hpp>

namespace h5tile::python {

namespace nb = nanobind;

// Between two checks for signals: well under the second a user waits after Ctrl-C.
inline constexpr std::chrono::milliseconds kSignalCheckSlice{50};

// Set to cancel the operation whose progress callback was made by cancellable().
using CancelFlag = std::shared_ptr<std::atomic<bool>>;

[[nodiscard]] inline CancelFlag make_cancel_flag() { return std::make_shared<std::atomic<bool>>(false); }

// `callback` (which may be empty), answering false once `flag` is set.
[[nodiscard]] inline h5tile::ProgressCallback cancellable(CancelFlag flag, h5tile::ProgressCallback callback) {
  return [flag = std::move(flag), callback = std::move(callback)](std::uint64_t done, std::uint64_t total) {
    if (flag->load()) return false;
    return !callback || callback(done, total);
  };
}

// With the GIL held: waits until `finished(slice)` (which blocks for at most `slice`, without the
// GIL, and says whether the operation has ended) is true. Where a signal handler raises meanwhile,
// calls `cancel()`, waits for the operation to end and throws the handler's exception.
template <class Finished, class Cancel>
void wait_interruptibly(Finished&& finished, Cancel&& cancel) {
  for (;;) {
    {
      nb::gil_scoped_release release;
      if (finished(kSignalCheckSlice)) return;
    }
    if (PyErr_CheckSignals() != 0) {
      nb::python_error interrupted;  // takes the handler's exception
      cancel();
      {
        nb::gil_scoped_release release;
        while (!finished(kSignalCheckSlice)) {
        }
      }
      throw interrupted;
    }
  }
}

// With the GIL held: runs `call()` (C++ only: it must not touch Python objects but through the
// GIL) on a thread of its own and returns its result or rethrows its exception, waiting as
// wait_interruptibly does: Ctrl-C sets `flag`, which the call's progress callback must answer
// (made by cancellable()).
template <class Call>
auto run_interruptibly(const CancelFlag& flag, Call&& call) -> decltype(call());

// The same, but where `small` (a call that ends within a moment): on the calling thread, with the
// GIL released, not interruptible, and without the cost of a thread.
template <class Call>
auto run_interruptibly(const CancelFlag& flag, bool small, Call&& call) -> decltype(call()) {
  if (!small) return run_interruptibly(flag, std::forward<Call>(call));
  nb::gil_scoped_release release;
  return call();
}

template <class Call>
auto run_interruptibly(const CancelFlag& flag, Call&& call) -> decltype(call()) {
  std::packaged_task<decltype(call())()> task(std::forward<Call>(call));
  auto result = task.get_future();
  std::thread thread;
  {
    nb::gil_scoped_release release;
    thread = std::thread(std::move(task));
  }
  struct Joined {
    std::thread& thread;
    ~Joined() {
      nb::gil_scoped_release release;
      thread.join();
    }
  } joined{thread};
  wait_interruptibly([&](auto slice) { return result.wait_for(slice) == std::future_status::ready; },
                     [&] { flag->store(true); });
  return result.get();
}

}  // namespace h5tile::python
