#pragma once
// The one way h5tile runs work on other threads: a pool of worker threads, with
// - parallel_for over task indices (the calling thread takes part in its own loop, so nested
//   loops cannot deadlock the pool), and
// - tasks (engine/task.hpp): a job in the background on a worker of its own, for work that waits.
// Ranks of a thread team are not run here (comm/thread_comm.cpp: they wait on each other in
// every collective, so each needs a thread for the whole of its body).

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
  // Starts `threads` workers for loops; throws RuntimeError where a worker cannot be started.
  explicit ThreadPool(unsigned threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  // Runs the jobs still queued, then joins the workers.
  ~ThreadPool();

  // Queues `job`; it runs on a worker thread. Jobs must not throw.
  void submit(std::function<void()> job);
  // Queues `job` (which must not throw) with a worker of its own: the pool keeps one worker
  // more than its loops use for every task queued or running (starting one where needed), so
  // that a task may wait for other tasks or for loops without taking their workers. Workers
  // started for tasks end once idle. Throws RuntimeError where a worker cannot be started
  // (`job` is then not queued).
  void start_task(std::function<void()> job);
  // Keeps at least `threads` workers for loops, adding workers where needed; throws
  // RuntimeError where the system cannot start one (the workers started before it stay).
  void grow(unsigned threads);
  // Workers now, busy or idle.
  [[nodiscard]] unsigned size() const;

 private:
  void work();
  void stop() noexcept;
  void add_workers(std::size_t threads);  // under mutex_: until `threads` workers run
  // Under mutex_: whether there are more workers than the loops and the tasks need.
  [[nodiscard]] bool surplus() const;
  // Under mutex_: the calling worker leaves the pool.
  void retire();

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  std::size_t loop_workers_ = 0;  // the most workers a loop asked for (grow)
  std::size_t tasks_ = 0;         // tasks queued or running
  bool stopping_ = false;
};

// The process-wide pool: it starts without workers and grows to what the loops and tasks of
// each call ask for (their thread counts resolved where the call entered the library). Never
// destroyed: a task still waiting at exit (a batched reader nobody closed) must not hold up
// the exit; writes still running at exit are waited for by their registry (api/pending_writes).
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
