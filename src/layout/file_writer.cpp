#include "layout/file_writer.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;
namespace {

PlistHandle intermediate_groups() {
  PlistHandle lcpl(check(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate(link)"));
  check(H5Pset_create_intermediate_group(lcpl.get(), 1), "H5Pset_create_intermediate_group");
  return lcpl;
}

}  // namespace

// File access for files h5tile writes: aligned raw data, and the 1.8 object format (readable
// by HDF5 1.8 and later), which stores large attributes such as the tile table densely.
PlistHandle write_access() {
  PlistHandle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate(file access)"));
  const auto alignment = static_cast<hsize_t>(settings::alignment());
  check(H5Pset_alignment(fapl.get(), alignment, alignment), "H5Pset_alignment");
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST), "H5Pset_libver_bounds");
  // The metadata stays in memory until WritableFile::close() has reserved the file's space and
  // flushes it: no eviction writes it earlier, where a full disk would fail a flush inside HDF5
  // (which leaves HDF5 1.10.8's cache unable to flush, or to close the file, ever again).
  H5AC_cache_config_t cache{};
  cache.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  check(H5Pget_mdc_config(fapl.get(), &cache), "H5Pget_mdc_config");
  cache.evictions_enabled = false;
  cache.incr_mode = H5C_incr__off;
  cache.flash_incr_mode = H5C_flash_incr__off;
  cache.decr_mode = H5C_decr__off;
  check(H5Pset_mdc_config(fapl.get(), &cache), "H5Pset_mdc_config");
  return fapl;
}

WritableFile create_file(const fs::path& path) {
  const Hdf5Lock lock;
  const auto fapl = write_access();
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get());
  if (id < 0) {
    throw_hdf5_failure<Hdf5Error>(fmt::format("cannot create HDF5 file '{}'", path.string()));
  }
  return {FileHandle(id), path};
}

WritableFile open_for_update(const fs::path& path, const std::string& dataset) {
  (void)open_file(path, true);  // the checks and messages of a read-write open
  const Hdf5Lock lock;
  const auto fapl = write_access();
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get());
  if (id < 0) {
    throw_hdf5_failure<Hdf5Error>(fmt::format("cannot open '{}' for update", path.string()));
  }
  WritableFile file(FileHandle(id), path);
  check_replaceable(file.get(), dataset, path);
  if (H5Lexists(file.get(), "/", H5P_DEFAULT) > 0) {
    // Remove the dataset if present; a missing intermediate group is not an error.
    std::string prefix;
    std::size_t pos = 1;
    bool present = true;
    while (present && pos <= dataset.size()) {
      const auto slash = std::min(dataset.find('/', pos), dataset.size());
      prefix = dataset.substr(0, slash);
      present = H5Lexists(file.get(), prefix.c_str(), H5P_DEFAULT) > 0;
      pos = slash + 1;
    }
    H5Eclear2(H5E_DEFAULT);
    if (present) {
      check(H5Ldelete(file.get(), dataset.c_str(), H5P_DEFAULT),
            fmt::format("cannot replace '{}' in '{}'", dataset, path.string()));
    }
  }
  return file;
}

std::uint64_t create_raw_dataset(hid_t file, const std::string& name, DType dtype, const Shape& shape) {
  const Hdf5Lock lock;
  const auto type = make_type(dtype);
  const auto space = make_space(shape);
  const PlistHandle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(dataset)"));
  check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  const auto lcpl = intermediate_groups();
  const DatasetHandle dataset(
      check(H5Dcreate2(file, name.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
            fmt::format("cannot create dataset '{}'", name)));
  const auto offset = raw_offset(dataset.get(), type.get());
  if (!offset) {
    throw Hdf5Error(fmt::format("HDF5 allocated no contiguous storage for dataset '{}'", name));
  }
  return *offset;
}

DatasetHandle create_chunked_dataset(hid_t file, const std::string& name, DType dtype, const Shape& shape,
                                     const Shape& chunk, bool allocate_now) {
  const Hdf5Lock lock;
  const auto type = make_type(dtype);
  const auto space = make_space(shape);
  const PlistHandle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(dataset)"));
  const auto dims = hsizes(chunk);
  check(H5Pset_chunk(dcpl.get(), static_cast<int>(dims.size()), dims.data()), "H5Pset_chunk");
  if (allocate_now) {
    check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
    check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  }
  const auto lcpl = intermediate_groups();
  return DatasetHandle(
      check(H5Dcreate2(file, name.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
            fmt::format("cannot create chunked dataset '{}'", name)));
}

std::vector<std::uint64_t> chunk_addresses(const fs::path& path, const std::string& name,
                                           const std::vector<Shape>& origins) {
  const auto file = open_file(path);
  const auto dataset = open_dataset(file.get(), name, path);
  const auto found = locate_chunks(dataset.get(), origins);
  std::vector<std::uint64_t> addresses;
  addresses.reserve(origins.size());
  for (std::size_t i = 0; i < origins.size(); ++i) {
    if (!found[i]) {
      throw Hdf5Error(fmt::format("the chunk at {} of '{}' in '{}' has no space in the file", to_string(origins[i]),
                                  name, path.string()));
    }
    addresses.push_back(*found[i]);
  }
  return addresses;
}

void write_chunk(hid_t dataset, const Shape& offset, const void* data, std::size_t bytes) {
  const Hdf5Lock lock;
  const auto start = hsizes(offset);
  check(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, start.data(), bytes, data), "H5Dwrite_chunk");
}

void create_dataset_with(hid_t file, const std::string& name, DType dtype, const Shape& shape, const void* data) {
  const Hdf5Lock lock;
  const auto type = make_type(dtype);
  const auto space = make_space(shape);
  const auto lcpl = intermediate_groups();
  const DatasetHandle dataset(
      check(H5Dcreate2(file, name.c_str(), type.get(), space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
            fmt::format("cannot create dataset '{}'", name)));
  if (element_count(shape) > 0) {
    hdf5_write_all(dataset.get(), type.get(), data);
  }
}

void create_virtual_dataset(hid_t file, const std::string& name, DType dtype, const Shape& shape,
                            const std::vector<IndexedTile>& tiles) {
  const Hdf5Lock lock;
  const auto type = make_type(dtype);
  const auto space = make_space(shape);
  const PlistHandle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(dataset)"));
  check(H5Pset_attr_phase_change(dcpl.get(), 0, 0), "H5Pset_attr_phase_change");  // dense: no 64 KiB limit
  for (const auto& tile : tiles) {
    const auto vspace = make_space(shape);
    select_box(vspace.get(), tile.dst);
    const auto src_space = make_space(tile.dst.extent);
    // Stored escaped: a '%' in the file's name or its folders is not a pattern (virtual_map.hpp).
    check(H5Pset_virtual(dcpl.get(), vspace.get(), escape_source_name(tile.file).c_str(),
                         escape_source_name(kTileDataset).c_str(), src_space.get()),
          fmt::format("cannot map '{}' into virtual dataset '{}'", tile.file, name));
  }
  const auto lcpl = intermediate_groups();
  const DatasetHandle dataset(
      check(H5Dcreate2(file, name.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
            fmt::format("cannot create virtual dataset '{}'", name)));
  if (!tiles.empty()) {
    write_tile_index(dataset.get(), type.get(), shape, tiles);
  }
}

}  // namespace h5tile::detail
