#pragma once
// Tile checksums: XXH64 of a region of a file, read back right after it was written (while
// its bytes are still in the page cache), and again when a file is verified.

#include <cstdint>

#include "engine/posix_file.hpp"

namespace h5tile::detail {

[[nodiscard]] std::uint64_t checksum_region(const PosixFile& file, std::uint64_t offset, std::uint64_t bytes);

}  // namespace h5tile::detail
