#pragma once
// Every filter h5tile applies or undoes on its own workers, one row each (codec_table.cpp): what
// reads make of a stored chunk (the pipeline), and what a compressed write stores (its compressor's
// name, levels and client data). A new codec: a file in this folder with its make_<name>, and one
// row; its HDF5 ID and name also go in core/filter_ids.hpp (HDF5's describe names filters there);
// an optional library, one item in CMakeLists.txt's list of codecs.

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <h5tile/options.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {

// A compressor's levels: the lowest, the highest, and the one a level of -1 means.
struct Levels {
  int lowest = 0;
  int highest = 0;
  int fallback = 0;
};

struct CodecRow {
  unsigned id = 0;  // the HDF5 filter ID
  // Its codec; null where h5tile was built without `library` (HDF5 then decodes the filter).
  std::unique_ptr<Codec> (*make)(const FilterSpec& spec, std::size_t elem_size) = nullptr;
  std::string_view library;  // the library it needs when h5tile is built; empty for none
  // Writing: the compressor that writes it (None: no write makes it a compressor) and the name a
  // caller gives it ("gzip"), its levels (nullopt: it takes none), and the client data stored.
  Compressor compressor = Compressor::None;
  std::string_view compressor_name;
  std::optional<Levels> levels;
  std::vector<unsigned> (*client_data)(const Compression& compression, std::size_t elem_size,
                                       std::size_t chunk_bytes) = nullptr;
  bool shuffles_itself = false;  // takes Compression::shuffle itself (Blosc), not HDF5's shuffle filter
};

// The rows: HDF5's own filters, then the others; the compressors in the order compressors() lists them.
[[nodiscard]] std::span<const CodecRow> codec_table() noexcept;
// The row of filter `id`; null for a filter h5tile does not know.
[[nodiscard]] const CodecRow* codec_row(unsigned id) noexcept;
// The row of `compressor`; null for Compressor::None.
[[nodiscard]] const CodecRow* codec_row(Compressor compressor) noexcept;

}  // namespace h5tile::detail
