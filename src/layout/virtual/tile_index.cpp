#include "layout/virtual/tile_index.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/file.hpp"
#include "hdf5/types.hpp"

namespace h5tile::detail {
namespace {

constexpr std::size_t kTableColumns = 4;     // raw offset, file size, checksum, identity; the box follows
constexpr std::size_t kOldTableColumns = 3;  // before the identity
// Bounds on what a damaged or hostile file may claim, checked before anything is allocated.
constexpr std::uint64_t kMaxTiles = std::uint64_t{1} << 24;
constexpr std::size_t kMaxNameBytes = 4096;

void write_attribute(hid_t object, const char* name, hid_t file_type, hid_t memory_type, const Shape& shape,
                     const void* data) {
  const auto space = make_space(shape);
  const AttributeHandle attribute(check(H5Acreate2(object, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                        fmt::format("H5Acreate2({})", name)));
  check(H5Awrite(attribute.get(), memory_type, data), fmt::format("H5Awrite({})", name));
}

// The attribute `name` of `dataset` (a path from `file`), or an empty handle when it is absent.
AttributeHandle open_attribute(hid_t file, const std::string& dataset, const char* name) {
  if (H5Aexists_by_name(file, dataset.c_str(), name, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return {};
  }
  return AttributeHandle(check(H5Aopen_by_name(file, dataset.c_str(), name, H5P_DEFAULT, H5P_DEFAULT), name));
}

Shape attribute_shape(hid_t attribute) {
  const SpaceHandle space(check(H5Aget_space(attribute), "H5Aget_space"));
  return shape_of(space.get());
}

std::vector<std::uint64_t> read_u64s(hid_t attribute, std::uint64_t count) {
  std::vector<std::uint64_t> values(count);
  check(H5Aread(attribute, H5T_NATIVE_UINT64, values.data()), "H5Aread");
  return values;
}

// The names of a fixed-length string attribute of `count` elements, or nullopt for another type.
std::optional<std::vector<std::string>> read_names(hid_t attribute, std::uint64_t count) {
  const TypeHandle type(check(H5Aget_type(attribute), "H5Aget_type"));
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0) {
    return std::nullopt;
  }
  const auto width = H5Tget_size(type.get());
  if (width == 0 || width > kMaxNameBytes) {
    return std::nullopt;
  }
  std::vector<char> text(count * width);
  check(H5Aread(attribute, type.get(), text.data()), "H5Aread");
  std::vector<std::string> names;
  names.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const char* name = text.data() + i * width;
    names.emplace_back(name, strnlen(name, width));
  }
  return names;
}

std::optional<TileIndex> read_index(hid_t file, const std::string& dataset) {
  const auto shape_attr = open_attribute(file, dataset, kShapeAttribute);
  const auto dtype_attr = open_attribute(file, dataset, kDtypeAttribute);
  const auto table_attr = open_attribute(file, dataset, kTileTableAttribute);
  const auto files_attr = open_attribute(file, dataset, kTileFilesAttribute);
  if (!shape_attr || !dtype_attr || !table_attr || !files_attr) {
    return std::nullopt;
  }
  const auto rank_shape = attribute_shape(shape_attr.get());
  if (rank_shape.size() != 1 || rank_shape[0] == 0 || rank_shape[0] > H5S_MAX_RANK) return std::nullopt;
  const TypeHandle type(check(H5Aget_type(dtype_attr.get()), "H5Aget_type"));
  TileIndex index{dtype_of_type(type.get(), dataset), read_u64s(shape_attr.get(), rank_shape[0]), {}};
  const auto rank = index.shape.size();
  const auto table_shape = attribute_shape(table_attr.get());
  if (table_shape.size() != 2 || table_shape[1] != kTableColumns + 2 * rank) return std::nullopt;
  const auto count = table_shape[0];
  if (count > kMaxTiles || attribute_shape(files_attr.get()) != Shape{count}) return std::nullopt;
  const auto table = read_u64s(table_attr.get(), count * table_shape[1]);
  auto names = read_names(files_attr.get(), count);
  if (!names) return std::nullopt;
  index.tiles.resize(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto* row = table.data() + i * table_shape[1];
    auto& tile = index.tiles[i];
    tile.raw_offset = row[0];
    tile.file_size = row[1];
    tile.checksum = row[2];
    tile.identity = row[3];
    tile.dst.offset.assign(row + kTableColumns, row + kTableColumns + rank);
    tile.dst.extent.assign(row + kTableColumns + rank, row + kTableColumns + 2 * rank);
    tile.file = std::move((*names)[i]);
  }
  return index;
}

}  // namespace

bool disjoint_on_a_grid(const std::vector<Box>& boxes) {
  if (boxes.empty()) return true;
  const auto rank = boxes.front().rank();
  // Per axis, every box's start and end, sorted: the cut planes.
  std::vector<std::vector<std::uint64_t>> cuts(rank);
  for (std::size_t a = 0; a < rank; ++a) {
    auto& c = cuts[a];
    c.reserve(2 * boxes.size());
    for (const auto& box : boxes) {
      c.push_back(box.offset[a]);
      c.push_back(box.offset[a] + box.extent[a]);
    }
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }
  // Each box's cell (its index among the cut planes, per axis), flat; then no cell twice.
  std::vector<std::size_t> cells(boxes.size() * rank);
  for (std::size_t b = 0; b < boxes.size(); ++b) {
    for (std::size_t a = 0; a < rank; ++a) {
      const auto& c = cuts[a];
      const auto& box = boxes[b];
      const auto start = std::lower_bound(c.begin(), c.end(), box.offset[a]);
      // One cell: the next cut plane after the start is the box's end.
      if (start + 1 == c.end() || *(start + 1) != box.offset[a] + box.extent[a]) return false;
      cells[b * rank + a] = static_cast<std::size_t>(start - c.begin());
    }
  }
  std::vector<std::size_t> order(boxes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto cell = [&](std::size_t b) { return cells.begin() + static_cast<std::ptrdiff_t>(b * rank); };
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::lexicographical_compare(cell(x), cell(x) + static_cast<std::ptrdiff_t>(rank), cell(y),
                                        cell(y) + static_cast<std::ptrdiff_t>(rank));
  });
  return std::adjacent_find(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
           return std::equal(cell(x), cell(x) + static_cast<std::ptrdiff_t>(rank), cell(y));
         }) == order.end();
}

