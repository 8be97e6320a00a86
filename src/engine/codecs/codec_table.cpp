#include "engine/codecs/codec_table.hpp"

#include <algorithm>
#include <array>

#include <h5tile/settings.hpp>

#include "core/filter_ids.hpp"

namespace h5tile::detail {
namespace {

#if H5TILE_WITH_ZSTD
constexpr auto kMakeZstd = make_zstd;
#else
constexpr decltype(&make_deflate) kMakeZstd = nullptr;
#endif
#if H5TILE_WITH_LZ4
constexpr auto kMakeLz4 = make_lz4;
constexpr auto kMakeBitshuffle = make_bitshuffle;
#else
constexpr decltype(&make_deflate) kMakeLz4 = nullptr;
constexpr decltype(&make_deflate) kMakeBitshuffle = nullptr;
#endif
#if H5TILE_WITH_BLOSC
constexpr auto kMakeBlosc = make_blosc;
#else
constexpr decltype(&make_deflate) kMakeBlosc = nullptr;
#endif
#if H5TILE_WITH_LZF
constexpr auto kMakeLzf = make_lzf;
#else
constexpr decltype(&make_deflate) kMakeLzf = nullptr;
#endif

// The level given, or the compressor's default for -1, as HDF5 stores it (a negative zstd level as
// its 32-bit two's complement, as hdf5plugin stores it).
unsigned level_or(const Compression& compression, int fallback) {
  return static_cast<unsigned>(compression.level == -1 ? fallback : compression.level);
}

// The defaults are h5py's (gzip) and hdf5plugin's (the others).
constexpr Levels kGzipLevels{0, 9, 4};
constexpr Levels kZstdLevels{-131072, 22, 3};  // hdf5plugin's Zstd accepts -131072 to 22
constexpr Levels kBloscLevels{0, 9, 5};
constexpr unsigned kBloscLz4 = 1;  // Blosc's code of its LZ4 compressor

using Make = std::unique_ptr<Codec> (*)(const FilterSpec&, std::size_t);
using ClientData = std::vector<unsigned> (*)(const Compression&, std::size_t, std::size_t);

// A row for a filter that no write makes a compressor of (shuffle, fletcher32, and those h5tile
// only reads).
CodecRow filter(unsigned id, Make make, std::string_view library = {}) {
  CodecRow row;
  row.id = id;
  row.make = make;
  row.library = library;
  return row;
}

// A row for a compressor: the filter's row, with what a write stores.
CodecRow compressor(CodecRow row, Compressor compressor, std::string_view name, std::optional<Levels> levels,
                    ClientData client_data, bool shuffles_itself = false) {
  row.compressor = compressor;
  row.compressor_name = name;
  row.levels = levels;
  row.client_data = client_data;
  row.shuffles_itself = shuffles_itself;
  return row;
}

std::vector<unsigned> gzip_data(const Compression& c, std::size_t, std::size_t) {
  return {level_or(c, kGzipLevels.fallback)};
}
std::vector<unsigned> zstd_data(const Compression& c, std::size_t, std::size_t) {
  return {level_or(c, kZstdLevels.fallback)};
}
// The block size is stored in each chunk too: hdf5plugin reads any.
std::vector<unsigned> lz4_data(const Compression&, std::size_t, std::size_t) {
  return {static_cast<unsigned>(settings::lz4_block_size())};
}
// What hdf5plugin's Blosc(cname="lz4", clevel, shuffle) stores once the filter's set_local has
// filled the first four: filter and format versions 2, element size (1 above 255, which Blosc does
// not take), chunk bytes.
std::vector<unsigned> blosc_data(const Compression& c, std::size_t elem_size, std::size_t chunk_bytes) {
  return {2,
          2,
          static_cast<unsigned>(elem_size > 255 ? 1 : elem_size),
          static_cast<unsigned>(chunk_bytes),
          level_or(c, kBloscLevels.fallback),
          c.shuffle ? 1U : 0U,
          kBloscLz4};
}

// What h5py's LZF filter stores once its set_local has run: its filter version (4), the LZF
// version (1.5), the chunk's bytes.
std::vector<unsigned> lzf_data(const Compression&, std::size_t, std::size_t chunk_bytes) {
  return {4, 0x0105, static_cast<unsigned>(chunk_bytes)};
}

const std::array kRows = {
    compressor(filter(kFilterDeflate, make_deflate), Compressor::Gzip, "gzip", kGzipLevels, gzip_data),
    filter(kFilterShuffle, make_shuffle),
    filter(kFilterFletcher32, make_fletcher32),
    compressor(filter(kFilterZstd, kMakeZstd, "zstd"), Compressor::Zstd, "zstd", kZstdLevels, zstd_data),
    compressor(filter(kFilterLz4, kMakeLz4, "lz4"), Compressor::Lz4, "lz4", std::nullopt, lz4_data),
    filter(kFilterBitshuffle, kMakeBitshuffle, "lz4"),
    compressor(filter(kFilterBlosc, kMakeBlosc, "blosc"), Compressor::Blosc, "blosc", kBloscLevels, blosc_data, true),
    compressor(filter(kFilterLzf, kMakeLzf, "lzf"), Compressor::Lzf, "lzf", std::nullopt, lzf_data),
};

}  // namespace

std::span<const CodecRow> codec_table() noexcept { return kRows; }

const CodecRow* codec_row(unsigned id) noexcept {
  const auto* row = std::find_if(kRows.begin(), kRows.end(), [&](const CodecRow& r) { return r.id == id; });
  return row == kRows.end() ? nullptr : row;
}

const CodecRow* codec_row(Compressor compressor) noexcept {
  if (compressor == Compressor::None) return nullptr;
  const auto* row =
      std::find_if(kRows.begin(), kRows.end(), [&](const CodecRow& r) { return r.compressor == compressor; });
  return row == kRows.end() ? nullptr : row;
}

}  // namespace h5tile::detail
