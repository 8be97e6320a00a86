#pragma once
// Early reads: a read of a virtual dataset that h5tile wrote starts from its tile index
// (tile_index.hpp) while HDF5 opens the dataset and decodes its mapping (tens of milliseconds
// for thousands of tiles, on one thread); it stands only if the mapping agrees with the index.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>

#include <h5tile/array.hpp>

#include "engine/progress.hpp"
#include "layout/open_dataset.hpp"

namespace h5tile::detail {

// A tile named by the index does not match what is on disk (missing, a symbolic link, another
// size), or the index does not cover what is read: the read started from the index is void.
class IndexMismatch : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How early reads ended, for tests and benchmarks: kept (the mapping agreed with the index),
// redone (read again from the mapping).
struct EarlyReadCounts {
  std::atomic<std::uint64_t> kept{0};
  std::atomic<std::uint64_t> redone{0};
};
[[nodiscard]] EarlyReadCounts& early_read_counts();

// Reads `region` of `early` (a dataset known from its tile index) into `out` on other threads,
// while this one has HDF5 open the dataset and compare its mapping with the index
// (OpenDataset::mapping_agrees). Returns nullopt when the read stands, or else the dataset as
// `open` opens it, to read again from (errors of `open` are thrown once the early read stopped).
[[nodiscard]] std::optional<OpenDataset> read_while_opening(const OpenDataset& early, const Box& region, std::byte* out,
                                                            int device, unsigned threads, Progress& progress,
                                                            const std::function<OpenDataset()>& open);

}  // namespace h5tile::detail
