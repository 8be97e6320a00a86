// Early reads (early_open.hpp): a dataset opened from its tile index, the check of its mapping,
// and the protocol that runs a read beside the check.
#include "layout/virtual/early_open.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/error.hpp>

#include "engine/thread_pool.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"
#include "io/http/url.hpp"
#include "layout/opener.hpp"
#include "layout/virtual/remote_sources.hpp"
#include "layout/virtual/tile_index.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

std::optional<OpenedDataset> open_from_tile_index(const Location& location, const std::string& dataset,
                                                  const OpenOptions& options, FileHandle file) {
  OpenedDataset early;
  early.files_known = false;  // read from the index alone: not for keeping
  std::optional<TileIndex> index;
  try {
    early.name = normalize_dataset_name(dataset);
    // Kept: mapping_agrees checks the index against this file.
    early.file = file ? std::move(file) : open_file(location, options.remote);
    index = read_tile_index(early.file.get(), early.name);
  } catch (const Error&) {
    return std::nullopt;  // the open through HDF5 reports it
  }
  if (!index) {
    return std::nullopt;
  }
  early.location = location;
  early.options = options;
  early.info.dtype = index->dtype;
  early.info.shape = index->shape;
  early.info.max_shape = index->shape;
  early.info.layout = "virtual";
  early.info.virtual_sources = index->tiles.size();
  const bool remote = location.remote();
  if (remote && !open_remote_tiles(early, *index)) {  // tiles beside the URL, opened and checked
    return std::nullopt;
  }
  // One source and one mapping per tile, built on the worker threads (a few microseconds each,
  // so thousands would hold the read back), each with its own cache of folder checks.
  const auto& tiles = index->tiles;
  const auto es = index->dtype.size();
  const auto folder = location.path().parent_path();
  std::atomic<bool> usable{true};
  if (!remote) {
    early.sources.resize(tiles.size());
    early.mappings.resize(tiles.size());
  }
  const auto workers = static_cast<unsigned>(std::min<std::size_t>(options.threads, 1 + tiles.size() / 256));
  parallel_ranges(remote ? 0 : tiles.size(), workers, [&](std::size_t begin, std::size_t end) {
    FolderCheck folder_check(location.path());
    for (std::size_t i = begin; i < end && usable; ++i) {
      const auto& tile = tiles[i];
      auto tile_path = first_candidate(folder, tile.file);
      if (tile.file == "." || tile.dst.rank() != index->shape.size() || !tile.dst.fits(index->shape) ||
          tile.dst.count() == 0 || (!options.allow_external && !folder_check.inside(tile_path, false))) {
        usable = false;
        return;
      }
      auto source = std::make_unique<Source>();
      source->file = std::move(tile_path);
      source->dataset = kTileDataset;
      source->shape = tile.dst.extent;
      source->elem_size = es;
      TableTile access{tile.raw_offset, tile.file_size, tile.identity, true, options.direct_reads};
      if (i < options.hold_tiles) {
        // Held from here on: a tile that is not the file the index names makes the index unusable.
        access.held = hold_tile(source->file, access, tile.dst.count() * es);
        if (!access.held) {
          usable = false;
          return;
        }
      }
      source->access = std::move(access);
      early.sources[i] = std::move(source);
      early.mappings[i] = {i, Box::whole(tile.dst.extent), tile.dst, tile.checksum, tile.raw_offset};
    }
  });
  if (!usable) {
    return std::nullopt;
  }
  // Tiles that cover the dataset once: tasks never write the same memory, whatever the index.
  std::uint64_t total = 0;
  try {
    total = element_count(index->shape);
    (void)element_count({total, index->dtype.size()});  // its bytes, too, fit in 64 bits
  } catch (const Error&) {
    return std::nullopt;  // a shape no dataset can have (a forged attribute): HDF5's shape decides
  }
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

bool mapping_agrees(const OpenedDataset& early) {
  std::optional<std::vector<VirtualEntry>> entries;
  try {
    const auto dataset = open_guarded(early, early.file.get(), early.name, early.location.path());
    const auto described = describe_dataset(dataset.get(), where(early.location.path(), early.name));
    if (described.dtype != early.info.dtype || described.shape != early.info.shape ||
        described.storage != Storage::Virtual) {
      return false;
    }
    entries = read_virtual_map(creation_plist(dataset.get()).get());
  } catch (const Error&) {
    return false;  // the open through HDF5 that follows reports it
  }
  return entries && maps_like(early, *entries);
}

bool maps_like(const OpenedDataset& early, const std::vector<VirtualEntry>& entries) {
  if (entries.size() != early.mappings.size()) {
    return false;
  }
  const auto folder = early.location.path().parent_path();
  const auto base = parse_url(early.location.path().native());  // a remote file's tiles: objects beside it
  for (std::size_t i = 0; i < early.mappings.size(); ++i) {
    const auto& entry = entries[i];
    const auto& mapping = early.mappings[i];
    // As the tile table is trusted on a full open: the whole of a tile file's "/tile".
    if (entry.src || !names_tile_dataset(entry.dataset) || entry.dst != mapping.dst) {
      return false;
    }
    const auto& file = early.sources[mapping.source]->file;
    if (base) {
      const auto url = entry.file == "." ? std::nullopt : resolve_inside(*base, entry.file);
      if (!url || redacted(*url) != file.native()) return false;
    } else if (first_candidate(folder, entry.file) != file) {
      return false;
    }
  }
  return true;
}

EarlyReadCounts& early_read_counts() {
  static EarlyReadCounts counts;
  return counts;
}

namespace {

// Whether the read begun from `early` stands; once false, the read has stopped.
bool stands(const OpenDataset& early, const EarlyRead& read) {
  bool agree = false;
  try {
    agree = mapping_agrees(early.opened());
  } catch (...) {
    read.stop();
    throw;
  }
  if (!agree) {
    read.stop();  // the early read is void: stop it at its next step
    return false;
  }
  try {
    read.settle();
  } catch (const IndexMismatch&) {
    return false;  // a tile's file is not what the index says: read from the mapping
  }
  return true;
}

}  // namespace

ReadableDataset open_for_read(const Location& location, const std::string& dataset, const OpenOptions& options,
                              const std::function<EarlyRead(const OpenDataset&)>& start) {
  ReadableDataset readable;
  // A remote file is opened once, for both (each open of it costs a request).
  FileHandle remote = location.remote() ? open_file(location, options.remote) : FileHandle();
  if (options.early_reads) {
    auto file = remote ? reopen_file(remote.get()) : FileHandle();
    if (auto early = open_from_tile_index(location, dataset, options, std::move(file))) {
      readable.early = std::make_unique<const OpenDataset>(std::move(*early));
      std::optional<EarlyRead> read;
      try {
        read = start(*readable.early);
      } catch (const InvalidArgument&) {
        // Judged on the index: let the dataset as HDF5 opens it decide (and word the error).
      }
      if (read) {
        if (stands(*readable.early, *read)) {
          ++early_read_counts().kept;
          return readable;
        }
        ++early_read_counts().redone;
      }
      readable.early.reset();
    }
  }
  readable.opened.emplace(open_to_read(location, dataset, options, std::move(remote)));
  return readable;
}

}  // namespace h5tile::detail
