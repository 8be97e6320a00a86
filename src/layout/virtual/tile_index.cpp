#include "layout/virtual/tile_index.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/error.hpp>

#include "hdf5/attributes.hpp"

namespace h5tile::detail {
namespace {

constexpr std::size_t kTableColumns = 4;     // raw offset, file size, checksum, identity; the box follows
constexpr std::size_t kOldTableColumns = 3;  // before the identity
// Bounds on what a damaged or hostile file may claim, checked before anything is allocated.
constexpr std::uint64_t kMaxTiles = std::uint64_t{1} << 24;
constexpr std::size_t kMaxNameBytes = 4096;
constexpr std::uint64_t kMaxRank = 32;  // HDF5's H5S_MAX_RANK

std::optional<TileIndex> read_index(hid_t file, const std::string& dataset) {
  const auto shape_attr = open_attribute(file, dataset, kShapeAttribute);
  const auto dtype_attr = open_attribute(file, dataset, kDtypeAttribute);
  const auto table_attr = open_attribute(file, dataset, kTileTableAttribute);
  const auto files_attr = open_attribute(file, dataset, kTileFilesAttribute);
  if (!shape_attr || !dtype_attr || !table_attr || !files_attr) {
    return std::nullopt;
  }
  const auto rank_shape = attribute_shape(shape_attr.get());
  if (rank_shape.size() != 1 || rank_shape[0] == 0 || rank_shape[0] > kMaxRank) return std::nullopt;
  TileIndex index{attribute_dtype(dtype_attr.get(), dataset), read_u64_attribute(shape_attr.get(), rank_shape[0]), {}};
  const auto rank = index.shape.size();
  const auto table_shape = attribute_shape(table_attr.get());
  if (table_shape.size() != 2 || table_shape[1] != kTableColumns + 2 * rank) return std::nullopt;
  const auto count = table_shape[0];
  if (count > kMaxTiles || attribute_shape(files_attr.get()) != Shape{count}) return std::nullopt;
  const auto table = read_u64_attribute(table_attr.get(), count * table_shape[1]);
  auto names = read_strings_attribute(files_attr.get(), count, kMaxNameBytes);
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
  const auto rank = shape.size();
  std::vector<std::uint64_t> table;
  table.reserve(tiles.size() * (kTableColumns + 2 * rank));
  std::vector<std::string> files;
  files.reserve(tiles.size());
  for (const auto& tile : tiles) {
    table.insert(table.end(), {tile.raw_offset, tile.file_size, tile.checksum, tile.identity});
    table.insert(table.end(), tile.dst.offset.begin(), tile.dst.offset.end());
    table.insert(table.end(), tile.dst.extent.begin(), tile.dst.extent.end());
    files.push_back(tile.file);
  }
  write_u64_attribute(dataset, kTileTableAttribute, {tiles.size(), kTableColumns + 2 * rank}, table.data());
  if (rank == 0) {
    return;  // no boxes to index: reads wait for HDF5's open
  }
  write_strings_attribute(dataset, kTileFilesAttribute, files);
  write_u64_attribute(dataset, kShapeAttribute, {rank}, shape.data());
  write_empty_attribute(dataset, kDtypeAttribute, type);  // its type is the dtype
}

std::optional<std::string> shape_attribute_disagreement(hid_t file, const std::string& dataset, const Shape& shape) {
  const auto attribute = open_attribute(file, dataset, kShapeAttribute);
  if (!attribute) {
    return std::nullopt;
  }
  const auto dims = attribute_shape(attribute.get());
  std::optional<std::vector<std::int64_t>> lengths;
  if (dims.size() == 1 && dims[0] <= kMaxRank) {
    lengths = read_integers_attribute(attribute.get(), dims[0]);
  }
  if (!lengths) {
    return fmt::format("is no list of at most {} axis lengths (it has shape {}{})", kMaxRank, to_string(dims),
                       dims.size() == 1 && dims[0] <= kMaxRank ? " and is not integers" : "");
  }
  const bool same = lengths->size() == shape.size() &&
                    std::equal(lengths->begin(), lengths->end(), shape.begin(), [](std::int64_t v, std::uint64_t n) {
                      return v >= 0 && static_cast<std::uint64_t>(v) == n;
                    });
  return same ? std::nullopt : std::optional<std::string>(fmt::format("gives shape [{}]", fmt::join(*lengths, ", ")));
}

std::optional<TileIndex> read_tile_index(hid_t file, const std::string& dataset) {
  try {
    return read_index(file, dataset);
  } catch (const Error&) {
    return std::nullopt;  // unreadable or of another shape: as if there were none
  }
}

std::vector<TileRow> read_tile_table(hid_t dataset, std::size_t rank) {
  const auto attribute = open_attribute(dataset, kTileTableAttribute);
  if (!attribute) {
    return {};
  }
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
  const auto values = read_u64_attribute(attribute.get(), shape[0] * width);
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
