// OpenDataset::from_tile_index and mapping_agrees: a virtual dataset known from h5tile's tile
// index before HDF5 has opened it, and the check of that index against HDF5's mapping.
#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

#include "engine/thread_pool.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"
#include "layout/open_dataset.hpp"
#include "layout/tile_index.hpp"
#include "layout/virtual_map.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;
namespace {

// Where the tile index's `name` lies for an early read: where HDF5 looks first (beside the file,
// when HDF5_VDS_PREFIX is unset). A tile that is not there fails its read (IndexMismatch).
fs::path indexed_tile_path(const fs::path& folder, const std::string& name) {
  if (!name.empty() && name.front() == '/') return name;
  std::string joined;
  joined.reserve(folder.native().size() + 1 + name.size());
  joined.append(folder.native());
  if (!joined.empty() && joined.back() != '/') joined.push_back('/');
  joined.append(name);
  return fs::path(std::move(joined));  // one parse (folder / name parses the folder again)
}

}  // namespace

std::optional<OpenDataset> OpenDataset::from_tile_index(const fs::path& path, const std::string& dataset,
                                                        bool allow_external) {
  OpenDataset early;
  std::optional<TileIndex> index;
  try {
    early.name_ = normalize_dataset_name(dataset);
    index = read_tile_index(open_file(path).get(), early.name_);
  } catch (const Error&) {
    return std::nullopt;  // the open through HDF5 reports it
  }
  if (!index) {
    return std::nullopt;
  }
  early.path_ = path;
  early.allow_external_ = allow_external;
  early.info_.dtype = index->dtype;
  early.info_.shape = index->shape;
  early.info_.layout = "virtual";
  early.info_.virtual_sources = index->tiles.size();
  // One source and one mapping per tile, built on the worker threads (a few microseconds each,
  // so thousands would hold the read back), each with its own cache of folder checks.
  const auto& tiles = index->tiles;
  const auto es = index->dtype.size();
  const auto folder = path.parent_path();
  early.sources_.resize(tiles.size());
  early.mappings_.resize(tiles.size());
  std::atomic<bool> usable{true};
  const auto workers = static_cast<unsigned>(std::min<std::size_t>(settings::threads(), 1 + tiles.size() / 256));
  parallel_for(workers, workers, [&](std::size_t w) {
    FolderCheck folder_check(path);
    for (std::size_t i = tiles.size() * w / workers; i < tiles.size() * (w + 1) / workers && usable; ++i) {
      const auto& tile = tiles[i];
      auto file = indexed_tile_path(folder, tile.file);
      if (tile.file == "." || tile.dst.rank() != index->shape.size() || !tile.dst.fits(index->shape) ||
          tile.dst.count() == 0 || (!allow_external && !folder_check.inside(file, false))) {
        usable = false;
        return;
      }
      auto source = std::make_unique<Source>();
      source->file = std::move(file);
      source->dataset = "/tile";
      source->shape = tile.dst.extent;
      source->elem_size = es;
      source->raw = RawDataset{nullptr, tile.raw_offset, tile.dst.extent, es};
      source->indexed_bytes = tile.file_size;
      early.sources_[i] = std::move(source);
      early.mappings_[i] = {i, Box::whole(tile.dst.extent), tile.dst, tile.checksum, tile.raw_offset};
    }
  });
  if (!usable) {
    return std::nullopt;
  }
  // Tiles that cover the dataset once: tasks never write the same memory, whatever the index.
  const auto total = element_count(index->shape);
  std::uint64_t covered = 0;
  std::vector<Box> boxes;
  boxes.reserve(tiles.size());
  for (auto& tile : index->tiles) {
    covered += tile.dst.count();  // each at most `total` (it fits the shape)
    if (covered > total) return std::nullopt;
    boxes.push_back(std::move(tile.dst));
  }
  if (covered != total || !disjoint_on_a_grid(boxes)) {
    return std::nullopt;
  }
  return early;
}

bool OpenDataset::mapping_agrees() const {
  const auto file = open_file(path_);
  const auto dataset = open_dataset(file.get(), name_, path_);
  std::optional<std::vector<VirtualEntry>> entries;
  {
    const Hdf5Lock lock;
    const TypeHandle type(check(H5Dget_type(dataset.get()), "H5Dget_type"));
    const SpaceHandle space(check(H5Dget_space(dataset.get()), "H5Dget_space"));
    if (dtype_of_type(type.get(), where(path_, name_)) != info_.dtype || shape_of(space.get()) != info_.shape) {
      return false;
    }
    const PlistHandle dcpl(check(H5Dget_create_plist(dataset.get()), "H5Dget_create_plist"));
    if (H5Pget_layout(dcpl.get()) != H5D_VIRTUAL) {
      return false;
    }
    entries = read_virtual_map(dcpl.get());
  }
  if (!entries || entries->size() != mappings_.size()) {
    return false;
  }
  const auto folder = path_.parent_path();
  for (std::size_t i = 0; i < mappings_.size(); ++i) {
    const auto& entry = (*entries)[i];
    const auto& mapping = mappings_[i];
    // As the tile table is trusted on a full open: the whole of a tile file's "/tile".
    if (entry.src || (entry.dataset != "/tile" && entry.dataset != "tile") || entry.dst != mapping.dst ||
        indexed_tile_path(folder, entry.file) != sources_[mapping.source]->file) {
      return false;
    }
  }
  return true;
}

}  // namespace h5tile::detail
