#pragma once
// A pool of worker threads and a parallel_for over task indices on it. The calling thread
// takes part in its own loop, so nested parallel_for calls cannot deadlock the pool.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace h5tile::detail {

class ThreadPool {
 public:
  // Throws RuntimeError where a worker cannot be started.
  explicit ThreadPool(unsigned threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  // Queues `job`; it runs on a worker thread. Jobs must not throw.
  void submit(std::function<void()> job);
  // Adds workers until there are at least `threads`; throws RuntimeError where the system
  // cannot start one (the workers started before it stay).
  void grow(unsigned threads);
  [[nodiscard]] unsigned size() const;

 private:
  void work();
  void stop() noexcept;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

// The process-wide pool (grown to settings::threads() on first use).
[[nodiscard]] ThreadPool& default_pool();

// Runs body(0) .. body(count - 1) on at most `concurrency` threads (the caller included) and
// returns when all have run. After the first exception no new index starts; that exception
// is rethrown here.
void parallel_for(std::size_t count, unsigned concurrency, const std::function<void(std::size_t)>& body,
                  ThreadPool& pool = default_pool());

// Splits [0, count) into `parts` contiguous ranges of about equal size and runs body(begin, end)
// for each, at most `parts` at once (the caller included); for per-item work too small to be a
// task of its own.
void parallel_ranges(std::size_t count, unsigned parts, const std::function<void(std::size_t, std::size_t)>& body,
                     ThreadPool& pool = default_pool());

}  // namespace h5tile::detail
