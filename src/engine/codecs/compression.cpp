#include "engine/codecs/compression.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

constexpr unsigned kShuffle = 2;
constexpr unsigned kFletcher32 = 3;
constexpr unsigned kDeflate = 1;
constexpr int kGzipDefault = 4;  // h5py's

}  // namespace

void check_compression(const Compression& compression) {
  const int level = compression.level;
  switch (compression.compressor) {
    case Compressor::None:
      if (level != -1) {
        throw InvalidArgument(fmt::format("a compression level ({}) needs a compressor", level));
      }
      break;
    case Compressor::Gzip:
      if (level < -1 || level > 9) {
        throw InvalidArgument(fmt::format("gzip level must be 0 to 9 (or -1 for 4), not {}", level));
      }
      break;
  }
}

std::vector<FilterSpec> write_filters(const Compression& compression, std::size_t elem_size) {
  check_compression(compression);
  std::vector<FilterSpec> filters;
  if (compression.shuffle) {
    filters.push_back({kShuffle, {static_cast<unsigned>(elem_size)}, true});
  }
  switch (compression.compressor) {
    case Compressor::None: break;
    case Compressor::Gzip:
      filters.push_back(
          {kDeflate, {static_cast<unsigned>(compression.level < 0 ? kGzipDefault : compression.level)}, true});
      break;
  }
  if (compression.fletcher32) {
    filters.push_back({kFletcher32, {}, false});
  }
  return filters;
}

}  // namespace h5tile::detail

namespace h5tile {

std::string_view compressor_name(Compressor compressor) noexcept {
  switch (compressor) {
    case Compressor::None: return "none";
    case Compressor::Gzip: return "gzip";
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

Compressor compressor_from_name(std::string_view name) {
  for (const auto c : {Compressor::None, Compressor::Gzip}) {
    if (compressor_name(c) == name) {
      return c;
    }
  }
  throw InvalidArgument(fmt::format("compression must be 'gzip' or 'none', not '{}'", name));
}

}  // namespace h5tile
