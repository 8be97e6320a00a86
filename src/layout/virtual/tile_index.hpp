#pragma once
// The tile index: what h5tile stores beside the mapping of a virtual dataset it writes (each
// tile's box, file name, raw offset, file size and checksum, and the dataset's dtype and
// shape), in attributes that can be read without HDF5 decoding the mapping (early_open.hpp
// says how reads use it).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/array.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// The attributes of the index. Files with the tile table alone, or with rows without boxes, have
// no usable index (reads wait for HDF5's open) but their tile tables are read.
inline constexpr const char* kTileTableAttribute = "h5tile_tile_table";  // u64 rows, see TileIndex
inline constexpr const char* kTileFilesAttribute = "h5tile_tile_files";  // fixed-length strings
inline constexpr const char* kShapeAttribute = "h5tile_shape";           // u64 per axis
inline constexpr const char* kDtypeAttribute = "h5tile_dtype";           // no elements; its type is the dtype

// The dataset inside each tile file h5tile writes.
inline constexpr const char* kTileDataset = "/tile";
// Whether a mapping's source dataset name is that one (HDF5 accepts it without the slash).
[[nodiscard]] inline bool names_tile_dataset(const std::string& name) { return name == kTileDataset || name == "tile"; }

struct IndexedTile {
  Box dst;                       // where the tile lies in the dataset
  std::string file;              // its file, as HDF5 reads the mapping's name (stored there escaped)
  std::uint64_t raw_offset = 0;  // where its bytes start in that file
  std::uint64_t file_size = 0;   // the file's size when written
  std::uint64_t checksum = 0;    // XXH64 of its bytes
  std::uint64_t identity = 0;    // tile_identity of its file (engine/checksum.hpp)
};

// Tile table rows: raw offset, file size, checksum, identity, then the tile's box (offset per
// axis, extent per axis). A table without the identity column (3 columns before the box) is read
// for its checksums, but its tiles are opened with HDF5: a file's size alone does not show it is
// the tile that was written.
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

// One row of the tile table as a reader of the mapping uses it (the box is the mapping's).
struct TileRow {
  std::uint64_t raw_offset = 0;
  std::uint64_t file_size = 0;
  std::optional<std::uint64_t> checksum;  // absent in the oldest tables
  std::optional<std::uint64_t> identity;  // absent in tables written before it
};

// The tile table of an open virtual dataset of `rank` axes: one row per mapping, or empty when
// the dataset has none (or one of a width no version of h5tile wrote).
[[nodiscard]] std::vector<TileRow> read_tile_table(hid_t dataset, std::size_t rank);

// Writes the index of a new virtual dataset of element type `type`.
void write_tile_index(hid_t dataset, hid_t type, const Shape& shape, const std::vector<IndexedTile>& tiles);

// The index of `dataset` in the open `file`, read without opening the dataset; nullopt when it
// has none (written by another program or by h5tile before the index had boxes), or when the
// index is incomplete.
[[nodiscard]] std::optional<TileIndex> read_tile_index(hid_t file, const std::string& dataset);

// Where `dataset` (in the open `file`) has an h5tile_shape attribute that does not say `shape`
// (HDF5's): what the attribute says ("gives shape [60, 41]", "is no list of ..."). Reads believe
// HDF5's shape; verify reports this.
[[nodiscard]] std::optional<std::string> shape_attribute_disagreement(hid_t file, const std::string& dataset,
                                                                      const Shape& shape);

}  // namespace h5tile::detail
