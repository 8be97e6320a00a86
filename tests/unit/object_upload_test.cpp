// ObjectUpload, the sink that gathers a write's bytes into the parts of a multipart upload, against
// an uploader that keeps the parts in memory: the object completed equals the bytes written
// (held bytes as last written, zeros where nothing was), whatever order and threads wrote them;
// whole raw parts go out before finish(); a failed part fails the write and aborts, never completes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "io/object_upload.hpp"

namespace h5tile::detail {
namespace {

struct Store {
  std::mutex mutex;
  std::map<unsigned, std::vector<std::byte>> parts;
  std::vector<std::byte> object;
  bool completed = false;
  bool aborted = false;
  unsigned fail_part = 0;  // this part's upload throws (0: none)
  std::atomic<unsigned> sent{0};
};

class MemoryUploader final : public PartUploader {
 public:
  explicit MemoryUploader(Store& store) : store_(store) {}
  [[nodiscard]] std::string name() const override { return "s3://bucket/test.h5"; }
  std::string put_part(unsigned number, std::span<const std::byte> bytes) override {
    if (number == store_.fail_part) throw std::runtime_error("part failed");
    const std::lock_guard lock(store_.mutex);
    store_.parts[number].assign(bytes.begin(), bytes.end());
    ++store_.sent;
    return "\"etag-" + std::to_string(number) + "\"";
  }
  void complete(const std::vector<std::string>& etags) override {
    const std::lock_guard lock(store_.mutex);
    for (std::size_t i = 0; i < etags.size(); ++i) {
      ASSERT_EQ(etags[i], "\"etag-" + std::to_string(i + 1) + "\"");
      const auto& part = store_.parts.at(static_cast<unsigned>(i + 1));
      store_.object.insert(store_.object.end(), part.begin(), part.end());
    }
    store_.completed = true;
  }
  void abort() noexcept override { store_.aborted = true; }

 private:
  Store& store_;
};

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::vector<std::byte> out(n);
  std::mt19937 rng(seed);
  for (auto& b : out) b = static_cast<std::byte>(rng());
  return out;
}

TEST(ObjectUpload, AssemblesBytesWrittenInAnyOrderFromManyThreads) {
  constexpr std::uint64_t kPart = 64 << 10;
  constexpr std::uint64_t kHeld = 3000;      // "metadata" at the start
  constexpr std::uint64_t kRawBegin = 8192;  // a gap of zeros between
  constexpr std::uint64_t kRawEnd = kRawBegin + 5 * kPart + 777;
  constexpr std::uint64_t kEnd = kRawEnd + 100;  // allocated, never written
  Store store;
  const auto raw = random_bytes(kRawEnd - kRawBegin, 1);
  auto held = random_bytes(kHeld, 2);
  {
    ObjectUpload upload(std::make_unique<MemoryUploader>(store), kPart, 3);
    upload.write_held(random_bytes(kHeld, 9).data(), kHeld, 0);  // written again below
    // Pieces of uneven sizes, shuffled, written by 4 threads.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces;
    std::mt19937 rng(5);
    for (std::uint64_t at = kRawBegin; at < kRawEnd;) {
      const auto n = std::min<std::uint64_t>(kRawEnd - at, 1 + rng() % 20000);
      pieces.emplace_back(at, n);
      at += n;
    }
    std::shuffle(pieces.begin(), pieces.end(), rng);
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (std::size_t i; (i = next++) < pieces.size();) {
          const auto [at, n] = pieces[i];
          upload.write_at(raw.data() + (at - kRawBegin), n, at);
        }
      });
    }
    for (auto& t : threads) t.join();
    upload.write_held(held.data(), kHeld, 0);
    // Parts 2 to 5 are raw through and through: sent before finish().
    for (int i = 0; i < 200 && store.sent < 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // their memory let go after the count
    EXPECT_GE(store.sent.load(), 4U);
    EXPECT_FALSE(store.completed);
    std::vector<std::byte> back(kHeld);
    upload.read_at(back.data(), kHeld, 0);  // held bytes stay readable
    EXPECT_EQ(back, held);
    std::vector<std::byte> sent_back(16);
    EXPECT_THROW(upload.read_at(sent_back.data(), 16, 2 * kPart + 5), std::exception);  // a part sent
    EXPECT_THROW(upload.write_held(held.data(), 16, 2 * kPart + 5), std::exception);
    upload.set_end(kEnd);
    upload.finish();
  }
  ASSERT_TRUE(store.completed);
  EXPECT_FALSE(store.aborted);
  std::vector<std::byte> expected(kEnd);
  std::memcpy(expected.data(), held.data(), kHeld);
  std::memcpy(expected.data() + kRawBegin, raw.data(), raw.size());
  EXPECT_EQ(store.object, expected);
  for (const auto& [number, bytes] : store.parts) {
    if (number < store.parts.size()) {
      EXPECT_EQ(bytes.size(), kPart) << "part " << number;
    }
  }
}

