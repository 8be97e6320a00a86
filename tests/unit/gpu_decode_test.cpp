// The GPU decoder's plan, without a GPU: which filter pipelines it takes under auto and on (and
// why not the others), how a stored chunk splits into the pieces nvCOMP decodes, and the Adler-32
// that a zlib stream ends with and the Fletcher-32 a stored chunk ends with (gpu/decode.hpp).
#include <array>
#include <cstring>
#include <numeric>
#include <tuple>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"
#include "engine/codecs/codec.hpp"
#include "engine/codecs/pipeline.hpp"
#include "engine/codecs/zlib_stream.hpp"
#include "gpu/decode.hpp"
#include "unit/adler32_reference.hpp"

namespace h5tile::detail::gpu {
namespace {

using Plan = std::variant<GpuFilters, std::string>;

std::string why(const Plan& plan) {
  const auto* s = std::get_if<std::string>(&plan);
  return s != nullptr ? *s : "";
}

TEST(GpuFilters, TakesEachCodecWithOrWithoutShuffleBeforeIt) {
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterDeflate, {6}}}, 4, true, DecodeMode::On)),
            (GpuFilters{GpuCodec::Deflate, 0}));
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterShuffle, {4}}, {kFilterDeflate, {6}}}, 4, true, DecodeMode::On)),
            (GpuFilters{GpuCodec::Deflate, 4}));
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterShuffle, {}}, {kFilterZstd, {3}}}, 8, true, DecodeMode::On)),
            (GpuFilters{GpuCodec::Zstd, 8}));
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterLz4, {}}}, 2, true, DecodeMode::On)),
            (GpuFilters{GpuCodec::Lz4, 0}));
  // 1-byte elements: HDF5 leaves them as they are, so there is nothing to unshuffle.
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterShuffle, {1}}, {kFilterLz4, {}}}, 1, false, DecodeMode::On)),
            (GpuFilters{GpuCodec::Lz4, 0}));
}

TEST(GpuFilters, SaysWhyItLeavesAPipelineToTheCpu) {
  EXPECT_EQ(why(gpu_filters({{kFilterFletcher32, {}}, {kFilterDeflate, {6}}}, 4, true, DecodeMode::On)),
            "fletcher32 before a compression filter is checked on the CPU");
  EXPECT_EQ(why(gpu_filters({{kFilterFletcher32, {}}}, 4, true, DecodeMode::On)),
            "fletcher32 with no compression filter is checked on the CPU");
  EXPECT_EQ(why(gpu_filters({{kFilterShuffle, {4}}, {kFilterFletcher32, {}}}, 4, true, DecodeMode::On)),
            "fletcher32 with no compression filter is checked on the CPU");
  EXPECT_EQ(
      why(gpu_filters({{kFilterZstd, {}}, {kFilterFletcher32, {}}, {kFilterShuffle, {4}}}, 4, true, DecodeMode::On)),
      "shuffle after fletcher32 is not decoded on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterZstd, {}}, {kFilterFletcher32, {1}}}, 4, true, DecodeMode::On)),
            "fletcher32 with client data of 1 values is not checked on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterZstd, {}}, {kFilterFletcher32, {}}}, 4, false, DecodeMode::On)),
            "fletcher32 (h5tile was built without its GPU kernels, which check it)");
  EXPECT_EQ(why(gpu_filters({{kFilterBlosc, {2, 2, 4, 0, 5, 1, 1}}}, 4, true, DecodeMode::On)),
            "blosc is not decoded on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterSzip, {}}}, 4, true, DecodeMode::On)), "szip is not decoded on the GPU");
  EXPECT_EQ(why(gpu_filters({{307, {}}}, 4, true, DecodeMode::On)), "bzip2 is not decoded on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterShuffle, {4}}}, 4, true, DecodeMode::On)),
            "no compression filter (shuffle alone is undone on the CPU)");
  EXPECT_EQ(why(gpu_filters({{kFilterDeflate, {6}}, {kFilterShuffle, {4}}}, 4, true, DecodeMode::On)),
            "shuffle after another filter is not undone on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterDeflate, {6}}, {kFilterZstd, {}}}, 4, true, DecodeMode::On)),
            "two compression filters are not decoded on the GPU");
  EXPECT_EQ(why(gpu_filters({{kFilterShuffle, {4}}, {kFilterZstd, {}}}, 4, false, DecodeMode::On)),
            "shuffle (h5tile was built without its GPU kernels)");
  EXPECT_NE(why(gpu_filters({{kFilterDeflate, {6, 1}}}, 4, true, DecodeMode::On)), "");
}

TEST(GpuFilters, TakesFletcher32AfterEachCodecAsH5pyAndH5tileWriteIt) {
  for (const auto codec : {kFilterDeflate, kFilterZstd, kFilterLz4}) {
    const std::vector<unsigned> params = codec == kFilterDeflate ? std::vector<unsigned>{4} : std::vector<unsigned>{};
    const GpuCodec expected = codec == kFilterDeflate ? GpuCodec::Deflate
                              : codec == kFilterZstd  ? GpuCodec::Zstd
                                                      : GpuCodec::Lz4;
    for (const auto mode : {DecodeMode::Auto, DecodeMode::On}) {
      EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{codec, params}, {kFilterFletcher32, {}}}, 4, true, mode)),
                (GpuFilters{expected, 0, true}));
      EXPECT_EQ(std::get<GpuFilters>(
                    gpu_filters({{kFilterShuffle, {4}}, {codec, params}, {kFilterFletcher32, {}}}, 4, true, mode)),
                (GpuFilters{expected, 4, true}));
    }
  }
}

