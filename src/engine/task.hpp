#pragma once
// A job run in the background on a worker of the pool that it has to itself
// (ThreadPool::start_task), for work that waits: a write waiting for the earlier writes of its
// file, blocks read ahead of their consumer, a read beside the open that may void it.
//
// Lifetime: a Task that is destroyed (or assigned to) before its job has finished waits for
// it, as std::async's future does, so the job may refer to what outlives the Task.

#include <functional>
#include <future>
#include <memory>
#include <type_traits>
#include <utility>

#include "engine/thread_pool.hpp"

namespace h5tile::detail {

template <class T>
class [[nodiscard]] Task {
 public:
  Task() = default;
  explicit Task(std::future<T> future) : future_(std::move(future)) {}
  Task(Task&&) noexcept = default;
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      wait();
      future_ = std::move(other.future_);
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { wait(); }

  // Whether the Task holds a job whose result is not taken yet.
  [[nodiscard]] bool valid() const noexcept { return future_.valid(); }
  // Waits for the job; its result or exception stays for get().
  void wait() const noexcept {
    if (future_.valid()) future_.wait();
  }
  // Waits for the job and returns its result or throws its exception (once).
  T get() { return future_.get(); }
  // The result for any number of waiters; the Task gives up its job (and no longer waits for
  // it when destroyed).
  [[nodiscard]] std::shared_future<T> share() && { return future_.share(); }

 private:
  std::future<T> future_;
};

// Runs `job` as a task on `pool`. Throws RuntimeError where no worker can be started for it.
template <class F>
[[nodiscard]] Task<std::invoke_result_t<F&>> start_task(F job, ThreadPool& pool = default_pool()) {
  using Result = std::invoke_result_t<F&>;
  auto packaged = std::make_shared<std::packaged_task<Result()>>(std::move(job));
  auto future = packaged->get_future();
  pool.start_task([packaged] { (*packaged)(); });
  return Task<Result>(std::move(future));
}

}  // namespace h5tile::detail
