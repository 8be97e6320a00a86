#include "engine/thread_pool.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include <h5tile/error.hpp>

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
    stopping_ = true;  // from here on no worker retires: workers_ stays as it is
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

void ThreadPool::start_task(std::function<void()> job) {
  {
    const std::lock_guard lock(mutex_);
    add_workers(loop_workers_ + tasks_ + 1);
    ++tasks_;
    jobs_.push_back([this, job = std::move(job)] {
      job();
      {
        const std::lock_guard done(mutex_);
        --tasks_;
      }
      ready_.notify_all();  // a worker more than needed now ends
    });
  }
  ready_.notify_one();
}

void ThreadPool::grow(unsigned threads) {
  const std::lock_guard lock(mutex_);
  loop_workers_ = std::max<std::size_t>(loop_workers_, threads);
  add_workers(loop_workers_ + tasks_);
}

void ThreadPool::add_workers(std::size_t threads) {
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

bool ThreadPool::surplus() const { return !stopping_ && workers_.size() > loop_workers_ + tasks_; }

void ThreadPool::retire() {
  const auto me = std::this_thread::get_id();
  const auto it =
      std::find_if(workers_.begin(), workers_.end(), [&](const std::thread& t) { return t.get_id() == me; });
  // Detached, so that nobody has to join it: it touches nothing of the pool once it has
  // released the lock.
  it->detach();
  workers_.erase(it);
}

void ThreadPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ready_.wait(lock, [this] { return stopping_ || !jobs_.empty() || surplus(); });
    if (jobs_.empty()) {
      if (!stopping_) {
        retire();  // a worker started for a task that has ended
      }
      return;  // (or stopping, and drained)
    }
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // what the job holds goes before the lock is taken again
    lock.lock();
  }
}

namespace {

ThreadPool*& default_pool_pointer() {
  // A child of fork() has none of its parent's workers: it starts a pool of its own (the
  // parent's, whose threads do not exist there, is left untouched).
  static ThreadPool* pool = [] {
    ::pthread_atfork(nullptr, nullptr, [] { default_pool_pointer() = new ThreadPool(0); });
    return new ThreadPool(0);
  }();
  return pool;
}

}  // namespace

ThreadPool& default_pool() { return *default_pool_pointer(); }

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
  // As many workers as the loop's threads, the caller's included: loops that run at once (the
  // ranks of a write) share them.
  pool.grow(static_cast<unsigned>(helpers + 1));
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