TEST(GpuFilters, AutoAndOnTakeEveryCodecAutoThenMeasures) {
  // Which decoder runs under auto is measured (gpu/decoder_choice.hpp); the plan is the same.
  for (const bool shuffle : {false, true}) {
    std::vector<FilterSpec> deflate{{kFilterDeflate, {6}}};
    std::vector<FilterSpec> zstd{{kFilterZstd, {3}}};
    std::vector<FilterSpec> lz4{{kFilterLz4, {}}};
    if (shuffle) {
      for (auto* f : {&deflate, &zstd, &lz4}) f->insert(f->begin(), {kFilterShuffle, {4}});
    }
    const std::size_t shuffle_bytes = shuffle ? 4 : 0;
    for (const auto mode : {DecodeMode::Auto, DecodeMode::On}) {
      EXPECT_EQ(std::get<GpuFilters>(gpu_filters(deflate, 4, true, mode)),
                (GpuFilters{GpuCodec::Deflate, shuffle_bytes}));
      EXPECT_EQ(std::get<GpuFilters>(gpu_filters(zstd, 4, true, mode)), (GpuFilters{GpuCodec::Zstd, shuffle_bytes}));
      EXPECT_EQ(std::get<GpuFilters>(gpu_filters(lz4, 4, true, mode)), (GpuFilters{GpuCodec::Lz4, shuffle_bytes}));
    }
  }
}

