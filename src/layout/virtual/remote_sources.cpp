// Virtual datasets of remote files (remote_sources.hpp): resolving and opening their source
// objects, from the mapping or from the tile index of an early read.
#include "layout/virtual/remote_sources.hpp"

#include <algorithm>
#include <atomic>
#include <map>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/checksum.hpp"
#include "engine/thread_pool.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/remote_driver.hpp"
#include "hdf5/types.hpp"
#include "io/remote.hpp"
#include "layout/virtual/tile_index.hpp"
#include "layout/virtual/virtual_map.hpp"
#include "layout/virtual/virtual_open.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

std::optional<Url> remote_source_url(const Url& base, const std::string& name, const std::string& where) {
  if (name == ".") {
    return std::nullopt;
  }
  if (auto url = resolve_inside(base, name)) {
    return url;
  }
  throw VirtualSourceError(
      fmt::format("{}: source '{}' is outside the folder of the remote file (an absolute path, '..', an encoded "
                  "dot or slash, another host or a local file): h5tile reads only objects under '{}://{}{}'",
                  where, display_name(name), base.scheme, base.authority, folder_of(base)));
}

RemoteOptions source_object_options(const RemoteOptions& options) {
  RemoteOptions out = options;
  out.block_size = std::min<std::uint64_t>(options.block_size, std::uint64_t{64} << 10);
  return out;
}

std::vector<OpenedObject> open_remote_objects(const std::vector<Url>& urls, const RemoteOptions& options) {
  std::vector<OpenedObject> opened(urls.size());
  const auto workers = static_cast<unsigned>(std::min<std::size_t>(urls.size(), std::max(1U, options.connections)));
  parallel_for(urls.size(), workers, [&](std::size_t i) {
    try {
      opened[i].source = open_remote(full_text(urls[i]), options);
    } catch (...) {
      opened[i].error = std::current_exception();
    }
  });
  return opened;
}

bool is_remote_tile(const ByteSource& object, std::uint64_t raw_offset, std::uint64_t file_size, std::uint64_t identity,
                    std::uint64_t data_bytes) {
  return object.size() == file_size && tile_identity(object, raw_offset, data_bytes, file_size) == identity;
}

namespace {

// The distinct objects that `urls` name (nullopt: the file itself, no object): the URLs to open,
// and for each name the index of its object (npos for the file itself).
struct DistinctObjects {
  std::vector<Url> urls;
  std::vector<std::size_t> object_of;
};

DistinctObjects distinct_objects(const std::vector<std::optional<Url>>& urls) {
  DistinctObjects out;
  std::map<std::string, std::size_t> index_of;
  for (const auto& url : urls) {
    if (!url) {
      out.object_of.push_back(std::string::npos);
      continue;
    }
    const auto [it, added] = index_of.emplace(full_text(*url), out.urls.size());
    if (added) out.urls.push_back(*url);
    out.object_of.push_back(it->second);
  }
  return out;
}

// Source dataset `dataset` of remote object `object` (nullptr: the file itself), opened by HDF5 on
// h5tile's driver and added to the sources: its index.
std::size_t add_remote_source(OpenedDataset& opened, std::shared_ptr<const ByteSource> object,
                              const std::string& dataset) {
  auto source = std::make_unique<Source>();
  source->file = object ? fs::path(object->name()) : opened.location.path();
  source->dataset = dataset;
  ThroughHdf5 hdf5{{}, {}, copy_type(opened.memory_type.get())};
  if (object) {
    const auto block = source_object_options(opened.options.remote).block_size;
    hdf5.file = open_remote_file(object, block, 16 * block, opened.options.remote.parallel);
  }
  hdf5.dataset =
      open_guarded(opened, object ? hdf5.file.get() : opened.file.get(), normalize_dataset_name(dataset), source->file);
  const auto described = describe_dataset(hdf5.dataset.get(), where(source->file, dataset));
  if (described.storage == Storage::Virtual) {
    throw VirtualSourceError(
        "it is a virtual dataset itself: h5tile does not read nested virtual datasets of a remote file (HDF5 "
        "would open their sources itself)");
  }
  if (const auto names = external_storage_names(creation_plist(hdf5.dataset.get()).get()); !names.empty()) {
    throw VirtualSourceError(fmt::format(
        "it keeps its data in HDF5 external storage ('{}'): h5tile does not read external storage of a remote "
        "file",
        display_name(names.front())));
  }
  source->shape = described.shape;
  source->chunk = described.chunk;
  source->elem_size = opened.info.dtype.size();
  source->access = access_for(std::move(hdf5), source->chunk, opened.options.raw_io, opened.options.direct_reads,
                              source->file, dataset);
  opened.sources.push_back(std::move(source));
  return opened.sources.size() - 1;
}

}  // namespace

