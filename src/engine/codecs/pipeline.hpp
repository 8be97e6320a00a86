#pragma once
// A chunked dataset's filter pipeline, run on h5tile's workers: applied in order when writing, and
// undone in reverse order when reading, each skipped where the chunk's filter mask says HDF5 skipped it.

#include <cstddef>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {

// Whether h5tile was built with the codec of HDF5 filter `id` (zstd, lz4 and blosc need their
// libraries when h5tile is built).
[[nodiscard]] bool codec_built(unsigned id) noexcept;

class FilterPipeline {
 public:
  // The pipeline for `filters` (in the order of the creation list) of a dataset of `elem_size`-byte
  // elements, or why h5tile cannot decode it (HDF5 then does): "szip", "filter 32015", ...
  [[nodiscard]] static std::variant<FilterPipeline, std::string> make(const std::vector<FilterSpec>& filters,
                                                                      std::size_t elem_size);

  // Decodes one stored chunk in `data` (whose decoded size is `chunk_bytes`), skipping filter i
  // where bit i of `filter_mask` is set. Throws h5tile::RuntimeError with the reason when the
  // bytes are corrupt or do not decode to exactly `chunk_bytes`. Thread-safe (const).
  void decode(ByteBuffer& data, ByteBuffer& scratch, unsigned filter_mask, std::size_t chunk_bytes) const;
  // As decode, but the chunk's `chunk_bytes` decoded bytes end in `out` (the last filter undone
  // writes there where it can: no copy); `data` and `scratch` are only working space. `out` may
  // be written in part when this throws.
  void decode_into(ByteBuffer& data, ByteBuffer& scratch, unsigned filter_mask, std::size_t chunk_bytes,
                   std::byte* out) const;
  // As decode, but only `runs` of the decoded chunk end where they go (the last filter undone
  // writes them there where it can: shuffle does; else they are copied out of `data`).
  void decode_into(ByteBuffer& data, ByteBuffer& scratch, unsigned filter_mask, std::size_t chunk_bytes,
                   const ChunkRuns& runs) const;

  // Encodes one whole chunk in `data` (padded at the dataset's edges) as HDF5 would write it,
  // applying every filter in the creation list's order. Thread-safe (const).
  void encode(ByteBuffer& data, ByteBuffer& scratch) const;
  // As encode, of the `size` bytes at `in` (a whole chunk in the caller's memory, left as it is):
  // the first filter reads them there where it can (no copy); the result is in `data`.
  void encode_from(const std::byte* in, std::size_t size, ByteBuffer& data, ByteBuffer& scratch) const;

  // The names of the filters, in the creation list's order ("shuffle", "deflate").
  [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }
  // The filters as the pipeline was made from them (for the GPU decoder's plan: gpu/decode.hpp).
  [[nodiscard]] const std::vector<FilterSpec>& filters() const noexcept { return filters_; }

 private:
  // encode (`in` null: `data` in place) and encode_from.
  void apply(const std::byte* in, std::size_t size, ByteBuffer& data, ByteBuffer& scratch) const;
  // Where decode_into puts the chunk: all of it at `whole`, or its `runs`; neither for decode.
  struct Destination {
    std::byte* whole = nullptr;
    const ChunkRuns* runs = nullptr;
  };
  void undo(ByteBuffer& data, ByteBuffer& scratch, unsigned filter_mask, std::size_t chunk_bytes,
            const Destination& to) const;

  std::vector<std::unique_ptr<Codec>> steps_;  // in the order HDF5 applied them when writing
  std::vector<std::string> names_;
  std::vector<FilterSpec> filters_;
};

}  // namespace h5tile::detail
