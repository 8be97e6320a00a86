#pragma once
// Moving a tile's bytes from memory (host or device) into a raw dataset in a file: the step
// every layout's writer shares.

#include <h5tile/array.hpp>

#include "engine/progress.hpp"
#include "engine/raw_transfer.hpp"

namespace h5tile::detail {

// Writes the tile whose memory `data` holds into `box` of `file` (the whole of a tile file, the
// tile's box of a shared file, or its part of a chunk): from host memory in tasks of about
// `task_size` bytes on `threads` threads, or through pinned staging from a device.
void write_tile_bytes(const RawDataset& file, const Box& box, const ArrayView& data, Progress& progress,
                      unsigned threads, std::uint64_t task_size);

// The part `part` (dataset coordinates, inside `box`) of a tile whose memory `data` holds `box`.
[[nodiscard]] ArrayView sub_view(const ArrayView& data, const Box& box, const Box& part);

// A view's memory with its byte strides.
[[nodiscard]] StridedBytes memory_of(const ArrayView& view);

}  // namespace h5tile::detail
