#pragma once
// Checks that run before any byte of a write is written, and the default split into tiles.

#include <filesystem>
#include <string>
#include <vector>

#include <h5tile/io.hpp>

namespace h5tile::detail {

// The array is usable: a dtype, a pointer when it has elements, strides of its rank.
void check_array(const ArrayView& array, const std::filesystem::path& path, const std::string& dataset);
// The tile is a usable array whose shape is its box's extent, and the box fits `shape`.
void check_tile(const Tile& tile, const Shape& shape, const std::filesystem::path& path, const std::string& dataset);
// The boxes cover `shape` exactly once (no overlap, no gap).
void check_coverage(const std::vector<Box>& boxes, const Shape& shape, const std::filesystem::path& path,
                    const std::string& dataset);
// The target can be written in `mode`: not a directory, parent creatable and writable,
// absent for Exclusive, an HDF5 file (or absent) for Append.
void check_target(const std::filesystem::path& path, Mode mode);
// Splits `shape` along its first axis into at most `ranks` non-empty boxes (one box for a
// 0-d or empty shape).
[[nodiscard]] std::vector<Box> split_for_ranks(const Shape& shape, unsigned ranks);

}  // namespace h5tile::detail
