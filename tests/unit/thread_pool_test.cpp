// parallel_ranges: every index in exactly one range, whatever the split.
#include <atomic>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace h5tile::detail
