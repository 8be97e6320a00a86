#include "hdf5/create.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/file.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

PlistHandle write_access(std::uint64_t alignment, H5F_libver_t low) {
  const Hdf5Lock lock;
  PlistHandle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate(file access)"));
  const auto bytes = static_cast<hsize_t>(alignment);
  check(H5Pset_alignment(fapl.get(), bytes, bytes), "H5Pset_alignment");
  check(H5Pset_libver_bounds(fapl.get(), low, H5F_LIBVER_LATEST), "H5Pset_libver_bounds");
  // A flush that fails inside HDF5 (a full disk) leaves HDF5 1.10.8's cache unable to flush,
  // or to close the file, ever again: nothing is evicted before close.
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

FileHandle create_file_exclusive(const fs::path& path, hid_t fapl) {
  const Hdf5Lock lock;
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl);
  if (id < 0) {
    throw_hdf5_failure<Hdf5Error>(fmt::format("cannot create HDF5 file '{}'", path.string()));
  }
  return FileHandle(id);
}

FileHandle open_file_read_write(const fs::path& path, hid_t fapl) {
  const Hdf5Lock lock;
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl);
  if (id < 0) {
    throw_hdf5_failure<Hdf5Error>(fmt::format("cannot open '{}' for update", path.string()));
  }
  return FileHandle(id);
}

bool link_exists(hid_t location, const std::string& name) {
  const Hdf5Lock lock;
  const htri_t exists = H5Lexists(location, name.c_str(), H5P_DEFAULT);
  if (exists < 0) {
    H5Eclear2(H5E_DEFAULT);
  }
  return exists > 0;
}

void delete_link(hid_t location, const std::string& name, std::string_view what) {
  const Hdf5Lock lock;
  check(H5Ldelete(location, name.c_str(), H5P_DEFAULT), what);
}

PlistHandle dataset_creation() {
  const Hdf5Lock lock;
  return PlistHandle(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(dataset)"));
}

void set_contiguous(hid_t dcpl) {
  const Hdf5Lock lock;
  check(H5Pset_layout(dcpl, H5D_CONTIGUOUS), "H5Pset_layout");
}

void set_chunk(hid_t dcpl, const Shape& chunk) {
  const Hdf5Lock lock;
  const auto dims = hsizes(chunk);
  check(H5Pset_chunk(dcpl, static_cast<int>(dims.size()), dims.data()), "H5Pset_chunk");
}

void add_filter(hid_t dcpl, unsigned id, bool optional, const std::vector<unsigned>& params) {
  const Hdf5Lock lock;
  check(H5Pset_filter(dcpl, static_cast<H5Z_filter_t>(id), optional ? H5Z_FLAG_OPTIONAL : H5Z_FLAG_MANDATORY,
                      params.size(), params.data()),
        "H5Pset_filter");
}

void set_early_allocation(hid_t dcpl) {
  const Hdf5Lock lock;
  check(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  check(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
}

void set_dense_attributes(hid_t dcpl) {
  const Hdf5Lock lock;
  check(H5Pset_attr_phase_change(dcpl, 0, 0), "H5Pset_attr_phase_change");
}

DatasetHandle create_dataset(hid_t file, const std::string& name, hid_t type, hid_t space, hid_t dcpl,
                             std::string_view what) {
  const Hdf5Lock lock;
  const PlistHandle lcpl(check(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate(link)"));
  check(H5Pset_create_intermediate_group(lcpl.get(), 1), "H5Pset_create_intermediate_group");
  return DatasetHandle(check(H5Dcreate2(file, name.c_str(), type, space, lcpl.get(), dcpl, H5P_DEFAULT), what));
}

}  // namespace h5tile::detail
