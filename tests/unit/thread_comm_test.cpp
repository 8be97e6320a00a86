#include <atomic>
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include <h5tile/h5tile.hpp>

#include "comm/collective.hpp"

namespace h5tile {
namespace {

class ThreadRanks : public testing::TestWithParam<unsigned> {};

TEST_P(ThreadRanks, AllGatherAndBroadcastDeliverEveryRanksData) {
  const unsigned n = GetParam();
  std::atomic<int> checks{0};
  run_thread_ranks(n, [&](Communicator& comm) {
    EXPECT_EQ(comm.size(), static_cast<int>(n));
    for (int round = 0; round < 50; ++round) {
      const auto all = comm.all_gather(std::to_string(comm.rank() * 1000 + round));
      ASSERT_EQ(all.size(), n);
      for (unsigned r = 0; r < n; ++r) EXPECT_EQ(all[r], std::to_string(r * 1000 + round));
      const int root = round % static_cast<int>(n);
      EXPECT_EQ(comm.broadcast("from " + std::to_string(comm.rank()), root), "from " + std::to_string(root));
      // gather: every rank's data on the root alone.
      const auto gathered = comm.gather(std::to_string(comm.rank()), root);
      EXPECT_EQ(gathered.size(), comm.rank() == root ? n : 0U);
      for (std::size_t r = 0; r < gathered.size(); ++r) EXPECT_EQ(gathered[r], std::to_string(r));
      ++checks;
    }
  });
  EXPECT_EQ(checks.load(), static_cast<int>(50 * n));
}

TEST_P(ThreadRanks, OneFailingRankMakesEveryRankThrowTheSameError) {
  const unsigned n = GetParam();
  std::atomic<int> same{0};
  run_thread_ranks(n, [&](Communicator& comm) {
    try {
      detail::agree(comm, [&] {
        if (comm.rank() == static_cast<int>(n) - 1) throw DatasetNotFound("rank failed on purpose");
      });
    } catch (const DatasetNotFound& e) {
      if (std::string(e.what()) == "rank failed on purpose") ++same;
    }
  });
  EXPECT_EQ(same.load(), static_cast<int>(n));
}

TEST_P(ThreadRanks, ARankLeavingEarlyDoesNotHangTheOthers) {
  const unsigned n = GetParam();
  const auto start = std::chrono::steady_clock::now();
  try {
    run_thread_ranks(n, [&](Communicator& comm) {
      if (comm.rank() == 0) throw FileNotFound("rank 0 gave up");
      (void)comm.all_gather("x");
      (void)comm.all_gather("y");
    });
    FAIL() << "no exception";
  } catch (const FileNotFound& e) {
    EXPECT_STREQ(e.what(), "rank 0 gave up");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_P(ThreadRanks, ACompletedExchangeReachesEveryRankEvenIfOneLeavesRightAfter) {
  const unsigned n = GetParam();
  for (int round = 0; round < 200; ++round) {
    std::vector<std::size_t> got(n, 0);
    EXPECT_THROW(run_thread_ranks(n,
                                  [&](Communicator& comm) {
                                    got[static_cast<std::size_t>(comm.rank())] = comm.all_gather("x").size();
                                    if (comm.rank() == 0) throw FileNotFound("leaves after the exchange");
                                  }),
                 FileNotFound);
    for (unsigned r = 0; r < n; ++r) ASSERT_EQ(got[r], n) << "rank " << r << " round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ThreadRanks, testing::Values(1U, 2U, 3U, 8U));

TEST(ThreadRanks, ZeroRanksIsAnError) {
  EXPECT_THROW(run_thread_ranks(0, [](Communicator&) {}), InvalidArgument);
}

TEST(Collective, ErrorsKeepTheirTypeAcrossRanks) {
  for (const auto& make : std::vector<std::function<void()>>{
           [] { throw UnsupportedType("u"); }, [] { throw NotADataset("n"); }, [] { throw IsADirectory("d"); },
           [] { throw FileExists("e"); }, [] { throw IoError("io", 28); }}) {
    std::exception_ptr original;
    try {
      make();
    } catch (...) {
      original = std::current_exception();
    }
    const auto encoded = detail::encode_error(original);
    try {
      detail::throw_encoded(encoded);
    } catch (const IoError& e) {
      EXPECT_EQ(e.error_number(), 28);
    } catch (const Error& e) {
      try {
        std::rethrow_exception(original);
      } catch (const Error& o) {
        EXPECT_EQ(typeid(e), typeid(o));
        EXPECT_STREQ(e.what(), o.what());
      }
    }
  }
}

}  // namespace
}  // namespace h5tile
