#pragma once
// Arithmetic of boxes (h5tile::Box): overlaps, differences, and the chunks a box touches, for
// the reads that plan by mappings (open_dataset.hpp) and the writers that split tiles into chunks.

#include <cstddef>
#include <optional>
#include <vector>

#include <h5tile/array.hpp>

namespace h5tile::detail {

// The overlap of two boxes of the same rank, or nullopt.
[[nodiscard]] std::optional<Box> intersect(const Box& a, const Box& b);

// What of `a` lies outside `b` (boxes of the same rank), as at most two boxes per axis.
[[nodiscard]] std::vector<Box> subtract(const Box& a, const Box& b);

// For each of `boxes`, the later boxes (higher indices, in order) that share an element with it.
[[nodiscard]] std::vector<std::vector<std::size_t>> later_overlaps(const std::vector<Box>& boxes);

// Whether two extents hold the same elements in the same row-major order, only with axes of length
// 1 added or dropped ([100] and [1, 100]; not [100] and [10, 10]): a virtual mapping between them
// is one HDF5 reads element by element in order, which h5tile's box-to-box reads do not model.
[[nodiscard]] bool same_but_unit_axes(const Shape& a, const Shape& b);

// The chunks of `chunk` shape that `box` touches, as boxes in dataset coordinates, in row-major
// order (a chunk at the dataset's edge reaches past it); none for an empty box.
[[nodiscard]] std::vector<Box> chunks_touching(const Box& box, const Shape& chunk);

}  // namespace h5tile::detail
