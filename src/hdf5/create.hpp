#pragma once
// Creating HDF5 files, links and datasets: one checked function per C call (or per fixed
// sequence of property list calls). What h5tile creates, and where, is decided in layout/.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <h5tile/array.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// File access for files h5tile writes: raw data aligned to `alignment` bytes, the 1.8 object
// format (readable by HDF5 1.8 and later, which stores large attributes such as the tile table
// densely), and a metadata cache that keeps everything in memory until the file is closed
// (WritableFile::close: no eviction writes metadata earlier, where a full disk would fail a
// flush inside HDF5).
// `low`: the oldest format version objects are made in (H5F_LIBVER_V18 unless said: HDF5 1.10
// for unfiltered chunked datasets, whose chunks then lie in one block in order, the implicit
// chunk index: ChunkDirectory and the chunked writer find chunk i with no lookup).
[[nodiscard]] PlistHandle write_access(std::uint64_t alignment, H5F_libver_t low = H5F_LIBVER_V18);

// Creates the HDF5 file `path` with access `fapl`; fails where it exists (H5F_ACC_EXCL).
// Throws Hdf5Error (or what throw_hdf5_failure classifies) "cannot create HDF5 file '<path>'".
[[nodiscard]] FileHandle create_file_exclusive(const std::filesystem::path& path, hid_t fapl);

// Opens the HDF5 file `path` read-write with access `fapl`. Throws Hdf5Error (or what
// throw_hdf5_failure classifies) "cannot open '<path>' for update".
[[nodiscard]] FileHandle open_file_read_write(const std::filesystem::path& path, hid_t fapl);

// Whether the link `name` exists at `location` (H5Lexists); false where HDF5 fails, for example
// where a group on the way is missing (HDF5 1.10), with HDF5's error stack cleared.
[[nodiscard]] bool link_exists(hid_t location, const std::string& name);

// Removes the link `name` at `location` (H5Ldelete); throws Hdf5Error "<what>: <reason>".
void delete_link(hid_t location, const std::string& name, std::string_view what);

// A new dataset creation property list.
[[nodiscard]] PlistHandle dataset_creation();

// Contiguous storage (H5Pset_layout).
void set_contiguous(hid_t dcpl);

// Chunked storage with chunks of `chunk` elements (H5Pset_chunk).
void set_chunk(hid_t dcpl, const Shape& chunk);

// Appends filter `id` with client data `params` to the pipeline (H5Pset_filter); `optional`:
// HDF5 may skip it for a chunk (H5Z_FLAG_OPTIONAL). The filter need not be registered.
void add_filter(hid_t dcpl, unsigned id, bool optional, const std::vector<unsigned>& params);

// Space allocated when the dataset is created, and no fill value ever written.
void set_early_allocation(hid_t dcpl);

// Attributes stored densely from the first one (no 64 KiB limit on the object header).
void set_dense_attributes(hid_t dcpl);

// Creates dataset `name` of `type` and `space` at `file`, with the groups missing on its way,
// and creation properties `dcpl` (H5P_DEFAULT: HDF5's defaults). Throws Hdf5Error "<what>: <reason>".
[[nodiscard]] DatasetHandle create_dataset(hid_t file, const std::string& name, hid_t type, hid_t space, hid_t dcpl,
                                           std::string_view what);

}  // namespace h5tile::detail
