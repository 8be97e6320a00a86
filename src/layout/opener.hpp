#pragma once
// The opener: a dataset opened for reading (layout/opened_dataset.hpp), its storage described,
// its sources opened and checked. A dataset stored in one piece (contiguous, chunked, compact,
// external storage) is its own single source; a virtual dataset's sources are opened by
// layout/virtual/ (virtual_open.hpp for local files, remote_sources.hpp for URLs).

#include <string>

#include "hdf5/handle.hpp"
#include "io/location.hpp"
#include "layout/opened_dataset.hpp"

namespace h5tile::detail {

// Opens `dataset` in the file at `location` and resolves a virtual dataset's sources. Throws
// FileNotFound, NotHdf5File, DatasetNotFound, NotADataset, UnsupportedType, VirtualSourceError.
// `file`, where valid, is that file already open (a remote file is then not opened again).
[[nodiscard]] OpenedDataset open_to_read(const Location& location, const std::string& dataset,
                                         const OpenOptions& options, FileHandle file = FileHandle());

}  // namespace h5tile::detail
