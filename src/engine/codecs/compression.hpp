#pragma once
// The filters of a compressed write (to_file, consolidate): from the caller's Compression to the
// filters of the dataset's creation list, with the client data HDF5 stores for them.

#include <cstddef>
#include <vector>

#include <h5tile/options.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {

// Throws InvalidArgument naming what is wrong with `compression`: a level its compressor does
// not take.
void check_compression(const Compression& compression);

// The filters, in the order HDF5 applies them when writing: shuffle, the compressor, fletcher32.
// Each is optional, as h5py makes them (HDF5 may skip it for a chunk), but fletcher32.
[[nodiscard]] std::vector<FilterSpec> write_filters(const Compression& compression, std::size_t elem_size);

}  // namespace h5tile::detail
