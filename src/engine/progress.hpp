#pragma once
// Counts the bytes of one operation across its worker threads and reports them to the
// caller's ProgressCallback, one call at a time; a `false` answer cancels the operation.

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>

#include <h5tile/error.hpp>
#include <h5tile/options.hpp>

namespace h5tile::detail {

// Thrown by Progress::add after Progress::stop: the operation's result is no longer wanted.
class Stopped : public std::exception {
 public:
  [[nodiscard]] const char* what() const noexcept override { return "stopped: the result is no longer wanted"; }
};

class Progress {
 public:
  Progress(ProgressCallback callback, std::uint64_t total) : callback_(std::move(callback)), total_(total) {}

  // Adds `bytes` done; throws Cancelled if the callback (now or earlier) said stop.
  // The count is read under the lock, so the callback sees it grow, and the last call sees the
  // total (reading it before the lock let a slower thread report an older count last).
  // Throws Stopped after stop().
  void add(std::uint64_t bytes) {
    if (stopped_) {
      throw Stopped{};
    }
    done_ += bytes;
    if (callback_) {
      const std::lock_guard lock(mutex_);
      if (!cancelled_ && !callback_(std::min(done_.load(), total_), total_)) {
        cancelled_ = true;
      }
    }
    if (cancelled_) {
      throw Cancelled("cancelled by the progress callback");
    }
  }
  // Makes every later add() throw Stopped (the operation stops at its next step), without
  // telling the callback.
  void stop() noexcept { stopped_ = true; }
  // Throws Cancelled if the operation was cancelled.
  void check() const {
    if (cancelled_) {
      throw Cancelled("cancelled by the progress callback");
    }
  }

 private:
  ProgressCallback callback_;
  std::uint64_t total_;
  std::atomic<std::uint64_t> done_{0};
  std::mutex mutex_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace h5tile::detail
