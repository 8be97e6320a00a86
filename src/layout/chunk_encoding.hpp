#pragma once
// The chunks of a filtered write, made on the writing rank's workers: a chunk's part of the data
// copied into a whole chunk (zeros past the data at the dataset's edges, as HDF5 pads) and
// encoded with the dataset's filter pipeline.

#include <cstddef>

#include <h5tile/array.hpp>

#include "engine/codecs/pipeline.hpp"
#include "engine/raw_transfer.hpp"

namespace h5tile::detail {

// Copies the part of `chunk_box` (a whole chunk, in dataset coordinates) that lies in `src_box`
// from `src` (the memory of `src_box`) into `out`, row-major of chunk_box.extent; the rest of
// `out` is zero.
void pack_chunk(const StridedBytes& src, const Box& src_box, const Box& chunk_box, std::size_t elem_size,
                std::byte* out);

// pack_chunk into `out`, then the filters of `pipeline` applied to it in place.
void encode_chunk(const FilterPipeline& pipeline, const StridedBytes& src, const Box& src_box, const Box& chunk_box,
                  std::size_t elem_size, ByteBuffer& out, ByteBuffer& scratch);

// The pipeline that writes `filters` (which h5tile encodes: a write's own) for `elem_size`-byte
// elements.
[[nodiscard]] FilterPipeline write_pipeline(const std::vector<FilterSpec>& filters, std::size_t elem_size);

}  // namespace h5tile::detail
