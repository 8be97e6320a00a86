#pragma once
// The files other than a virtual dataset's sources that reading a dataset reads: the file an
// external link leads HDF5 to, and HDF5 external storage (H5Pset_external). The rule for virtual
// sources (allow_external_sources) holds for them too: outside the folder of the file that
// was asked for, they are read only when allowed.

#include <filesystem>
#include <optional>
#include <string>

#include "hdf5/handle.hpp"
#include "hdf5/links.hpp"
#include "io/location.hpp"

namespace h5tile::detail {

// Throws VirtualSourceError naming the file when dataset `name` of `file` (the file asked for,
// or a virtual source of it), open as `dataset`, holds data in a file that HDF5 would block on or
// misread (a FIFO, a device: anything but a regular file) or, unless `allow_external`, in a file
// outside the folder of `path` (the file asked for): the file HDF5 opened for it (an external
// link), or a file of its external storage (resolved as HDF5 1.10 resolves it: against
// `extfile_prefix`, the value of HDF5_EXTFILE_PREFIX, where "${ORIGIN}" is the folder of the
// dataset's file, else against the working folder). HDF5 opens external storage files itself, by
// path, as it reads: this runs before anything reads the dataset.
void check_data_files(const std::filesystem::path& path, const std::filesystem::path& file, const std::string& name,
                      hid_t dataset, hid_t dcpl, const std::string& extfile_prefix, bool allow_external);

// The file HDF5 1.10 opens for an external link to `stored` from a link in `parent` (the file
// holding the link, as HDF5 names it), as H5F_prefix_open_file searches: an absolute name as it
// is, and where nothing is there its last component as a relative name; a relative name under
// each prefix of `ext_prefix` (HDF5_EXT_PREFIX, ':'-separated; the link access list's prefix is
// never set by h5tile), in the folder of `parent`, then from the working folder. The first that
// exists and is not a directory (HDF5 fails to open a directory and goes on); nullopt where none
// is.
[[nodiscard]] std::optional<std::filesystem::path> external_link_target(const std::filesystem::path& parent,
                                                                        const std::string& stored,
                                                                        const std::string& ext_prefix);

// The check of every external link that opening a dataset of `file` follows (hdf5/links.hpp),
// run before HDF5 opens the link's target: a target that is not a regular file (a FIFO would
// block HDF5's open for ever) is refused, and so, unless `allow_external`, is one outside the
// folder of `file`. VirtualSourceError names the link, its file and what is wrong. Where `file`
// is remote, every external link is refused (VirtualSourceError saying so).
[[nodiscard]] ExternalLinkCheck external_link_check(const Location& file, bool allow_external, std::string ext_prefix);

// Throws VirtualSourceError where `file` exists and is not a regular file, before HDF5 opens it
// by path: "<what> '<file>', which is a FIFO (named pipe), not a regular file: ...".
void check_regular_file(const std::filesystem::path& file, const std::string& what);

}  // namespace h5tile::detail
