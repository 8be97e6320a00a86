// The pool: parallel_ranges covers every index once; tasks run on workers of their own.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/task.hpp"
#include "engine/thread_pool.hpp"

namespace h5tile::detail {
namespace {

TEST(ParallelRanges, CoverEveryIndexOnce) {
  for (const std::size_t count : {0UL, 1UL, 7UL, 4096UL, 4099UL}) {
    for (const unsigned parts : {0U, 1U, 3U, 16U}) {
      std::vector<std::atomic<int>> seen(count);
      std::atomic<unsigned> calls{0};
      parallel_ranges(count, parts, [&](std::size_t begin, std::size_t end) {
        ++calls;
        ASSERT_LE(begin, end);
        for (auto i = begin; i < end; ++i) ++seen[i];
      });
      EXPECT_EQ(calls.load(), std::max(1U, parts)) << count << " " << parts;
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(seen[i].load(), 1) << i << " of " << count << ", " << parts;
    }
  }
}

TEST(Tasks, ReturnTheirResultOrThrowTheirException) {
  ThreadPool pool(1);
  auto answer = start_task([] { return 42; }, pool);
  auto failure = start_task([]() -> int { throw std::runtime_error("task failed"); }, pool);
  EXPECT_EQ(answer.get(), 42);
  EXPECT_THROW((void)failure.get(), std::runtime_error);
}

TEST(Tasks, ThatWaitForEachOtherAllRunOnAPoolOfOneWorker) {
  // Each task waits until every task has started: on a pool whose tasks shared its one worker
  // this would never end.
  ThreadPool pool(1);
  constexpr int kTasks = 6;
  std::mutex mutex;
  std::condition_variable all_started;
  int started = 0;
  std::vector<Task<void>> tasks;
  for (int i = 0; i < kTasks; ++i) {
    tasks.push_back(start_task(
        [&] {
          std::unique_lock lock(mutex);
          if (++started == kTasks) all_started.notify_all();
          all_started.wait(lock, [&] { return started == kTasks; });
        },
        pool));
  }
  for (auto& t : tasks) t.get();
  EXPECT_EQ(started, kTasks);
}

TEST(Tasks, KeepTheLoopsWorkersFree) {
  // A task that waits does not take a worker that a loop asked for.
  ThreadPool pool(3);
  std::atomic<bool> release{false};
  auto waiting = start_task(
      [&] {
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      pool);
  std::mutex mutex;
  std::condition_variable all_in;
  int inside = 0;
  parallel_for(
      4, 4,
      [&](std::size_t) {
        std::unique_lock lock(mutex);
        if (++inside == 4) all_in.notify_all();
        all_in.wait(lock, [&] { return inside == 4; });  // four bodies at once: the caller and 3 workers
      },
      pool);
  release = true;
  waiting.get();
}

TEST(Tasks, WaitForTheirJobWhenDestroyed) {
  ThreadPool pool(0);
  std::atomic<bool> done{false};
  {
    auto task = start_task(
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          done = true;
        },
        pool);
  }
  EXPECT_TRUE(done.load());
}

TEST(Tasks, WorkersStartedForThemEndOnceIdle) {
  ThreadPool pool(2);
  {
    std::vector<Task<void>> tasks;
    for (int i = 0; i < 5; ++i) tasks.push_back(start_task([] {}, pool));
  }
  for (int i = 0; i < 2000 && pool.size() > 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(pool.size(), 2U);
}

}  // namespace
}  // namespace h5tile::detail
