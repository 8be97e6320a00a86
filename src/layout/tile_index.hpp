#pragma once
// The tile index: what h5tile stores beside the mapping of a virtual dataset it writes (each
// tile's box, file name, raw offset, file size and checksum, and the dataset's dtype and
// shape), in attributes that can be read without HDF5 decoding the mapping. Opening a virtual
// dataset with thousands of sources costs HDF5 tens of milliseconds on one thread; with the
// index a read starts at once, and is checked against the mapping when the open is done.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <h5tile/array.hpp>

#include "engine/progress.hpp"
#include "hdf5/handle.hpp"

namespace h5tile::detail {

class OpenDataset;

// The attributes of the index (the tile table predates the others; its rows gained the boxes).
inline constexpr const char* kTileTableAttribute = "h5tile_tile_table";  // u64 rows, see TileIndex
inline constexpr const char* kTileFilesAttribute = "h5tile_tile_files";  // fixed-length strings
inline constexpr const char* kShapeAttribute = "h5tile_shape";           // u64 per axis
inline constexpr const char* kDtypeAttribute = "h5tile_dtype";           // no elements; its type is the dtype

struct IndexedTile {
  Box dst;                       // where the tile lies in the dataset
  std::string file;              // its file, as the mapping names it
  std::uint64_t raw_offset = 0;  // where its bytes start in that file
  std::uint64_t file_size = 0;   // the file's size when written
  std::uint64_t checksum = 0;    // XXH64 of its bytes
};

// Tile table rows: raw offset, file size, checksum, then the tile's box (offset per axis,
// extent per axis).
struct TileIndex {
  DType dtype;
  Shape shape;
  std::vector<IndexedTile> tiles;
};

// Whether `boxes` (of one rank) lie on one grid, each the cell between neighbouring cut planes of
// all the boxes along every axis, and no two in the same cell: then they are pairwise disjoint.
// False for overlapping boxes, and for disjoint ones arranged otherwise (staggered like bricks),
// which this cheap check (n log n) does not decide.
[[nodiscard]] bool disjoint_on_a_grid(const std::vector<Box>& boxes);

// The tile table of an open virtual dataset: one row per mapping (raw offset, file size,
// checksum, box; older files have fewer columns), or empty when the dataset has none.
[[nodiscard]] std::vector<std::vector<std::uint64_t>> read_tile_table(hid_t dataset);

// Writes the index of a new virtual dataset of element type `type`.
void write_tile_index(hid_t dataset, hid_t type, const Shape& shape, const std::vector<IndexedTile>& tiles);

// The index of `dataset` in the open `file`, read without opening the dataset; nullopt when it
// has none (written by another program or by h5tile before the index had boxes), or when the
// index is incomplete.
[[nodiscard]] std::optional<TileIndex> read_tile_index(hid_t file, const std::string& dataset);

// A tile named by the index does not match what is on disk (missing, a symbolic link, another
// size), or the index does not cover what is read: the read started from the index is void.
class IndexMismatch : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether a read may start from a tile index: settings::early_reads and raw_io on, no checksums
// to check before any byte is read (`verify_checksums`), and no HDF5_VDS_PREFIX (HDF5 looks for
// sources there first).
[[nodiscard]] bool early_reads_allowed(bool verify_checksums);

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
