#pragma once
// The files other than a virtual dataset's sources that reading a dataset reads: the file an
// external link leads HDF5 to, and HDF5 external storage (H5Pset_external). The rule for virtual
// sources (allow_external_sources) holds for them too: outside the folder of the file that
// was asked for, they are read only when allowed.

#include <filesystem>
#include <string>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// Throws VirtualSourceError naming the file when dataset `name` of `file` (the file asked for,
// or a virtual source of it), open as `dataset`, holds data in a file outside the folder of
// `path` (the file asked for): the file HDF5 opened for it (an external link), or a file of its
// external storage (resolved as HDF5 1.10 resolves it: against `extfile_prefix`, the value of
// HDF5_EXTFILE_PREFIX, where "${ORIGIN}" is the folder of the dataset's file, else against the
// working folder).
void check_data_files_inside(const std::filesystem::path& path, const std::filesystem::path& file,
                             const std::string& name, hid_t dataset, hid_t dcpl, const std::string& extfile_prefix);

}  // namespace h5tile::detail
