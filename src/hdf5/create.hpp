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
// `threshold`: only what is allocated in blocks of at least this many bytes is aligned (0: the
// alignment; HDF5 aligns everything at least as large as the threshold).
[[nodiscard]] PlistHandle write_access(std::uint64_t alignment, H5F_libver_t low = H5F_LIBVER_V18,
                                       std::uint64_t threshold = 0);

// Creates the HDF5 file `path` with access `fapl`; fails where it exists (H5F_ACC_EXCL).
// Throws Hdf5Error (or what throw_hdf5_failure classifies) "cannot create HDF5 file '<path>'".
[[nodiscard]] FileHandle create_file_exclusive(const std::filesystem::path& path, hid_t fapl);

// Opens the HDF5 file `path` read-write with access `fapl`. Throws Hdf5Error (or what
// throw_hdf5_failure classifies) "cannot open '<path>' for update".
[[nodiscard]] FileHandle open_file_read_write(const std::filesystem::path& path, hid_t fapl);

// Creates the HDF5 file `path` with HDF5's default access (as h5py's File(path, "w") or "x"):
// replacing what is there where `truncate` (H5F_ACC_TRUNC), else failing where it exists
// (H5F_ACC_EXCL); link and attribute creation order tracked and indexed on the root group where
// `track_order`; a user block of `userblock` bytes (0: none). Throws as create_file_exclusive.
[[nodiscard]] FileHandle create_plain_file(const std::filesystem::path& path, bool truncate, bool track_order,
                                           std::uint64_t userblock);

// Creates group `name` at `location` with the groups missing on its way; link and attribute
// creation order tracked and indexed where `track_order`. Throws Hdf5Error "<what>: <reason>".
void create_group(hid_t location, const std::string& name, bool track_order, std::string_view what);

// A new link `name` at `location` (groups missing on its way made): soft, to the path `target`
// (H5Lcreate_soft); external, to `target` in `file` (H5Lcreate_external); hard, to the object
// that `target` names at `location` (H5Lcreate_hard). Throws Hdf5Error "<what>: <reason>".
void create_soft_link(hid_t location, const std::string& name, const std::string& target, std::string_view what);
void create_external_link(hid_t location, const std::string& name, const std::string& file, const std::string& target,
                          std::string_view what);
void create_hard_link(hid_t location, const std::string& name, const std::string& target, std::string_view what);

// Moves link `from` to `to` at `location` (H5Lmove; groups missing on the way made).
void move_link(hid_t location, const std::string& from, const std::string& to, std::string_view what);

// How H5Ocopy copies (H5Pset_copy_object's flags).
struct CopyFlags {
  bool shallow = false;            // a group's members are not copied
  bool expand_soft = false;        // soft links are copied as the objects they lead to
  bool expand_external = false;    // external links too
  bool expand_references = false;  // objects references lead to are copied, the references updated
  bool without_attributes = false;
};
// Copies the object `from` at `source` to `to` at `destination` (another file's, or the same).
void copy_object(hid_t source, const std::string& from, hid_t destination, const std::string& to, CopyFlags flags,
                 std::string_view what);

// Changes `dataset`'s shape to `shape` (H5Dset_extent: within its maximum shape).
void set_extent(hid_t dataset, const Shape& shape, std::string_view what);

// Track and index the creation order of links (a group's) and of attributes (any object's) in
// creation property list `cpl` (h5py's track_order=True).
void set_track_order(hid_t cpl, bool links);

// Whether the object made with the creation property list `cpl` records its times (HDF5's
// default; h5py's is not to, which keeps a file's bytes the same for the same content).
void set_track_times(hid_t cpl, bool track);

// The virtual layout, set before any mapping is added: a virtual dataset without mappings (every
// element its fill value) stays virtual, as h5py makes it.
void set_virtual_layout(hid_t dcpl);

// Compact storage (H5Pset_layout; the data in the object header, at most 64 KiB).
void set_compact(hid_t dcpl);

// When the fill value is written (H5Pset_fill_time).
void set_fill_time(hid_t dcpl, H5D_fill_time_t when);

// HDF5's scale-offset filter (H5Pset_scaleoffset): integers keep `factor` bits (0: HDF5 decides),
// floats `factor` decimal digits.
void set_scale_offset(hid_t dcpl, bool floats, unsigned factor);

// A file of external storage (H5Pset_external): `size` bytes of it from `offset` (H5F_UNLIMITED:
// as many as needed).
void add_external(hid_t dcpl, const std::string& name, std::uint64_t offset, hsize_t size);

// A null dataspace (no elements: h5py's Empty).
[[nodiscard]] SpaceHandle make_null_space();

// The fill value: one element of `type` at `value` (H5Pset_fill_value).
void set_fill_value(hid_t dcpl, hid_t type, const void* value);

// Whether the link `name` exists at `location` (H5Lexists); false where HDF5 fails, for example
// where a group on the way is missing (HDF5 1.10), with HDF5's error stack cleared.
[[nodiscard]] bool link_exists(hid_t location, const std::string& name);

// The first group on the way to `name` (the parts of the path before its last) that exists and
// is not a group (a dataset or a named datatype), or "" where there is none.
[[nodiscard]] std::string non_group_on_the_way(hid_t location, const std::string& name);

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

// Commits `type` as the named datatype `name` at `file`, with the groups missing on its way
// (H5Tcommit2). Throws Hdf5Error "<what>: <reason>".
void commit_type(hid_t file, const std::string& name, hid_t type, std::string_view what);

// The named datatype `name` at `file` (H5Topen2): a dataset made with it links to it, as h5py's.
[[nodiscard]] TypeHandle open_named_type(hid_t file, const std::string& name, std::string_view what);

// A simple dataspace of `shape` whose maximum shape is `max_shape` (kUnlimitedExtent: unlimited).
[[nodiscard]] SpaceHandle make_space(const Shape& shape, const Shape& max_shape);

}  // namespace h5tile::detail
