#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/h5tile.hpp>

#include "core/host_pool.hpp"

namespace h5tile::detail {
namespace {

constexpr std::uint64_t kAlign = 2 << 20;
constexpr std::uint64_t kBig = host_pool::kLazyFree;  // the large buffers, marked MADV_FREE when kept

// Restores the setting (and so empties the pool) when a test ends.
class HostPool : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = settings::host_pool_bytes();
    settings::set_host_pool_bytes(0);
  }
  void TearDown() override { settings::set_host_pool_bytes(saved_); }

 private:
  std::uint64_t saved_ = 0;
};

TEST_F(HostPool, AFreedBufferIsReusedForTheSameSizeOnly) {
  settings::set_host_pool_bytes(4 * kBig);
  auto* first = host_pool::allocate(kBig, kAlign);
  ASSERT_NE(first, nullptr);
  std::memset(first, 7, kBig);  // touched: its pages exist
  host_pool::release(first);
  EXPECT_EQ(host_pool::held_bytes(), kBig);
  auto* other = host_pool::allocate(2 * kBig, kAlign);  // another size: new memory
  EXPECT_NE(other, first);
  auto* again = host_pool::allocate(kBig, kAlign);
  EXPECT_EQ(again, first);
  EXPECT_EQ(host_pool::held_bytes(), 0U);
  host_pool::release(again);
  host_pool::release(other);
  EXPECT_EQ(host_pool::held_bytes(), 3 * kBig);
}

TEST_F(HostPool, TheOldestGoFirstToStayWithinTheLimit) {
  settings::set_host_pool_bytes(2 * kBig);
  auto* a = host_pool::allocate(kBig, kAlign);
  auto* b = host_pool::allocate(kBig, kAlign);
  auto* c = host_pool::allocate(kBig, kAlign);
  host_pool::release(a);
  host_pool::release(b);
  host_pool::release(c);  // a is freed to make room
  EXPECT_EQ(host_pool::held_bytes(), 2 * kBig);
  auto* d = host_pool::allocate(kBig, kAlign);
  auto* e = host_pool::allocate(kBig, kAlign);
  EXPECT_TRUE((d == b && e == c) || (d == c && e == b));
  EXPECT_EQ(host_pool::held_bytes(), 0U);
  host_pool::release(d);
  host_pool::release(e);
  settings::set_host_pool_bytes(kBig);  // a lower limit frees down to it at once
  EXPECT_EQ(host_pool::held_bytes(), kBig);
}

TEST_F(HostPool, NothingIsKeptWhenOffOrTooLargeOrSmall) {
  auto* big = host_pool::allocate(kBig, kAlign);
  host_pool::release(big);  // limit 0
  EXPECT_EQ(host_pool::held_bytes(), 0U);
  settings::set_host_pool_bytes(kBig);
  auto* larger = host_pool::allocate(2 * kBig, kAlign);
  host_pool::release(larger);  // larger than the limit
  EXPECT_EQ(host_pool::held_bytes(), 0U);
  auto* small = host_pool::allocate(host_pool::kSmallest / 2, 4096);
  ASSERT_NE(small, nullptr);
  host_pool::release(small);  // below kSmallest: freed
  EXPECT_EQ(host_pool::held_bytes(), 0U);
}

TEST_F(HostPool, SmallBuffersAreKeptByTheirSizeUpToTheirOwnLimit) {
  // Buffers of 1 MiB (a Dask task's chunk) are kept and reused by size, each size the newest first.
  settings::set_host_pool_bytes(4 * kBig);
  constexpr std::uint64_t kMiB = 1 << 20;
  auto* a = host_pool::allocate(kMiB, 4096);
  auto* b = host_pool::allocate(2 * kMiB, 4096);
  auto* c = host_pool::allocate(kMiB, 4096);
  std::memset(a, 1, kMiB);
  host_pool::release(a);
  host_pool::release(b);
  host_pool::release(c);
  EXPECT_EQ(host_pool::held_bytes(), 4 * kMiB);
  EXPECT_EQ(host_pool::allocate(kMiB, 4096), c);
  EXPECT_EQ(host_pool::allocate(kMiB, 4096), a);
  EXPECT_EQ(static_cast<int>(a[kMiB - 1]), 1);  // the same memory, as it was left
  EXPECT_EQ(host_pool::allocate(2 * kMiB, 4096), b);
  EXPECT_EQ(host_pool::held_bytes(), 0U);
  host_pool::release(a);
  host_pool::release(b);
  host_pool::release(c);
  // The oldest of all sizes goes first: a lower limit frees a, then b.
  settings::set_host_pool_bytes(kMiB);
  EXPECT_EQ(host_pool::held_bytes(), kMiB);
  EXPECT_EQ(host_pool::allocate(kMiB, 4096), c);
  auto* d = host_pool::allocate(2 * kMiB, 4096);  // new memory: b was freed
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(host_pool::held_bytes(), 0U);
  host_pool::release(c);
  host_pool::release(d);  // above the limit: freed
}

TEST_F(HostPool, SmallBuffersHoldAtMostTheirShareTheOldestGoingFirst) {
  settings::set_host_pool_bytes(4 * host_pool::kSmallHeld);
  constexpr std::uint64_t kEach = 8 << 20;
  constexpr std::uint64_t kFit = host_pool::kSmallHeld / kEach;
  std::vector<std::byte*> buffers;
  for (std::uint64_t i = 0; i < kFit; ++i) buffers.push_back(host_pool::allocate(kEach, 4096));
  auto* big = host_pool::allocate(kBig, kAlign);
  host_pool::release(big);  // the large ones are counted apart, and are not made room for
  for (auto* b : buffers) host_pool::release(b);
  EXPECT_EQ(host_pool::held_bytes(), host_pool::kSmallHeld + kBig);
  // The program moves on to another size: its buffers are kept, the oldest small ones make room.
  auto* other = host_pool::allocate(2 * kEach, 4096);
  host_pool::release(other);
  EXPECT_EQ(host_pool::held_bytes(), host_pool::kSmallHeld + kBig);
  EXPECT_EQ(host_pool::allocate(2 * kEach, 4096), other);
  EXPECT_EQ(host_pool::allocate(kBig, kAlign), big);
  EXPECT_EQ(host_pool::allocate(kEach, 4096), buffers.back());  // the newest of the size
  // buffers[0] and [1], the oldest, were freed for `other`.
  EXPECT_EQ(host_pool::held_bytes(), (kFit - 3) * kEach);
  host_pool::release(other);
  host_pool::release(big);
  host_pool::release(buffers.back());
}

TEST_F(HostPool, ArraysOfTheSameShapeReuseTheMemoryOfFreedOnes) {
  settings::set_host_pool_bytes(4 * kBig);
  const void* first = nullptr;
  {
    Array a(DType(DTypeKind::Float32), {kBig / 4});
    first = a.data();
  }
  Array b(DType(DTypeKind::Float32), {kBig / 4});
  EXPECT_EQ(b.data(), first);
}

}  // namespace
}  // namespace h5tile::detail
