#pragma once
// Early reads: a read of a virtual dataset that h5tile wrote starts from its tile index
// (tile_index.hpp) while HDF5 opens the dataset and decodes its mapping (tens of milliseconds
// for thousands of tiles, on one thread); it stands only if the mapping agrees with the index.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <h5tile/array.hpp>

#include "hdf5/handle.hpp"
#include "io/location.hpp"
#include "layout/open_dataset.hpp"
#include "layout/opened_dataset.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {

// A virtual dataset that h5tile wrote, known from its tile index alone: HDF5 has not opened it
// (nor decoded its mapping), so its tiles can be read at once, and checked meanwhile against the
// dataset as HDF5 opens it (mapping_agrees). nullopt where there is no usable index: none stored,
// tiles that do not cover the dataset once, a tile outside the folder of the file (unless
// `options.allow_external`). Each tile is looked for beside the file (HDF5's first choice when
// HDF5_VDS_PREFIX is unset). `file`, where valid, is the file at `location` already open.
[[nodiscard]] std::optional<OpenedDataset> open_from_tile_index(const Location& location, const std::string& dataset,
                                                                const OpenOptions& options,
                                                                FileHandle file = FileHandle());
// For a dataset from open_from_tile_index: whether HDF5, opening the dataset, finds the dtype,
// shape and mapping that the index gave (each tile the whole of "/tile" in the file the index
// names, at the box it gives). What the index says of each tile's file (offset, size, plain
// file) is checked as the tile is read. False too where HDF5 cannot open the dataset (the open
// through HDF5 that follows says why).
[[nodiscard]] bool mapping_agrees(const OpenedDataset& early);
// For a dataset from open_from_tile_index: whether `entries` (a mapping as read_virtual_map
// gives it) map the same tiles to the same boxes as the index.
[[nodiscard]] bool maps_like(const OpenedDataset& early, const std::vector<VirtualEntry>& entries);

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

// A read begun from a tile index (open_for_read's `start`).
struct EarlyRead {
  // Stops the read and returns once it has stopped: what it read is void, its errors are dropped.
  std::function<void()> stop;
  // Returns once what must end before the read is judged has ended (all of a whole read; none
  // of a batched one, which reads on from the index), throwing what the read threw
  // (IndexMismatch: a tile is not the file the index names).
  std::function<void()> settle;
};

// What a read reads from once open_for_read has run: the dataset as its tile index knows it,
// where the read begun from it stands (a batched read goes on from it), else the dataset as HDF5
// opens it (to read from, or to read again from).
struct ReadableDataset {
  std::unique_ptr<const OpenDataset> early;
  std::optional<OpenDataset> opened;
};

// The early-read protocol of every read (from_file, read_box, read_into, from_file_batched).
// Where `options.early_reads` and `path` holds a usable tile index of `dataset`, `start(early)`
// begins reading from the dataset the index describes, on other threads, while this thread has
// HDF5 open the dataset and compare its mapping with the index (mapping_agrees).
// The read stands when they agree and `settle` found every tile to be the file the index names;
// otherwise it is stopped and the dataset is opened through HDF5 (whose errors are thrown once
// the read has stopped). A `start` that throws InvalidArgument (the request judged on the index
// alone) leaves the judgement to the dataset as HDF5 opens it. Without a usable index the
// dataset is opened through HDF5 at once.
[[nodiscard]] ReadableDataset open_for_read(const Location& location, const std::string& dataset,
                                            const OpenOptions& options,
                                            const std::function<EarlyRead(const OpenDataset&)>& start);

}  // namespace h5tile::detail
