#pragma once
// Tile checksums: XXH64 of a region of a file, read back right after it was written (while
// its bytes are still in the page cache), and again when a file is verified.

#include <cstdint>
#include <optional>

#include "engine/posix_file.hpp"

namespace h5tile::detail {

[[nodiscard]] std::uint64_t checksum_region(const PosixFile& file, std::uint64_t offset, std::uint64_t bytes);

// A tile file's identity: XXH64 of every byte of the file outside its data, [offset, offset +
// data_bytes), together with those numbers and the file's size. A file with the identity that
// was recorded when the tile was written holds the same HDF5 metadata (superblock, object
// headers), so HDF5 finds in it the same dataset, of the same type and shape, with its bytes at
// `offset`: reading them with pread reads what HDF5 would. A file of the same size with other
// contents (another dtype, zeros, another tile) has another identity. nullopt where the data
// does not lie inside the file, or where what lies outside it exceeds 64 MiB (h5tile's tiles
// hold a few KiB of metadata).
[[nodiscard]] std::optional<std::uint64_t> tile_identity(const PosixFile& file, std::uint64_t offset,
                                                         std::uint64_t data_bytes, std::uint64_t file_size);

}  // namespace h5tile::detail
