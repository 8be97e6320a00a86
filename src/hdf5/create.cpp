#include "hdf5/create.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <h5tile/dataset_info.hpp>
#include <h5tile/error.hpp>

#include "hdf5/file.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

PlistHandle write_access(std::uint64_t alignment, H5F_libver_t low, std::uint64_t threshold) {
  const Hdf5Lock lock;
  PlistHandle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate(file access)"));
  const auto bytes = static_cast<hsize_t>(alignment);
  check(H5Pset_alignment(fapl.get(), threshold == 0 ? bytes : static_cast<hsize_t>(threshold), bytes),
        "H5Pset_alignment");
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

FileHandle create_plain_file(const fs::path& path, bool truncate, bool track_order, std::uint64_t userblock) {
  const Hdf5Lock lock;
  const PlistHandle fcpl(check(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate(file create)"));
  if (track_order) set_track_order(fcpl.get(), true);
  if (userblock > 0) check(H5Pset_userblock(fcpl.get(), userblock), "H5Pset_userblock");
  const hid_t id = H5Fcreate(path.c_str(), truncate ? H5F_ACC_TRUNC : H5F_ACC_EXCL, fcpl.get(), H5P_DEFAULT);
  if (id < 0) {
    throw_hdf5_failure<Hdf5Error>(fmt::format("cannot create HDF5 file '{}'", path.string()));
  }
  return FileHandle(id);
}

namespace {

// A link creation property list for the new link `name`: the groups missing on the way made, and
// the name stored as UTF-8 where it is not ASCII (as h5py stores it; ASCII names stay ASCII).
PlistHandle link_creation(const std::string& name) {
  PlistHandle lcpl(check(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate(link)"));
  check(H5Pset_create_intermediate_group(lcpl.get(), 1), "H5Pset_create_intermediate_group");
  if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    check(H5Pset_char_encoding(lcpl.get(), H5T_CSET_UTF8), "H5Pset_char_encoding");
  }
  return lcpl;
}

}  // namespace

void set_track_order(hid_t cpl, bool links) {
  const Hdf5Lock lock;
  const unsigned flags = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  if (links) check(H5Pset_link_creation_order(cpl, flags), "H5Pset_link_creation_order");
  check(H5Pset_attr_creation_order(cpl, flags), "H5Pset_attr_creation_order");
}

void set_track_times(hid_t cpl, bool track) {
  const Hdf5Lock lock;
  check(H5Pset_obj_track_times(cpl, track ? 1 : 0), "H5Pset_obj_track_times");
}

void set_virtual_layout(hid_t dcpl) {
  const Hdf5Lock lock;
  check(H5Pset_layout(dcpl, H5D_VIRTUAL), "H5Pset_layout(virtual)");
}

void create_group(hid_t location, const std::string& name, bool track_order, std::string_view what) {
  const Hdf5Lock lock;
  const PlistHandle gcpl(check(H5Pcreate(H5P_GROUP_CREATE), "H5Pcreate(group)"));
  if (track_order) set_track_order(gcpl.get(), true);
  const GroupHandle group(
      check(H5Gcreate2(location, name.c_str(), link_creation(name).get(), gcpl.get(), H5P_DEFAULT), what));
}

void create_soft_link(hid_t location, const std::string& name, const std::string& target, std::string_view what) {
  const Hdf5Lock lock;
  check(H5Lcreate_soft(target.c_str(), location, name.c_str(), link_creation(name).get(), H5P_DEFAULT), what);
}

void create_external_link(hid_t location, const std::string& name, const std::string& file, const std::string& target,
                          std::string_view what) {
  const Hdf5Lock lock;
  check(
      H5Lcreate_external(file.c_str(), target.c_str(), location, name.c_str(), link_creation(name).get(), H5P_DEFAULT),
      what);
}

void create_hard_link(hid_t location, const std::string& name, const std::string& target, std::string_view what) {
  const Hdf5Lock lock;
  check(H5Lcreate_hard(location, target.c_str(), location, name.c_str(), link_creation(name).get(), H5P_DEFAULT), what);
}

void move_link(hid_t location, const std::string& from, const std::string& to, std::string_view what) {
  const Hdf5Lock lock;
  check(H5Lmove(location, from.c_str(), location, to.c_str(), link_creation(to).get(), H5P_DEFAULT), what);
}

void copy_object(hid_t source, const std::string& from, hid_t destination, const std::string& to, CopyFlags flags,
                 std::string_view what) {
  const Hdf5Lock lock;
  const PlistHandle ocpypl(check(H5Pcreate(H5P_OBJECT_COPY), "H5Pcreate(object copy)"));
  unsigned options = 0;
  if (flags.shallow) options |= H5O_COPY_SHALLOW_HIERARCHY_FLAG;
  if (flags.expand_soft) options |= H5O_COPY_EXPAND_SOFT_LINK_FLAG;
  if (flags.expand_external) options |= H5O_COPY_EXPAND_EXT_LINK_FLAG;
  if (flags.expand_references) options |= H5O_COPY_EXPAND_REFERENCE_FLAG;
  if (flags.without_attributes) options |= H5O_COPY_WITHOUT_ATTR_FLAG;
  check(H5Pset_copy_object(ocpypl.get(), options), "H5Pset_copy_object");
  check(H5Ocopy(source, from.c_str(), destination, to.c_str(), ocpypl.get(), link_creation(to).get()), what);
}

void set_extent(hid_t dataset, const Shape& shape, std::string_view what) {
  const Hdf5Lock lock;
  const auto dims = hsizes(shape);
  check(H5Dset_extent(dataset, dims.data()), what);
}

void set_compact(hid_t dcpl) {
  const Hdf5Lock lock;
  check(H5Pset_layout(dcpl, H5D_COMPACT), "H5Pset_layout");
}

void set_fill_time(hid_t dcpl, H5D_fill_time_t when) {
  const Hdf5Lock lock;
  check(H5Pset_fill_time(dcpl, when), "H5Pset_fill_time");
}

void set_scale_offset(hid_t dcpl, bool floats, unsigned factor) {
  const Hdf5Lock lock;
  check(H5Pset_scaleoffset(dcpl, floats ? H5Z_SO_FLOAT_DSCALE : H5Z_SO_INT, static_cast<int>(factor)),
        "H5Pset_scaleoffset");
}

void add_external(hid_t dcpl, const std::string& name, std::uint64_t offset, hsize_t size) {
  const Hdf5Lock lock;
  check(H5Pset_external(dcpl, name.c_str(), static_cast<off_t>(offset), size), "H5Pset_external");
}

SpaceHandle make_null_space() {
  const Hdf5Lock lock;
  return SpaceHandle(check(H5Screate(H5S_NULL), "H5Screate(null)"));
}

void set_fill_value(hid_t dcpl, hid_t type, const void* value) {
  const Hdf5Lock lock;
  check(H5Pset_fill_value(dcpl, type, value), "H5Pset_fill_value");
}

SpaceHandle make_space(const Shape& shape, const Shape& max_shape) {
  const Hdf5Lock lock;
  const auto dims = hsizes(shape);
  std::vector<hsize_t> max;
  for (const auto m : max_shape) max.push_back(m == kUnlimitedExtent ? H5S_UNLIMITED : static_cast<hsize_t>(m));
  return SpaceHandle(
      check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max.data()), "H5Screate_simple"));
}

bool link_exists(hid_t location, const std::string& name) {
  const Hdf5Lock lock;
  const htri_t exists = H5Lexists(location, name.c_str(), H5P_DEFAULT);
  if (exists < 0) {
    H5Eclear2(H5E_DEFAULT);
  }
  return exists > 0;
}

std::string non_group_on_the_way(hid_t location, const std::string& name) {
  const Hdf5Lock lock;
  for (auto slash = name.find('/', 1); slash != std::string::npos; slash = name.find('/', slash + 1)) {
    const auto prefix = name.substr(0, slash);
    if (H5Lexists(location, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return {};  // missing from here on: made on the way
    }
    const hid_t object = H5Oopen(location, prefix.c_str(), H5P_DEFAULT);
    if (object < 0) {
      H5Eclear2(H5E_DEFAULT);
      return {};  // a dangling link: HDF5 reports it
    }
    const auto type = H5Iget_type(object);
    H5Oclose(object);
    if (type != H5I_GROUP) return prefix;
  }
  return {};
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
  return DatasetHandle(
      check(H5Dcreate2(file, name.c_str(), type, space, link_creation(name).get(), dcpl, H5P_DEFAULT), what));
}

void commit_type(hid_t file, const std::string& name, hid_t type, std::string_view what) {
  const Hdf5Lock lock;
  check(H5Tcommit2(file, name.c_str(), type, link_creation(name).get(), H5P_DEFAULT, H5P_DEFAULT), what);
}

TypeHandle open_named_type(hid_t file, const std::string& name, std::string_view what) {
  const Hdf5Lock lock;
  return TypeHandle(check(H5Topen2(file, name.c_str(), H5P_DEFAULT), what));
}

}  // namespace h5tile::detail
