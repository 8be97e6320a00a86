#include "layout/file_writer.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/chunk_directory.hpp"
#include "hdf5/create.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "hdf5/links.hpp"
#include "hdf5/types.hpp"
#include "hdf5/virtual.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

// Files h5tile writes have their raw data aligned, the 1.8 object format and their metadata in
// memory until WritableFile::close() (hdf5/create.hpp).
WritableFile create_file(const fs::path& path, std::uint64_t alignment, H5F_libver_t low) {
  const Hdf5Lock lock;
  const auto fapl = write_access(alignment, low);
  return {create_file_exclusive(path, fapl.get()), path};
}

WritableFile reopen_file(const fs::path& path, std::uint64_t alignment) {
  const Hdf5Lock lock;
  const auto fapl = write_access(alignment);
  return {open_file_read_write(path, fapl.get()), path};
}

WritableFile open_for_update(const fs::path& path, const std::string& dataset, std::uint64_t alignment,
                             H5F_libver_t low) {
  (void)open_local_file(path, true);  // the checks and messages of a read-write open
  const Hdf5Lock lock;
  const auto fapl = write_access(alignment, low);
  WritableFile file(open_file_read_write(path, fapl.get()), path);
  check_replaceable(file.get(), dataset, path);
  if (link_exists(file.get(), "/")) {
    // Remove the dataset if present; a missing intermediate group is not an error.
    std::string prefix;
    std::size_t pos = 1;
    bool present = true;
    while (present && pos <= dataset.size()) {
      const auto slash = std::min(dataset.find('/', pos), dataset.size());
      prefix = dataset.substr(0, slash);
      present = link_exists(file.get(), prefix);
      pos = slash + 1;
    }
    if (present) {
      delete_link(file.get(), dataset, fmt::format("cannot replace '{}' in '{}'", dataset, path.string()));
    }
  }
  return file;
}

std::uint64_t create_raw_dataset(hid_t file, const std::string& name, DType dtype, const Shape& shape) {
  const Hdf5Lock lock;
  const auto type = make_type(dtype);
  const auto space = make_space(shape);
  const auto dcpl = dataset_creation();
  set_contiguous(dcpl.get());
  set_early_allocation(dcpl.get());
  const auto dataset =
      create_dataset(file, name, type.get(), space.get(), dcpl.get(), fmt::format("cannot create dataset '{}'", name));
  const auto offset = raw_offset(dataset.get(), type.get());
  if (!offset) {
    throw Hdf5Error(fmt::format("HDF5 allocated no contiguous storage for dataset '{}'", name));
  }
  return *offset;
}

DatasetHandle create_chunked_dataset(hid_t file, const std::string& name, DType dtype, const Shape& shape,
                                     const Shape& chunk, bool allocate_now, const std::vector<FilterSpec>& filters) {
  const Hdf5Lock lock;
  const auto type = make_type(dtype);
  const auto space = make_space(shape);
  const auto dcpl = dataset_creation();
  set_chunk(dcpl.get(), chunk);
  if (allocate_now) {
    set_early_allocation(dcpl.get());
  }
  for (const auto& f : filters) {
    add_filter(dcpl.get(), f.id, f.optional, f.params);
  }
  return create_dataset(file, name, type.get(), space.get(), dcpl.get(),
                        fmt::format("cannot create chunked dataset '{}'", name));
}

std::vector<std::optional<StoredChunk>> stored_chunks_in(hid_t file, const std::string& shown, const std::string& name,
                                                         const std::vector<Shape>& origins) {
  const auto dataset = open_dataset(file, name, shown, GuardedLinks({}));  // a file just written
  return stored_chunks(dataset.get(), origins);
}

std::vector<std::uint64_t> chunk_addresses(hid_t file, const std::string& shown, const std::string& name,
                                           const std::vector<Shape>& origins) {
  const auto found = stored_chunks_in(file, shown, name, origins);
  std::vector<std::uint64_t> addresses;
  addresses.reserve(origins.size());
  for (std::size_t i = 0; i < origins.size(); ++i) {
    if (!found[i]) {
      throw Hdf5Error(
          fmt::format("the chunk at {} of '{}' in '{}' has no space in the file", to_string(origins[i]), name, shown));
    }
    addresses.push_back(found[i]->offset);
  }
  return addresses;
}

void create_dataset_with(hid_t file, const std::string& name, DType dtype, const Shape& shape, const void* data) {
  const Hdf5Lock lock;
  const auto type = make_type(dtype);
  const auto space = make_space(shape);
  const auto dataset =
      create_dataset(file, name, type.get(), space.get(), H5P_DEFAULT, fmt::format("cannot create dataset '{}'", name));
  if (element_count(shape) > 0) {
    hdf5_write_all(dataset.get(), type.get(), data);
  }
}

void create_virtual_dataset(hid_t file, const std::string& name, DType dtype, const Shape& shape,
                            const std::vector<IndexedTile>& tiles, bool with_index) {
  const Hdf5Lock lock;
  const auto type = make_type(dtype);
  const auto space = make_space(shape);
  const auto dcpl = dataset_creation();
  set_dense_attributes(dcpl.get());  // the tile index has no 64 KiB limit
  for (const auto& tile : tiles) {
    const auto vspace = make_space(shape);
    select_box(vspace.get(), tile.dst);
    const auto src_space = make_space(tile.dst.extent);
    // Stored escaped: a '%' in the file's name or its folders is not a pattern (virtual_map.hpp).
    add_virtual_mapping(dcpl.get(), vspace.get(), escape_source_name(tile.file), escape_source_name(kTileDataset),
                        src_space.get(), fmt::format("cannot map '{}' into virtual dataset '{}'", tile.file, name));
  }
  const auto dataset = create_dataset(file, name, type.get(), space.get(), dcpl.get(),
                                      fmt::format("cannot create virtual dataset '{}'", name));
  if (with_index && !tiles.empty()) {
    write_tile_index(dataset.get(), type.get(), shape, tiles);
  }
}

}  // namespace h5tile::detail