void write_tile_index(hid_t dataset, hid_t type, const Shape& shape, const std::vector<IndexedTile>& tiles) {
  const Hdf5Lock lock;
  const auto rank = shape.size();
  std::vector<std::uint64_t> table;
  table.reserve(tiles.size() * (kTableColumns + 2 * rank));
  std::size_t width = 1;
  for (const auto& tile : tiles) {
    table.insert(table.end(), {tile.raw_offset, tile.file_size, tile.checksum, tile.identity});
    table.insert(table.end(), tile.dst.offset.begin(), tile.dst.offset.end());
    table.insert(table.end(), tile.dst.extent.begin(), tile.dst.extent.end());
    width = std::max(width, tile.file.size() + 1);
  }
  write_attribute(dataset, kTileTableAttribute, H5T_STD_U64LE, H5T_NATIVE_UINT64,
                  {tiles.size(), kTableColumns + 2 * rank}, table.data());
  if (rank == 0) {
    return;  // no boxes to index: reads wait for HDF5's open
  }
  std::vector<char> names(tiles.size() * width, '\0');
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    std::memcpy(names.data() + i * width, tiles[i].file.data(), tiles[i].file.size());
  }
  const TypeHandle string_type(check(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  check(H5Tset_size(string_type.get(), width), "H5Tset_size");
  write_attribute(dataset, kTileFilesAttribute, string_type.get(), string_type.get(), {tiles.size()}, names.data());
  write_attribute(dataset, kShapeAttribute, H5T_STD_U64LE, H5T_NATIVE_UINT64, {rank}, shape.data());
  const SpaceHandle none(check(H5Screate(H5S_NULL), "H5Screate(null)"));
  const AttributeHandle dtype(
      check(H5Acreate2(dataset, kDtypeAttribute, type, none.get(), H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2(dtype)"));
}

std::optional<TileIndex> read_tile_index(hid_t file, const std::string& dataset) {
  const Hdf5Lock lock;
  try {
    return read_index(file, dataset);
  } catch (const Error&) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;  // unreadable or of another shape: as if there were none
  }
}

std::vector<TileRow> read_tile_table(hid_t dataset, std::size_t rank) {
  const Hdf5Lock lock;
  if (H5Aexists(dataset, kTileTableAttribute) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return {};
  }
  const AttributeHandle attribute(check(H5Aopen(dataset, kTileTableAttribute, H5P_DEFAULT), "H5Aopen"));
  const auto shape = attribute_shape(attribute.get());
  if (shape.size() != 2 || shape[0] > kMaxTiles) {
    return {};
  }
  // The widths h5tile has written: 2 (offset, size), 3 (+ checksum), 3 + 2 * rank (+ box),
  // 4 + 2 * rank (+ identity).
  const auto width = shape[1];
  const bool identity = width == kTableColumns + 2 * rank;
  const bool checksum = identity || width == kOldTableColumns || width == kOldTableColumns + 2 * rank;
  if (!checksum && width != 2) {
    return {};
  }
  const auto values = read_u64s(attribute.get(), shape[0] * width);
  std::vector<TileRow> rows(shape[0]);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto* row = values.data() + i * width;
    rows[i].raw_offset = row[0];
    rows[i].file_size = row[1];
    if (checksum) rows[i].checksum = row[2];
    if (identity) rows[i].identity = row[3];
  }
  return rows;
}

}  // namespace h5tile::detail
