// The GPU decoder's plan, without a GPU: which filter pipelines it takes (and why not the
// others), and how a stored chunk splits into the pieces nvCOMP decodes (gpu/decode.hpp).
#include <cstring>
#include <numeric>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"
#include "engine/codecs/pipeline.hpp"
#include "engine/codecs/zlib_stream.hpp"
#include "gpu/decode.hpp"

namespace h5tile::detail::gpu {
namespace {

using Plan = std::variant<GpuFilters, std::string>;

std::string why(const Plan& plan) {
  const auto* s = std::get_if<std::string>(&plan);
  return s != nullptr ? *s : "";
}

TEST(GpuFilters, TakesEachCodecWithOrWithoutShuffleBeforeIt) {
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterDeflate, {6}}}, 4, true)), (GpuFilters{GpuCodec::Deflate, 0}));
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterShuffle, {4}}, {kFilterDeflate, {6}}}, 4, true)),
            (GpuFilters{GpuCodec::Deflate, 4}));
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterShuffle, {}}, {kFilterZstd, {3}}}, 8, true)),
            (GpuFilters{GpuCodec::Zstd, 8}));
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterLz4, {}}}, 2, true)), (GpuFilters{GpuCodec::Lz4, 0}));
  // 1-byte elements: HDF5 leaves them as they are, so there is nothing to unshuffle.
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterShuffle, {1}}, {kFilterLz4, {}}}, 1, false)),
            (GpuFilters{GpuCodec::Lz4, 0}));
}

TEST(GpuFilters, SaysWhyItLeavesAPipelineToTheCpu) {
  EXPECT_EQ(why(gpu_filters({{kFilterShuffle, {4}}, {kFilterDeflate, {6}}, {kFilterFletcher32, {}}}, 4, true)),
            "fletcher32 is not checked on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterBlosc, {2, 2, 4, 0, 5, 1, 1}}}, 4, true)), "blosc is not decoded on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterSzip, {}}}, 4, true)), "szip is not decoded on the GPU");
  EXPECT_EQ(why(gpu_filters({{307, {}}}, 4, true)), "filter 307 is not decoded on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterShuffle, {4}}}, 4, true)),
            "no compression filter (shuffle alone is undone on the CPU)");
  EXPECT_EQ(why(gpu_filters({{kFilterDeflate, {6}}, {kFilterShuffle, {4}}}, 4, true)),
            "shuffle after another filter is not undone on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterDeflate, {6}}, {kFilterZstd, {}}}, 4, true)),
            "two compression filters are not decoded on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterShuffle, {4}}, {kFilterZstd, {}}}, 4, false)),
            "shuffle (h5tile was built without its GPU kernels)");
  EXPECT_NE(why(gpu_filters({{kFilterDeflate, {6, 1}}}, 4, true)), "");
}

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> out(n);
  unsigned x = seed;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1103515245U + 12345U;
    out[i] = static_cast<std::byte>(i < n / 2 ? (i / 64) % 7 : (x >> 16));  // half compressible, half not
  }
  return out;
}

TEST(SplitStoredChunk, DeflateIsTheRawStreamBetweenTheZlibHeaderAndItsChecksum) {
  const auto data = pattern(10000, 1);
  std::vector<std::byte> stored(deflate_bound(data.size()));
  stored.resize(deflate_stream(data.data(), data.size(), stored.data(), 6));
  std::vector<StoredPiece> pieces;
  split_stored_chunk(GpuCodec::Deflate, stored.data(), stored.size(), data.size(), pieces);
  ASSERT_EQ(pieces.size(), 1U);
  EXPECT_EQ(pieces[0], (StoredPiece{2, stored.size() - 6, 0, data.size(), false}));
  auto with_dictionary = stored;
  with_dictionary[1] |= std::byte{0x20};  // FDICT, with the header check bits made right again
  const auto cmf_flg =
      (std::to_integer<unsigned>(with_dictionary[0]) << 8) | (std::to_integer<unsigned>(with_dictionary[1]) & 0xe0U);
  with_dictionary[1] = static_cast<std::byte>((cmf_flg & 0xffU) | (31 - cmf_flg % 31) % 31);
  EXPECT_THROW(
      split_stored_chunk(GpuCodec::Deflate, with_dictionary.data(), with_dictionary.size(), data.size(), pieces),
      RuntimeError);
  auto corrupt = stored;
  corrupt[0] = std::byte{0x79};
  EXPECT_THROW(split_stored_chunk(GpuCodec::Deflate, corrupt.data(), corrupt.size(), data.size(), pieces),
               RuntimeError);
}

TEST(SplitStoredChunk, Lz4IsOnePiecePerBlockRawWhereStoredAsItIs) {
  if (!codec_built(kFilterLz4)) GTEST_SKIP() << "h5tile was built without lz4";
  const auto data = pattern(10000, 2);
  auto made = FilterPipeline::make({{kFilterLz4, {1024}}}, 1);
  const auto& pipeline = std::get<FilterPipeline>(made);
  ByteBuffer buffer;
  ByteBuffer scratch;
  buffer.resize(data.size());
  std::memcpy(buffer.data(), data.data(), data.size());
  pipeline.encode(buffer, scratch);
  std::vector<StoredPiece> pieces;
  split_stored_chunk(GpuCodec::Lz4, buffer.data(), buffer.size(), data.size(), pieces);
  ASSERT_EQ(pieces.size(), 10U);  // ceil(10000 / 1024)
  std::uint64_t in = 12;
  bool some_raw = false;
  bool some_compressed = false;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const auto& p = pieces[i];
    EXPECT_EQ(p.offset, in + 4);
    EXPECT_EQ(p.out_offset, i * 1024);
    EXPECT_EQ(p.decoded, std::min<std::uint64_t>(1024, data.size() - i * 1024));
    if (p.raw) {
      EXPECT_EQ(std::memcmp(buffer.data() + p.offset, data.data() + p.out_offset, p.decoded), 0);
    }
    some_raw = some_raw || p.raw;
    some_compressed = some_compressed || !p.raw;
    in = p.offset + p.size;
  }
  EXPECT_EQ(in, buffer.size());
  EXPECT_TRUE(some_raw && some_compressed);
  // A chunk that does not hold the chunk's size, or is cut short, is refused.
  EXPECT_THROW(split_stored_chunk(GpuCodec::Lz4, buffer.data(), buffer.size(), data.size() + 1, pieces), RuntimeError);
  EXPECT_THROW(split_stored_chunk(GpuCodec::Lz4, buffer.data(), buffer.size() - 1, data.size(), pieces), RuntimeError);
}

TEST(SplitStoredChunk, ZstdIsTheWholeFrame) {
  const std::vector<std::byte> frame(100, std::byte{1});
  std::vector<StoredPiece> pieces;
  split_stored_chunk(GpuCodec::Zstd, frame.data(), frame.size(), 4096, pieces);
  ASSERT_EQ(pieces.size(), 1U);
  EXPECT_EQ(pieces[0], (StoredPiece{0, 100, 0, 4096, false}));
}

}  // namespace
}  // namespace h5tile::detail::gpu