void open_remote_virtual(OpenedDataset& opened, hid_t dcpl) {
  const auto here = where(opened.location.path(), opened.name);
  const auto entries = read_virtual_map(dcpl);
  if (!entries) {
    throw VirtualSourceError(
        fmt::format("{}: its mapping is not box to box (an unlimited or irregular selection, or a '%b' source "
                    "name): h5tile reads such virtual datasets of local files only (HDF5 would open their "
                    "sources itself)",
                    here));
  }
  opened.info.virtual_sources = entries->size();
  const auto base = parse_url(opened.location.path().native()).value();
  std::vector<std::optional<Url>> urls;
  urls.reserve(entries->size());
  for (const auto& entry : *entries) urls.push_back(remote_source_url(base, entry.file, here));
  const auto objects = distinct_objects(urls);
  const auto reached = open_remote_objects(objects.urls, source_object_options(opened.options.remote));
  for (const auto& object : reached) {
    if (object.source) opened.info.stored_bytes += object.source->size();
  }
  // Tiles h5tile wrote whose objects are still the files written (size and identity) are read
  // at the offset their tile table gives, without HDF5 opening them; any other source is opened
  // by HDF5 through h5tile's driver, on its own object.
  const auto table = read_tile_table(opened.dataset.get(), opened.info.shape.size());
  const bool has_table = table.size() == entries->size();
  const auto es = opened.info.dtype.size();
  std::vector<char> by_table(entries->size(), 0);
  if (opened.options.raw_io && has_table) {
    const auto workers =
        static_cast<unsigned>(std::min<std::size_t>(entries->size(), std::max(1U, opened.options.remote.connections)));
    parallel_for(entries->size(), workers, [&](std::size_t i) {
      const auto& entry = (*entries)[i];
      const auto& row = table[i];
      const auto object = objects.object_of[i];
      if (object == std::string::npos || !reached[object].source || !row.identity || entry.src ||
          !names_tile_dataset(entry.dataset) || entry.dst.count() == 0) {
        return;
      }
      try {
        by_table[i] = is_remote_tile(*reached[object].source, row.raw_offset, row.file_size, *row.identity,
                                     entry.dst.count() * es)
                          ? 1
                          : 0;
      } catch (const Error&) {
        // Read through HDF5 below, which reports what is wrong with it.
      }
    });
  }
  std::map<std::pair<std::size_t, std::string>, std::size_t> seen;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& entry = (*entries)[i];
    const auto object = objects.object_of[i];
    const std::string shown = urls[i] ? redacted(*urls[i]) : opened.location.path().string();
    try {
      if (object != std::string::npos && reached[object].error) {
        std::rethrow_exception(reached[object].error);
      }
      if (by_table[i] != 0) {
        auto source = std::make_unique<Source>();
        source->file = shown;
        source->dataset = entry.dataset;
        source->shape = entry.dst.extent;
        source->elem_size = es;
        source->access = RawBytes{reached[object].source, table[i].raw_offset};
        opened.sources.push_back(std::move(source));
        opened.mappings.push_back({opened.sources.size() - 1, Box::whole(entry.dst.extent), entry.dst,
                                   table[i].checksum, table[i].raw_offset});
        continue;
      }
      std::size_t index = 0;
      auto key = std::make_pair(object, entry.dataset);
      if (auto it = seen.find(key); it != seen.end()) {
        index = it->second;
      } else {
        index =
            add_remote_source(opened, object == std::string::npos ? nullptr : reached[object].source, entry.dataset);
        seen.emplace(std::move(key), index);
      }
      map_source(opened, index, entry.src, entry.dst, has_table ? table[i].checksum : std::nullopt,
                 has_table ? table[i].raw_offset : 0);
    } catch (const ReshapedMapping&) {
      throw VirtualSourceError(
          fmt::format("{}: source '{}' (dataset '{}') is mapped to {} in another shape: h5tile reads such "
                      "virtual datasets of local files only (HDF5 would open their sources itself)",
                      here, shown, entry.dataset, to_string(entry.dst)));
    } catch (const std::exception& e) {
      throw VirtualSourceError(fmt::format("{}: source '{}' (dataset '{}', mapped to {}) is unusable: {}", here, shown,
                                           entry.dataset, to_string(entry.dst), e.what()));
    }
  }
  finish_mappings(opened);
}

bool open_remote_tiles(OpenedDataset& opened, const TileIndex& index) {
  const auto base = parse_url(opened.location.path().native());
  if (!base) return false;
  std::vector<std::optional<Url>> urls;
  urls.reserve(index.tiles.size());
  for (const auto& tile : index.tiles) {
    auto url = tile.file == "." ? std::nullopt : resolve_inside(*base, tile.file);
    if (!url || tile.dst.rank() != index.shape.size() || !tile.dst.fits(index.shape) || tile.dst.count() == 0) {
      return false;  // the open through HDF5 that follows says what is wrong
    }
    urls.push_back(std::move(url));
  }
  const auto objects = distinct_objects(urls);
  if (objects.urls.size() != urls.size()) {
    return false;  // two tiles in one object: not what h5tile writes
  }
  const auto reached = open_remote_objects(objects.urls, source_object_options(opened.options.remote));
  const auto es = index.dtype.size();
  std::atomic<bool> usable{true};
  const auto workers =
      static_cast<unsigned>(std::min<std::size_t>(reached.size(), std::max(1U, opened.options.remote.connections)));
  parallel_for(reached.size(), workers, [&](std::size_t i) {
    const auto& tile = index.tiles[i];
    try {
      if (!usable || !reached[i].source ||
          !is_remote_tile(*reached[i].source, tile.raw_offset, tile.file_size, tile.identity, tile.dst.count() * es)) {
        usable = false;
      }
    } catch (const Error&) {
      usable = false;
    }
  });
  if (!usable) {
    return false;
  }
  opened.sources.resize(index.tiles.size());
  opened.mappings.resize(index.tiles.size());
  for (std::size_t i = 0; i < index.tiles.size(); ++i) {
    const auto& tile = index.tiles[i];
    auto source = std::make_unique<Source>();
    source->file = redacted(objects.urls[i]);
    source->dataset = kTileDataset;
    source->shape = tile.dst.extent;
    source->elem_size = es;
    source->access = RawBytes{reached[i].source, tile.raw_offset};
    opened.sources[i] = std::move(source);
    opened.mappings[i] = {i, Box::whole(tile.dst.extent), tile.dst, tile.checksum, tile.raw_offset};
  }
  return true;
}

}  // namespace h5tile::detail
