#include "engine/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include <h5tile/settings.hpp>

namespace h5tile::detail {

ThreadPool::ThreadPool(unsigned threads) {
  try {
    grow(threads);
  } catch (...) {
    stop();  // no destructor runs for a half-made pool: join the workers that did start
    throw;
  }
}

ThreadPool::~ThreadPool() { stop(); }

void ThreadPool::stop() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : workers_) {
    if (t.joinable()) {
      t.join();
    }
  }
}

void ThreadPool::submit(std::function<void()> job) {
  {
    const std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void ThreadPool::grow(unsigned threads) {
  const std::lock_guard lock(mutex_);
  workers_.reserve(threads);
  while (workers_.size() < threads) {
    try {
      workers_.emplace_back([this] { work(); });
    } catch (const std::system_error& e) {
      // The workers already started stay and are joined by the destructor; the caller fails.
      throw RuntimeError(
          fmt::format("cannot start worker thread {} of {}: {} (lower H5TILE_THREADS or the "
                      "threads asked for)",
                      workers_.size() + 1, threads, e.what()));
    }
  }
}

unsigned ThreadPool::size() const {
  const std::lock_guard lock(mutex_);
  return static_cast<unsigned>(workers_.size());
}

void ThreadPool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) {
        return;  // stopping and drained
      }
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

ThreadPool& default_pool() {
  static ThreadPool pool(settings::threads());
  return pool;
}

namespace {

// State shared by the caller and its helpers; helpers that start after the caller closed
// the loop return at once, so the caller never waits for a job queued behind other work.
struct LoopState {
  std::atomic<std::size_t> next{0};
  std::size_t count = 0;
  const std::function<void(std::size_t)>* body = nullptr;
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::condition_variable idle;
  int active = 0;
  bool closed = false;
  std::exception_ptr error;

  void run() {
    for (std::size_t i = next++; i < count && !failed.load(); i = next++) {
      try {
        (*body)(i);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!error) {
          error = std::current_exception();
        }
        failed = true;
      }
    }
  }
};

}  // namespace

void parallel_for(std::size_t count, unsigned concurrency, const std::function<void(std::size_t)>& body,
                  ThreadPool& pool) {
  if (count == 0) {
    return;
  }
  if (count == 1 || concurrency <= 1) {
    for (std::size_t i = 0; i < count; ++i) {
      body(i);
    }
    return;
  }
  auto state = std::make_shared<LoopState>();
  state->count = count;
  state->body = &body;
  const auto helpers = std::min<std::size_t>(concurrency - 1, count - 1);
  pool.grow(static_cast<unsigned>(helpers));
  for (std::size_t h = 0; h < helpers; ++h) {
    pool.submit([state] {
      {
        const std::lock_guard lock(state->mutex);
        if (state->closed) {
          return;
        }
        ++state->active;
      }
      state->run();
      const std::lock_guard lock(state->mutex);
      if (--state->active == 0) {
        state->idle.notify_all();
      }
    });
  }
  state->run();
  std::unique_lock lock(state->mutex);
  state->closed = true;
  state->idle.wait(lock, [&] { return state->active == 0; });
  if (state->error) {
    std::rethrow_exception(state->error);
  }
}

void parallel_ranges(std::size_t count, unsigned parts, const std::function<void(std::size_t, std::size_t)>& body,
                     ThreadPool& pool) {
  const std::size_t n = std::max(1U, parts);
  parallel_for(
      n, parts, [&](std::size_t p) { body(count * p / n, count * (p + 1) / n); }, pool);
}

}  // namespace h5tile::detail
