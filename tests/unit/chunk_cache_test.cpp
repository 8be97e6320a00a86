// The decoded-chunk cache of kept datasets (api/chunk_cache): the chunk that holds a box, boxes
// copied out of a chunk as an element-by-element copy would, and the least recently used chunks
// dropped first within the capacity.
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "api/chunk_cache.hpp"

namespace h5tile::detail {
namespace {

// The elements of `from` (each its own index, as uint32) at `region`, one at a time.
std::vector<std::uint32_t> by_element(const Box& from, const Box& region) {
  std::vector<std::uint32_t> out;
  const auto rank = region.rank();
  Shape index(rank, 0);
  for (std::uint64_t n = 0; n < region.count(); ++n) {
    std::uint64_t flat = 0;
    for (std::size_t d = 0; d < rank; ++d)
      flat = flat * from.extent[d] + (region.offset[d] - from.offset[d] + index[d]);
    out.push_back(static_cast<std::uint32_t>(flat));
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < region.extent[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

std::shared_ptr<Array> numbered(const Box& chunk) {
  auto array = std::make_shared<Array>(DType::from_name("uint32"), chunk.extent);
  for (std::uint64_t i = 0; i < chunk.count(); ++i) {
    const auto v = static_cast<std::uint32_t>(i);
    std::memcpy(array->data() + i * 4, &v, 4);
  }
  return array;
}

TEST(ChunkCache, TheChunkHoldingABoxIsClippedToTheDataset) {
  const Shape chunk{16, 10};
  const Shape shape{101, 37};
  EXPECT_EQ(chunk_holding(Box{{0, 0}, {1, 37}}, chunk, shape), std::nullopt) << "spans chunks";
  EXPECT_EQ(chunk_holding(Box{{5, 3}, {1, 7}}, chunk, shape), (Box{{0, 0}, {16, 10}}));
  EXPECT_EQ(chunk_holding(Box{{100, 36}, {1, 1}}, chunk, shape), (Box{{96, 30}, {5, 7}})) << "the edge chunk";
  EXPECT_EQ(chunk_holding(Box{{15, 9}, {2, 1}}, chunk, shape), std::nullopt);
  EXPECT_EQ(chunk_holding(Box{{3, 3}, {0, 1}}, chunk, shape), std::nullopt) << "empty";
  EXPECT_EQ(chunk_holding(Box{{}, {}}, {}, {}), std::nullopt) << "scalar";
  EXPECT_EQ(chunk_holding(Box{{999}, {1}}, {64}, {1000}), (Box{{960}, {40}}));
}

TEST(ChunkCache, BoxesCopiedOutEqualAnElementByElementCopy) {
  const std::vector<std::pair<Box, Box>> cases{
      {Box{{0, 0}, {16, 10}}, Box{{3, 0}, {1, 10}}},           // a whole row: one run
      {Box{{0, 0}, {16, 10}}, Box{{3, 2}, {4, 5}}},            // runs of part rows
      {Box{{96, 30}, {5, 7}}, Box{{97, 31}, {3, 5}}},          // inside an edge chunk
      {Box{{960}, {40}}, Box{{970}, {7}}},                     // 1-D
      {Box{{4, 5, 8}, {4, 5, 1}}, Box{{5, 5, 8}, {2, 5, 1}}},  // 3-D: whole inner axes
      {Box{{4, 5, 4}, {4, 5, 4}}, Box{{5, 6, 4}, {3, 2, 4}}},  // 3-D: one run per middle index
      {Box{{4, 5, 4}, {4, 5, 4}}, Box{{4, 5, 4}, {4, 5, 4}}},  // all of it
      {Box{{0, 0, 0, 0}, {2, 3, 4, 5}}, Box{{1, 0, 1, 0}, {1, 3, 2, 5}}},
  };
  for (const auto& [chunk, region] : cases) {
    const auto bytes = numbered(chunk);
    std::vector<std::uint32_t> out(region.count(), 0xffffffffU);
    copy_box(bytes->data(), chunk, region, 4, reinterpret_cast<std::byte*>(out.data()));
    EXPECT_EQ(out, by_element(chunk, region)) << to_string(chunk) << " " << to_string(region);
  }
}

TEST(ChunkCache, BoxesOfElementsOfEverySizeAreCopiedWhole) {
  // Elements of 1, 2, 8 and 16 bytes (int8 to complex128): each byte of the copy is the byte of
  // the element copied, at its place in the element.
  const Box chunk{{96, 30, 4}, {5, 7, 3}};  // an edge chunk
  const Box region{{97, 31, 5}, {3, 5, 2}};
  const auto indices = by_element(chunk, region);
  for (const std::size_t size : {1, 2, 8, 16}) {
    std::vector<std::byte> bytes(chunk.count() * size);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 7 + i / size);
    std::vector<std::byte> out(region.count() * size, std::byte{0xee});
    copy_box(bytes.data(), chunk, region, size, out.data());
    for (std::size_t n = 0; n < indices.size(); ++n) {
      ASSERT_EQ(std::memcmp(out.data() + n * size, bytes.data() + indices[n] * size, size), 0)
          << "element " << n << " of " << size << " bytes";
    }
  }
}

TEST(ChunkCache, ThreadsCopyingAndKeepingChunksAtOnceGetTheirOwnChunksBytes) {
  // Eight threads read boxes of twelve chunks through a cache of three: each copy is of the chunk
  // asked for, and the bytes kept never exceed the capacity.
  ChunkCache cache(3 * 400);
  const auto chunk = [](std::uint64_t k) { return Box{{k * 10, 0}, {10, 10}}; };
  // Chunk k's element i holds k * 1000 + i.
  const auto decoded = [&](std::uint64_t k) {
    auto array = std::make_shared<Array>(DType::from_name("uint32"), chunk(k).extent);
    for (std::uint32_t i = 0; i < 100; ++i) {
      const auto v = static_cast<std::uint32_t>(k * 1000 + i);
      std::memcpy(array->data() + i * 4, &v, 4);
    }
    return array;
  };
  std::atomic<int> wrong{0};
  std::atomic<bool> over{false};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::uint32_t> out(10);
      for (std::uint64_t n = 0; n < 2000; ++n) {
        const auto k = (n * (t + 1) + t) % 12;
        const auto row = (n + t) % 10;
        const Box region{{k * 10 + row, 0}, {1, 10}};
        if (!cache.copy_out(chunk(k), region, 4, reinterpret_cast<std::byte*>(out.data()))) {
          const auto array = decoded(k);
          copy_box(array->data(), chunk(k), region, 4, reinterpret_cast<std::byte*>(out.data()));
          cache.put(chunk(k), array);
        }
        for (std::uint32_t i = 0; i < 10; ++i) {
          if (out[i] != k * 1000 + row * 10 + i) ++wrong;
        }
        if (cache.bytes() > cache.capacity()) over = true;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_FALSE(over.load());
  EXPECT_EQ(cache.chunks(), 3U);
  EXPECT_EQ(cache.bytes(), 1200U);
}

TEST(ChunkCache, KeepsTheMostRecentlyUsedWithinItsCapacity) {
  ChunkCache cache(3 * 400);  // three chunks of 10 x 10 uint32
  const auto chunk = [](std::uint64_t row) { return Box{{row, 0}, {10, 10}}; };
  const Box row_of_first{{2, 0}, {1, 10}};
  std::vector<std::uint32_t> out(10);
  auto* to = reinterpret_cast<std::byte*>(out.data());
  EXPECT_FALSE(cache.copy_out(chunk(0), row_of_first, 4, to));
  for (const std::uint64_t row : {0, 10, 20}) cache.put(chunk(row), numbered(chunk(row)));
  EXPECT_EQ(cache.chunks(), 3U);
  EXPECT_EQ(cache.bytes(), 1200U);
  EXPECT_TRUE(cache.copy_out(chunk(0), row_of_first, 4, to));  // 0 is now the most recent
  EXPECT_EQ(out, by_element(chunk(0), row_of_first));
  cache.put(chunk(30), numbered(chunk(30)));  // drops 10, the least recently used
  EXPECT_EQ(cache.chunks(), 3U);
  EXPECT_FALSE(cache.copy_out(chunk(10), Box{{12, 0}, {1, 10}}, 4, to));
  EXPECT_TRUE(cache.copy_out(chunk(0), row_of_first, 4, to));
  EXPECT_TRUE(cache.copy_out(chunk(20), Box{{21, 0}, {1, 10}}, 4, to));
  EXPECT_TRUE(cache.copy_out(chunk(30), Box{{31, 0}, {1, 10}}, 4, to));
  // Another box at a kept origin (a chunk of another extent) is not served from it.
  EXPECT_FALSE(cache.copy_out(Box{{0, 0}, {5, 10}}, Box{{2, 0}, {1, 10}}, 4, to));
  // One put twice (two threads decoded it) is kept once.
  cache.put(chunk(30), numbered(chunk(30)));
  EXPECT_EQ(cache.bytes(), 1200U);
  // A chunk larger than the capacity is not kept, and drops nothing.
  cache.put(Box{{40, 0}, {40, 10}}, numbered(Box{{40, 0}, {40, 10}}));
  EXPECT_EQ(cache.chunks(), 3U);
}

TEST(ChunkCache, CapacityFollowsTheLayout) {
  DatasetInfo info;
  info.dtype = DType::from_name("float32");
  info.shape = {640, 4096};
  info.layout = "chunked";
  info.chunk = {64, 4096};
  EXPECT_EQ(chunk_cache_capacity(info), 0U) << "unfiltered chunks are read as stored";
  info.filters = {"shuffle", "deflate"};
  EXPECT_EQ(chunk_cache_capacity(info), kChunkCacheBytes);
  info.chunk = {640, 4096};  // 10 MiB: one chunk
  EXPECT_EQ(chunk_cache_capacity(info), std::uint64_t{640} * 4096 * 4);
  info.chunk = {1 << 20, 5};  // 20 MiB: not cached
  EXPECT_EQ(chunk_cache_capacity(info), 0U);
  info.chunk = {std::uint64_t{1} << 40, std::uint64_t{1} << 40};  // no overflow
  EXPECT_EQ(chunk_cache_capacity(info), 0U);
  info.chunk = {64, 4096};
  info.layout = "virtual";
  EXPECT_EQ(chunk_cache_capacity(info), 0U);
}

}  // namespace
}  // namespace h5tile::detail
