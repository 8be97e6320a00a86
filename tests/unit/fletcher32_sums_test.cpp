// The Fletcher-32 sums that the GPU adds up part by part (core/fletcher32_sums.hpp), held to the
// CPU codec (engine/codecs/fletcher32.cpp, itself held to what HDF5 appends in codecs_test.cpp):
// whole buffers and buffers split into parts at even offsets, odd lengths, sizes around the
// codec's 360-word blocks and the GPU kernel's 64 KiB parts, all-0xff bytes (sums that are
// multiples of 65535, which HDF5 keeps as 0xffff), and the mismatch that both decoders report.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"
#include "core/fletcher32_sums.hpp"
#include "engine/codecs/codec.hpp"
#include "engine/codecs/pipeline.hpp"

namespace h5tile::detail {
namespace {

std::vector<unsigned char> bytes(std::size_t n, int fill, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> out(n);
  for (auto& b : out) b = static_cast<unsigned char>(fill >= 0 ? fill : static_cast<int>(rng() & 0xffU));
  return out;
}

std::uint32_t cpu(const std::vector<unsigned char>& data) {
  return fletcher32(reinterpret_cast<const std::byte*>(data.data()), data.size());
}

std::uint32_t whole(const std::vector<unsigned char>& data) {
  return fletcher32_value(fletcher32_sums(data.data(), data.size(), 0, fletcher32_words(data.size())));
}

// The sums of `parts` parts of (about) equal words, combined left to right, and also each
// shifted by the words after it and added up, as the GPU kernel adds its blocks' sums.
void check_parts(const std::vector<unsigned char>& data, std::uint64_t parts, const std::string& what) {
  const std::uint64_t words = fletcher32_words(data.size());
  const std::uint64_t per = parts == 0 ? words : (words + parts - 1) / parts;
  Fletcher32Sums combined;
  std::uint64_t sum1 = 0;
  std::uint64_t sum2 = 0;
  bool nonzero = false;
  for (std::uint64_t first = 0; first < words || first == 0; first += per == 0 ? 1 : per) {
    const std::uint64_t end = std::min(words, first + per);
    const auto part = fletcher32_sums(data.data(), data.size(), first, end);
    combined = fletcher32_combine(combined, part);
    const auto shifted = fletcher32_shift(part, words - end);
    sum1 += shifted.sum1;
    sum2 += shifted.sum2;
    nonzero = nonzero || shifted.nonzero;
    if (end >= words) break;
  }
  EXPECT_EQ(combined.words, words) << what;
  EXPECT_EQ(fletcher32_value(combined), cpu(data)) << what << ", " << parts << " parts combined";
  const Fletcher32Sums added{static_cast<std::uint32_t>(sum1 % kFletcher32Mod),
                             static_cast<std::uint32_t>(sum2 % kFletcher32Mod), words, nonzero};
  EXPECT_EQ(fletcher32_value(added), cpu(data)) << what << ", " << parts << " parts shifted and added";
}

TEST(Fletcher32Sums, EqualTheCpuCodecForEachSize) {
  const std::size_t kib = 1024;
  for (const std::size_t n :
       {std::size_t{0},   std::size_t{1},   std::size_t{2},   std::size_t{3},    std::size_t{4},
        std::size_t{5},   std::size_t{15},  std::size_t{16},  std::size_t{17},   std::size_t{719},
        std::size_t{720}, std::size_t{721}, std::size_t{722}, std::size_t{1441}, 64 * kib - 1,
        64 * kib,         64 * kib + 1,     64 * kib + 2,     1024 * kib + 3,    3 * 1024 * kib + 7}) {
    for (const int fill : {-1, 0xff, 0x00, 0x01}) {
      const auto data = bytes(n, fill, static_cast<unsigned>(n));
      const std::string what = std::to_string(n) + " bytes of " + (fill < 0 ? "random" : std::to_string(fill));
      EXPECT_EQ(whole(data), cpu(data)) << what;
    }
  }
}

TEST(Fletcher32Sums, PartsAddUpToTheWholeAtEvenOffsets) {
  for (const std::size_t n :
       {std::size_t{1}, std::size_t{7}, std::size_t{720}, std::size_t{1001}, std::size_t{65537}, std::size_t{200000}}) {
    for (const int fill : {-1, 0xff}) {
      const auto data = bytes(n, fill, static_cast<unsigned>(n) + 1);
      const std::string what = std::to_string(n) + (fill < 0 ? " random bytes" : " bytes of 0xff");
      for (const std::uint64_t parts : {1U, 2U, 3U, 7U, 64U, 1000U}) check_parts(data, parts, what);
    }
  }
}

TEST(Fletcher32Sums, MultiplesOf65535AreKeptAs0xffffAsHdf5Keeps) {
  // Two bytes of 0xff are one word of 65535: sum1 and sum2 are multiples of 65535, so HDF5's
  // end-around carry gives 0xffff for both; words of 0 give 0.
  const std::vector<unsigned char> ffff{0xff, 0xff};
  EXPECT_EQ(cpu(ffff), 0xffffffffU);
  EXPECT_EQ(whole(ffff), 0xffffffffU);
  const std::vector<unsigned char> zeros(10, 0);
  EXPECT_EQ(cpu(zeros), 0U);
  EXPECT_EQ(whole(zeros), 0U);
  // Words of 0 after a word of 65535 leave sums that are multiples of 65535.
  std::vector<unsigned char> tail{0xff, 0xff, 0, 0, 0, 0};
  EXPECT_EQ(whole(tail), cpu(tail));
  check_parts(tail, 3, "0xffff then two words of 0");
  // 65535 words of 1: sum1 = 65535.
  std::vector<unsigned char> ones(2 * 65535);
  for (std::size_t i = 1; i < ones.size(); i += 2) ones[i] = 1;
  EXPECT_EQ(whole(ones), cpu(ones));
  EXPECT_EQ(whole(ones) & 0xffffU, 0xffffU);
  check_parts(ones, 5, "65535 words of 1");
}

TEST(Fletcher32Sums, TheByteSwappedFormOfOldHdf5Matches) {
  const auto data = bytes(1001, -1, 9);
  const std::uint32_t sum = cpu(data);
  const std::uint32_t swapped = ((sum & 0x00ff00ffU) << 8) | ((sum >> 8) & 0x00ff00ffU);
  EXPECT_TRUE(fletcher32_matches(sum, sum));
  EXPECT_TRUE(fletcher32_matches(swapped, sum));
  EXPECT_FALSE(fletcher32_matches(sum ^ 1U, sum));
  EXPECT_EQ(fletcher32_mismatch(swapped, sum), "");
}

TEST(Fletcher32Sums, AMismatchIsWordedAsTheCodecThrowsIt) {
  // The GPU path reports a mismatch with fletcher32_mismatch: the words of the CPU codec.
  auto data = bytes(1000, -1, 4);
  std::vector<std::byte> stored(data.size() + 4);
  std::memcpy(stored.data(), data.data(), data.size());
  const std::uint32_t sum = cpu(data) ^ 0x10U;  // a wrong checksum
  for (std::size_t i = 0; i < 4; ++i) stored[data.size() + i] = static_cast<std::byte>(sum >> (8 * i));
  auto pipeline = FilterPipeline::make({{kFilterFletcher32, {}}}, 1);
  auto* p = std::get_if<FilterPipeline>(&pipeline);
  ASSERT_NE(p, nullptr);
  ByteBuffer buffer;
  ByteBuffer scratch;
  buffer.resize(stored.size());
  std::memcpy(buffer.data(), stored.data(), stored.size());
  try {
    p->decode(buffer, scratch, 0, data.size());
    FAIL() << "a wrong checksum decoded";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "fletcher32: " + fletcher32_mismatch(sum, cpu(data)));
  }
  EXPECT_EQ(fletcher32_mismatch(sum, cpu(data)),
            fmt::format("Fletcher-32 checksum mismatch (stored {:#010x}, computed {:#010x})", sum, cpu(data)));
}

}  // namespace
}  // namespace h5tile::detail
