#pragma once
// The filters of a compressed write (to_file, consolidate): from the caller's Compression to the
// filters of the dataset's creation list, with the client data HDF5 stores for them.

#include <cstddef>
#include <vector>

#include <h5tile/options.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {

// The HDF5 filter ID of `compressor` (deflate for None).
[[nodiscard]] unsigned filter_of(Compressor compressor);

// Throws InvalidArgument naming what is wrong with `compression`: a level its compressor does
// not take, a compressor h5tile was built without.
void check_compression(const Compression& compression);

// The filters, in the order HDF5 applies them when writing: shuffle (blosc shuffles itself), the
// compressor, fletcher32, for chunks of `chunk_bytes` bytes of `elem_size`-byte elements. Each is
// optional, as h5py makes them (HDF5 may skip it for a chunk), but fletcher32.
[[nodiscard]] std::vector<FilterSpec> write_filters(const Compression& compression, std::size_t elem_size,
                                                    std::size_t chunk_bytes);

// `filters` with the chunk size Blosc's client data records set to `chunk_bytes` (a tile file's
// chunks, clipped to the tile).
[[nodiscard]] std::vector<FilterSpec> with_chunk_bytes(std::vector<FilterSpec> filters, std::size_t chunk_bytes);

}  // namespace h5tile::detail
