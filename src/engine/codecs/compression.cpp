#include "engine/codecs/compression.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"
#include "engine/codecs/codec_table.hpp"

namespace h5tile::detail {

unsigned filter_of(Compressor compressor) {
  const CodecRow* row = codec_row(compressor);
  return row == nullptr ? kFilterDeflate : row->id;
}

void check_compression(const Compression& compression) {
  const int level = compression.level;
  const CodecRow* row = codec_row(compression.compressor);
  if (row == nullptr) {
    if (level != -1) {
      throw InvalidArgument(fmt::format("a compression level ({}) needs a compressor", level));
    }
    return;
  }
  const auto name = row->compressor_name;
  if (!row->levels && level != -1) {
    throw InvalidArgument(fmt::format("{} has no level (got {})", name, level));
  }
  if (row->levels && level != -1 && (level < row->levels->lowest || level > row->levels->highest)) {
    throw InvalidArgument(fmt::format("{} level must be {} to {} (or -1 for {}), not {}", name, row->levels->lowest,
                                      row->levels->highest, row->levels->fallback, level));
  }
  if (row->make == nullptr) {
    throw InvalidArgument(
        fmt::format("h5tile was built without {} (its library was not found when h5tile was "
                    "built: install it, e.g. Debian's lib{}-dev, and rebuild)",
                    name, row->library));
  }
}

std::vector<FilterSpec> write_filters(const Compression& compression, std::size_t elem_size, std::size_t chunk_bytes) {
  check_compression(compression);
  const CodecRow* row = codec_row(compression.compressor);
  std::vector<FilterSpec> filters;
  if (compression.shuffle && (row == nullptr || !row->shuffles_itself)) {
    filters.push_back({kFilterShuffle, {static_cast<unsigned>(elem_size)}, true});
  }
  if (row != nullptr) {
    filters.push_back({row->id, row->client_data(compression, elem_size, chunk_bytes), true});
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
  const auto* row = detail::codec_row(compressor);
  return row == nullptr ? "none" : row->compressor_name;
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
  for (const auto& row : detail::codec_table()) {
    if (row.compressor != Compressor::None && row.make != nullptr) built.push_back(row.compressor);
  }
  return built;
}

std::vector<CompressorInfo> known_compressors() {
  std::vector<CompressorInfo> known;
  for (const auto& row : detail::codec_table()) {
    if (row.compressor == Compressor::None) continue;
    CompressorInfo info{.compressor = row.compressor,
                        .name = row.compressor_name,
                        .built = row.make != nullptr,
                        .has_level = row.levels.has_value()};
    if (row.levels) {
      info.lowest_level = row.levels->lowest;
      info.highest_level = row.levels->highest;
      info.default_level = row.levels->fallback;
    }
    known.push_back(info);
  }
  return known;
}

Compressor compressor_from_name(std::string_view name) {
  std::string names;
  for (const auto& row : detail::codec_table()) {
    if (row.compressor == Compressor::None) continue;
    if (row.compressor_name == name) return row.compressor;
    names += fmt::format("'{}', ", row.compressor_name);
  }
  if (name == "none") return Compressor::None;
  names.resize(names.size() - 2);  // the last ", "
  throw InvalidArgument(fmt::format("compression must be {} or 'none', not '{}'", names, name));
}

}  // namespace h5tile
