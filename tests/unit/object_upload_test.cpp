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