TEST(GpuFilters, WithoutTheKernelsDeflateIsNotDecodedOnTheGpuAsItsAdler32CouldNotBeChecked) {
  for (const auto mode : {DecodeMode::Auto, DecodeMode::On}) {
    EXPECT_EQ(why(gpu_filters({{kFilterDeflate, {6}}}, 4, false, mode)),
              "deflate is not decoded on the GPU: h5tile was built without its GPU kernels "
              "(H5TILE_WITH_CUDA_KERNELS=OFF), which check deflate's Adler-32");
    EXPECT_EQ(why(gpu_filters({{kFilterShuffle, {4}}, {kFilterDeflate, {6}}}, 4, false, mode)),
              "shuffle (h5tile was built without its GPU kernels)");
  }
  // Codecs that need no kernel still go to the GPU under on.
  EXPECT_EQ(std::get<GpuFilters>(gpu_filters({{kFilterZstd, {}}}, 4, false, DecodeMode::On)),
            (GpuFilters{GpuCodec::Zstd, 0}));
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

// Each header that zlib's inflate refuses is refused before nvCOMP sees the stream.
TEST(SplitStoredChunk, RefusesTheZlibHeadersThatZlibRefuses) {
  const auto data = pattern(1000, 3);
  std::vector<std::byte> stored(deflate_bound(data.size()));
  stored.resize(deflate_stream(data.data(), data.size(), stored.data(), 6));
  std::vector<StoredPiece> pieces;
  // CMF, FLG: with the check bits made right (CMF * 256 + FLG a multiple of 31).
  const auto with_header = [&](unsigned cmf, unsigned flg) {
    auto s = stored;
    s[0] = static_cast<std::byte>(cmf);
    s[1] = static_cast<std::byte>((flg & 0xe0U) | (31 - (cmf * 256 + (flg & 0xe0U)) % 31) % 31);
    return s;
  };
  for (const auto& [cmf, flg, ok] : {std::tuple{0x78U, 0x9cU, true}, std::tuple{0x78U, 0x01U, true},
                                     std::tuple{0x08U, 0x00U, true},      // the smallest window
                                     std::tuple{0x88U, 0x00U, false},     // a window of 64 KiB
                                     std::tuple{0x79U, 0x00U, false},     // method 9
                                     std::tuple{0x7fU, 0x00U, false},     // method 15
                                     std::tuple{0x78U, 0x20U, false}}) {  // a preset dictionary
    const auto s = with_header(cmf, flg);
    if (ok) {
      EXPECT_NO_THROW(split_stored_chunk(GpuCodec::Deflate, s.data(), s.size(), data.size(), pieces)) << cmf;
    } else {
      EXPECT_THROW(split_stored_chunk(GpuCodec::Deflate, s.data(), s.size(), data.size(), pieces), RuntimeError)
          << cmf << " " << flg;
    }
  }
  auto bad_check = stored;  // the check bits wrong
  bad_check[1] = static_cast<std::byte>(std::to_integer<unsigned>(bad_check[1]) ^ 1U);
  EXPECT_THROW(split_stored_chunk(GpuCodec::Deflate, bad_check.data(), bad_check.size(), data.size(), pieces),
               RuntimeError);
  EXPECT_THROW(split_stored_chunk(GpuCodec::Deflate, stored.data(), 6, data.size(), pieces), RuntimeError);
}

TEST(ZlibTrailer, IsTheAdler32OfTheDecodedBytes) {
  for (const std::size_t n : {0UL, 1UL, 5552UL, 5553UL, 100000UL}) {
    const auto data = pattern(n, 4);
    for (const int level : {0, 1, 9}) {
      std::vector<std::byte> stored(deflate_bound(data.size()));
      stored.resize(deflate_stream(data.data(), data.size(), stored.data(), level));
      EXPECT_EQ(zlib_trailer(stored.data(), stored.size()), reference_adler32(data.data(), data.size()))
          << n << " bytes at level " << level;
    }
  }
  const std::array<std::byte, 4> be{std::byte{0x12}, std::byte{0x34}, std::byte{0x56}, std::byte{0x78}};
  EXPECT_EQ(zlib_trailer(be.data(), be.size()), 0x12345678U);
}

TEST(ZlibTrailer, AMismatchIsACorruptStreamNamingBothChecksums) {
  EXPECT_EQ(adler32_mismatch(0x0a0b0c0dU, 0x0a0b0c0dU, 100), "");
  EXPECT_EQ(adler32_mismatch(0x0a0b0c0dU, 0x00000001U, 100),
            "deflate stream of 100 bytes is corrupt: it ends with Adler-32 0x0a0b0c0d, the bytes decoded on the GPU "
            "have 0x00000001");
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

TEST(Fletcher32Trailer, IsTheLittleEndianChecksumAfterTheStoredBytes) {
  const auto data = pattern(1001, 3);
  const std::uint32_t sum = fletcher32(data.data(), data.size());
  std::vector<std::byte> stored(data);
  for (std::size_t i = 0; i < 4; ++i) stored.push_back(static_cast<std::byte>(sum >> (8 * i)));
  EXPECT_EQ(fletcher32_trailer(stored.data(), stored.size()), sum);
  EXPECT_EQ(codec_bytes(GpuFilters{GpuCodec::Zstd, 0, true}, stored.size()), data.size());
  EXPECT_EQ(codec_bytes(GpuFilters{GpuCodec::Zstd, 0, false}, stored.size()), stored.size());
  try {
    (void)codec_bytes(GpuFilters{GpuCodec::Zstd, 0, true}, 3);
    ADD_FAILURE() << "3 bytes held a Fletcher-32 checksum";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "fletcher32: 3 bytes are too few to hold a Fletcher-32 checksum");
  }
}

}  // namespace
}  // namespace h5tile::detail::gpu
