// Progress reports from many threads arrive in increasing order and end at the total.
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/progress.hpp"

namespace h5tile::detail {
namespace {

TEST(Progress, ReportsGrowAndEndAtTheTotalWhateverTheThreads) {
  constexpr unsigned kThreads = 16;
  constexpr unsigned kAdds = 2000;
  std::vector<std::uint64_t> seen;
  Progress progress(
      [&](std::uint64_t done, std::uint64_t total) {
        EXPECT_EQ(total, std::uint64_t{kThreads} * kAdds * 3);
        seen.push_back(done);  // never called concurrently
        return true;
      },
      std::uint64_t{kThreads} * kAdds * 3);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (unsigned i = 0; i < kAdds; ++i) progress.add(3);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(seen.size(), std::size_t{kThreads} * kAdds);
  for (std::size_t i = 1; i < seen.size(); ++i) ASSERT_LE(seen[i - 1], seen[i]) << i;
  EXPECT_EQ(seen.back(), std::uint64_t{kThreads} * kAdds * 3);
}

}  // namespace
}  // namespace h5tile::detail
