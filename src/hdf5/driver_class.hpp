#pragma once
// What h5tile's HDF5 virtual file drivers (remote_driver.cpp, upload_driver.cpp) share of their
// class: the fields HDF5 1.10 through 1.14 need set alike, and the file access property list's
// driver information (a `Config`, copied and freed by HDF5).

#include <hdf5.h>
#if H5_VERSION_GE(1, 14, 0)
#include <H5FDdevelop.h>
#endif

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>

namespace h5tile::detail {

template <typename Config>
void* copy_driver_config(const void* info) {
  return new Config(*static_cast<const Config*>(info));
}

template <typename Config>
herr_t free_driver_config(void* info) {
  delete static_cast<Config*>(info);
  return 0;
}

// A driver class named `name` (in HDF5 1.14 numbered `value`, from the range HDF5 leaves to its
// users' drivers), its driver information a `Config`, 63-bit addresses, weak close, one free list
// for metadata and one for raw data. The caller sets the callbacks (and fapl_get).
template <typename Config>
H5FD_class_t driver_class(const char* name, [[maybe_unused]] int value) {
  H5FD_class_t c{};
#if H5_VERSION_GE(1, 14, 0)
  c.version = H5FD_CLASS_VERSION;
  c.value = static_cast<H5FD_class_value_t>(value);
#endif
  c.name = name;
  c.maxaddr = static_cast<haddr_t>(std::numeric_limits<std::int64_t>::max());
  c.fc_degree = H5F_CLOSE_WEAK;
  c.fapl_size = sizeof(Config);
  c.fapl_copy = copy_driver_config<Config>;
  c.fapl_free = free_driver_config<Config>;
  const H5FD_mem_t map[] = H5FD_FLMAP_DICHOTOMY;
  std::copy(std::begin(map), std::end(map), std::begin(c.fl_map));
  return c;
}

// `id`, the ID of the driver `cls` registered with HDF5: registered at first use, and again where
// HDF5 was closed and restarted (its IDs then no longer valid). Returns whether it registered now.
// Call under HDF5's lock.
inline bool register_driver(const H5FD_class_t& cls, hid_t& id) {
  if (id >= 0 && H5Iis_valid(id) > 0) return false;
  id = H5FDregister(&cls);
  return id >= 0;
}

}  // namespace h5tile::detail
