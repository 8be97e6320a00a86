#pragma once
// Where a read of an open dataset goes, chosen and checked once the dataset is known: shared by
// the reads that open the dataset each call (read.cpp) and those of a DatasetReader, which keeps
// it open (dataset_reader.cpp).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <h5tile/array.hpp>

#include "layout/open_dataset.hpp"

namespace h5tile::detail {

// `region` of the dataset into `out` (host memory, or device `device`).
struct ReadTarget {
  Box region;
  std::byte* out = nullptr;
  int device = -1;
  std::uint64_t bytes = 0;  // for progress
};

// The whole of `box` as a new array in `out` (kept across a second try with another shape).
// Throws InvalidArgument where `box` does not fit, UnsupportedType for variable-length strings.
[[nodiscard]] ReadTarget new_array_target(const OpenDataset& opened, const Box& box, int device,
                                          std::optional<Array>& out);
// The caller's memory `out` at `offset` (empty: the whole dataset), as read_into takes it.
// Throws InvalidArgument naming what does not match.
[[nodiscard]] ReadTarget caller_memory_target(const OpenDataset& opened, const ArrayView& out, const Shape& offset);

// Chooses (and checks, throwing) the target once the dataset is known.
using TargetFor = std::function<ReadTarget(const OpenDataset&)>;

// Opens `dataset` and reads it into the target that `target_for` chooses: a virtual dataset
// with a tile index from the index while HDF5 opens it, and again in the few cases where the
// mapping and the index disagree (layout/virtual/early_open.hpp); `target_for` sees each open.
void open_and_read(const Location& location, const std::string& dataset, const ReadOptions& options,
                   const TargetFor& target_for);

}  // namespace h5tile::detail
