#include "engine/codecs/compression.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

#include "core/filter_ids.hpp"
#include "engine/codecs/pipeline.hpp"

namespace h5tile::detail {
namespace {

// The defaults of h5py (gzip) and hdf5plugin (the others).
constexpr int kGzipDefault = 4;
constexpr int kZstdDefault = 3;
constexpr int kBloscDefault = 5;
constexpr int kZstdMin = -131072;  // hdf5plugin's Zstd accepts -131072 to 22
constexpr int kZstdMax = 22;
constexpr unsigned kBloscLz4 = 1;  // Blosc's code of its LZ4 compressor

}  // namespace

unsigned filter_of(Compressor compressor) {
  switch (compressor) {
    case Compressor::Zstd: return kFilterZstd;
    case Compressor::Lz4: return kFilterLz4;
    case Compressor::Blosc: return kFilterBlosc;
    default: return kFilterDeflate;
  }
}

void check_compression(const Compression& compression) {
  const int level = compression.level;
  const auto name = compressor_name(compression.compressor);
  const auto check_range = [&](int lo, int hi, int fallback) {
    if (level != -1 && (level < lo || level > hi)) {
      throw InvalidArgument(
          fmt::format("{} level must be {} to {} (or -1 for {}), not {}", name, lo, hi, fallback, level));
    }
  };
  switch (compression.compressor) {
    case Compressor::None:
      if (level != -1) {
        throw InvalidArgument(fmt::format("a compression level ({}) needs a compressor", level));
      }
      return;
    case Compressor::Gzip: check_range(0, 9, kGzipDefault); break;
    case Compressor::Zstd: check_range(kZstdMin, kZstdMax, kZstdDefault); break;
    case Compressor::Blosc: check_range(0, 9, kBloscDefault); break;
    case Compressor::Lz4:
      if (level != -1) {
        throw InvalidArgument(fmt::format("lz4 has no level (got {})", level));
      }
      break;
  }
  if (!codec_built(filter_of(compression.compressor))) {
    throw InvalidArgument(
        fmt::format("h5tile was built without {} (its library was not found when h5tile was "
                    "built: install it, e.g. Debian's lib{}-dev, and rebuild)",
                    name, name));
  }
}

std::vector<FilterSpec> write_filters(const Compression& compression, std::size_t elem_size, std::size_t chunk_bytes) {
  check_compression(compression);
  const auto level = [&](int fallback) {
    return static_cast<unsigned>(compression.level < 0 ? fallback : compression.level);
  };
  const bool blosc = compression.compressor == Compressor::Blosc;
  std::vector<FilterSpec> filters;
  if (compression.shuffle && !blosc) {
    filters.push_back({kFilterShuffle, {static_cast<unsigned>(elem_size)}, true});
  }
  switch (compression.compressor) {
    case Compressor::None: break;
    case Compressor::Gzip: filters.push_back({kFilterDeflate, {level(kGzipDefault)}, true}); break;
    case Compressor::Zstd:
      // A negative level is stored as its 32-bit two's complement, as hdf5plugin stores it.
      filters.push_back(
          {kFilterZstd, {static_cast<unsigned>(compression.level == -1 ? kZstdDefault : compression.level)}, true});
      break;
    case Compressor::Lz4:
      // The block size is stored in each chunk too: hdf5plugin reads any (bench/probes/lz4_blocks.py).
      filters.push_back({kFilterLz4, {static_cast<unsigned>(settings::lz4_block_size())}, true});
      break;
    case Compressor::Blosc: {
      // What hdf5plugin's Blosc(cname="lz4", clevel, shuffle) stores once the filter's set_local
      // has filled the first four: filter and format versions 2, element size (1 above 255,
      // which Blosc does not take), chunk bytes.
      const auto type_size = static_cast<unsigned>(elem_size > 255 ? 1 : elem_size);
      filters.push_back({kFilterBlosc,
                         {2, 2, type_size, static_cast<unsigned>(chunk_bytes), level(kBloscDefault),
                          compression.shuffle ? 1U : 0U, kBloscLz4},
                         true});
      break;
    }
  }
  if (compression.fletcher32) {
    filters.push_back({kFilterFletcher32, {}, false});
  }
  return filters;
}

std::vector<FilterSpec> with_chunk_bytes(std::vector<FilterSpec> filters, std::size_t chunk_bytes) {
  for (auto& f : filters) {
    if (f.id == kFilterBlosc && f.params.size() > 3) f.params[3] = static_cast<unsigned>(chunk_bytes);
  }
  return filters;
}

}  // namespace h5tile::detail

namespace h5tile {

std::string_view compressor_name(Compressor compressor) noexcept {
  switch (compressor) {
    case Compressor::None: return "none";
    case Compressor::Gzip: return "gzip";
    case Compressor::Zstd: return "zstd";
    case Compressor::Lz4: return "lz4";
    case Compressor::Blosc: return "blosc";
  }
  return "?";
}

std::string to_string(const Compression& compression) {
  std::string text;
  const auto add = [&](const std::string& part) { text += (text.empty() ? "" : " + ") + part; };
  if (compression.shuffle) add("shuffle");
  if (compression.compressor != Compressor::None) {
    std::string name(compressor_name(compression.compressor));
    add(compression.level == -1 ? name : fmt::format("{} {}", name, compression.level));
  }
  if (compression.fletcher32) add("fletcher32");
  return text.empty() ? "none" : text;
}

std::vector<Compressor> built_compressors() {
  std::vector<Compressor> built;
  for (const auto c : {Compressor::Gzip, Compressor::Zstd, Compressor::Lz4, Compressor::Blosc}) {
    if (detail::codec_built(detail::filter_of(c))) built.push_back(c);
  }
  return built;
}

Compressor compressor_from_name(std::string_view name) {
  for (const auto c : {Compressor::None, Compressor::Gzip, Compressor::Zstd, Compressor::Lz4, Compressor::Blosc}) {
    if (compressor_name(c) == name) {
      return c;
    }
  }
  throw InvalidArgument(fmt::format("compression must be 'gzip', 'zstd', 'lz4', 'blosc' or 'none', not '{}'", name));
}

}  // namespace h5tile