TEST(ObjectUpload, FailedPartAbortsAndNeverCompletes) {
  constexpr std::uint64_t kPart = 4096;
  Store store;
  store.fail_part = 2;
  const auto raw = random_bytes(10 * kPart, 3);
  {
    ObjectUpload upload(std::make_unique<MemoryUploader>(store), kPart, 2);
    bool thrown = false;
    try {
      for (std::uint64_t at = 0; at < raw.size(); at += kPart) upload.write_at(raw.data() + at, kPart, at);
      upload.finish();
    } catch (const std::exception& e) {
      thrown = true;
      EXPECT_NE(std::string(e.what()).find("part failed"), std::string::npos) << e.what();
      upload.abort();
    }
    EXPECT_TRUE(thrown);
  }
  EXPECT_FALSE(store.completed);
  EXPECT_TRUE(store.aborted);
}

TEST(ObjectUpload, DestroyedUnfinishedAborts) {
  Store store;
  {
    ObjectUpload upload(std::make_unique<MemoryUploader>(store), 4096, 2);
    const auto raw = random_bytes(100, 4);
    upload.write_at(raw.data(), raw.size(), 0);
  }
  EXPECT_TRUE(store.aborted);
  EXPECT_FALSE(store.completed);
}

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

TEST(PlanParts, EachRankItsOwnPartsTheGapsRankZeros) {
  // Rank 0's bytes after a head nobody names (HDF5's metadata: rank 0's), rank 1's 20 MiB, rank 2's
  // last 6 MiB; given out of order.
  const auto plan =
      plan_parts({{30 * kMiB, 36 * kMiB, 2}, {10 * kMiB, 30 * kMiB, 1}, {5 * kMiB, 10 * kMiB, 0}}, 8 * kMiB, "w");
  EXPECT_EQ(plan.starts, (std::vector<std::uint64_t>{0, 10 * kMiB, 20 * kMiB, 30 * kMiB, 36 * kMiB}));
  EXPECT_EQ(plan.owners, (std::vector<int>{0, 1, 1, 2}));
  // The last run may be short; a gap between two ranks is rank 0's (and must be a part's size).
  const auto last = plan_parts({{6 * kMiB, 12 * kMiB, 1}, {12 * kMiB, 13 * kMiB, 2}}, 8 * kMiB, "w");
  EXPECT_EQ(last.owners, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(last.starts.back(), 13 * kMiB);
  // One rank's ranges that overlap (two of its tiles in one chunk) are one run.
  const auto same = plan_parts({{5 * kMiB, 12 * kMiB, 1}, {8 * kMiB, 14 * kMiB, 1}}, 8 * kMiB, "w");
  EXPECT_EQ(same.starts, (std::vector<std::uint64_t>{0, 5 * kMiB, 14 * kMiB}));
  EXPECT_EQ(same.owners, (std::vector<int>{0, 1}));
  // A run cut into parts: the remainder shared out a byte each (no part past the others by more).
  const auto even = plan_parts({{0, 15 * kMiB + 2, 0}}, 5 * kMiB, "w");
  EXPECT_EQ(even.starts, (std::vector<std::uint64_t>{0, 5 * kMiB + 1, 10 * kMiB + 2, 15 * kMiB + 2}));
}

TEST(PlanParts, RefusesShortRunsAndSharedBytesByName) {
  const auto message = [](const std::vector<RankBytes>& ranges) {
    try {
      (void)plan_parts(ranges, 8 * kMiB, "cannot write 'd'");
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto short_run = message({{0, 6 * kMiB, 0}, {6 * kMiB, 7 * kMiB, 1}, {7 * kMiB, 20 * kMiB, 2}});
  EXPECT_NE(short_run.find("cannot write 'd': rank 1 writes bytes 6291456 to 7340032"), std::string::npos) << short_run;
  EXPECT_NE(short_run.find("fewer than S3's smallest part"), std::string::npos) << short_run;
  const auto shared = message({{0, 6 * kMiB, 0}, {5 * kMiB, 20 * kMiB, 1}});
  EXPECT_NE(shared.find("ranks 0 and 1 both write byte 5242880"), std::string::npos) << shared;
}

TEST(ObjectUpload, ProcessesEachSendTheirOwnPartsAndOneCompletes) {
  // Three processes' uploads of one object (one store): rank 0's holds HDF5's metadata (written
  // before the division, moved into the new parts) and completes; ranks 1 and 2 join.
  constexpr std::uint64_t kPart = 8 * kMiB;
  const std::vector<RankBytes> ranges = {
      {5 * kMiB, 12 * kMiB, 0}, {12 * kMiB, 30 * kMiB, 1}, {30 * kMiB, 33 * kMiB, 2}};
  const auto plan = plan_parts(ranges, kPart, "w");
  const auto data = random_bytes(33 * kMiB, 6);
  const auto metadata = random_bytes(5000, 7);
  Store store;
  {
    ObjectUpload root(std::make_unique<MemoryUploader>(store), kPart, 2);
    root.write_held(metadata.data(), metadata.size(), 100);
    root.divide(plan, 0);
    std::map<unsigned, std::string> handed;
    for (int rank = 1; rank <= 2; ++rank) {
      ObjectUpload joined(std::make_unique<MemoryUploader>(store), kPart, 2, false);
      joined.divide(plan, rank);
      const auto& mine = ranges[static_cast<std::size_t>(rank)];
      EXPECT_THROW(joined.write_at(data.data(), 16, 0), RuntimeError);  // rank 0's part
      for (auto at = mine.begin; at < mine.end; at += 1 << 20) {
        const auto n = std::min<std::uint64_t>(1 << 20, mine.end - at);
        joined.write_at(data.data() + at, n, at);
      }
      EXPECT_THROW(joined.finish(), RuntimeError);  // rank 0 completes
      handed.merge(joined.flush());
    }
    EXPECT_EQ(handed.size(), 3U);  // rank 1's 18 MiB in two parts, rank 2's 3 MiB in one
    EXPECT_FALSE(store.aborted);   // a joined upload never aborts the upload
    root.write_at(data.data() + 5 * kMiB, 7 * kMiB, 5 * kMiB);
    root.set_end(33 * kMiB);
    EXPECT_THROW(root.finish(), RuntimeError);  // other processes' ETags not given yet
  }
  EXPECT_TRUE(store.aborted);
  EXPECT_FALSE(store.completed);
  // Again, with the ETags handed over: the object is every rank's bytes and the metadata.
  Store again;
  {
    ObjectUpload root(std::make_unique<MemoryUploader>(again), kPart, 2);
    root.write_held(metadata.data(), metadata.size(), 100);
    root.divide(plan, 0);
    for (int rank = 1; rank <= 2; ++rank) {
      ObjectUpload joined(std::make_unique<MemoryUploader>(again), kPart, 2, false);
      joined.divide(plan, rank);
      const auto& mine = ranges[static_cast<std::size_t>(rank)];
      joined.write_at(data.data() + mine.begin, mine.end - mine.begin, mine.begin);
      root.add_etags(joined.flush());
    }
    root.write_at(data.data() + 5 * kMiB, 7 * kMiB, 5 * kMiB);
    root.set_end(33 * kMiB);
    root.finish();
  }
  ASSERT_TRUE(again.completed);
  EXPECT_FALSE(again.aborted);
  auto expected = data;
  std::fill(expected.begin(), expected.begin() + 5 * kMiB, std::byte{0});
  std::memcpy(expected.data() + 100, metadata.data(), metadata.size());
  EXPECT_EQ(again.object, expected);
}

TEST(ObjectUpload, PartSizeKeepsWithinTenThousandParts) {
  EXPECT_EQ(part_size_for(1 << 20, 8 << 20), std::uint64_t{8} << 20);
  EXPECT_EQ(part_size_for(1 << 20, 1 << 20), kMinPartBytes);  // S3's minimum
  const std::uint64_t tib = std::uint64_t{1} << 40;
  const auto size = part_size_for(tib, 8 << 20);
  EXPECT_LE((tib + size - 1) / size, kMaxParts);
  EXPECT_EQ(size % (1 << 20), 0U);
}

}  // namespace
}  // namespace h5tile::detail
