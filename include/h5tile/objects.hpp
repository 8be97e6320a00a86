#pragma once
/// @file
/// What a file holds besides array data: its groups and datasets, and the attributes of each
/// object (what h5py's `keys()`, `visit()` and `.attrs` show).

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <h5tile/array.hpp>
#include <h5tile/dataset_info.hpp>
#include <h5tile/object_types.hpp>
#include <h5tile/options.hpp>

namespace h5tile {

/// Every group, dataset and named datatype reachable from the root group of `path` (the root
/// itself excluded), each once, depth first in name order ("/a", "/a/x", "/b"). Reads metadata
/// only; external links are not followed. `path` may be a URL (see io.hpp).
/// Throws FileNotFound, NotHdf5File, IoError.
[[nodiscard]] std::vector<ObjectEntry> list_objects(const std::filesystem::path& path);

/// The links of every group of `path` reached through hard links from its root, each group once
/// (however many names lead to it), the root first. Soft and external links are listed, never
/// followed (no other file is opened). Reads metadata only; `path` may be a URL.
/// Throws FileNotFound, NotHdf5File, IoError.
[[nodiscard]] std::vector<GroupLinks> list_links(const std::filesystem::path& path);

/// The links of one group of `path`, the group at `group` (soft links on the way followed as
/// HDF5 follows them; external ones refused): what list_links lists for it, without reading the
/// other groups (a group's keys in a file of many groups). `path` (of the result) is `group`.
/// Throws FileNotFound, NotHdf5File, IoError; NotADataset where `group` leads to no group.
[[nodiscard]] GroupLinks list_group_links(const std::filesystem::path& path, const std::string& group);

/// The named datatype `name` of `path`. Throws DatasetNotFound where there is none,
/// NotADataset where `name` is another kind of object, UnsupportedType for a type h5tile does
/// not read (naming it).
[[nodiscard]] NamedType describe_named_type(const std::filesystem::path& path, const std::string& name);

/// Where the external link `link` of `path` leads (a link of `path` itself: every part before
/// its last leads through `path`'s own groups), under the rules of every external link h5tile
/// follows: the target must be a regular file and, unless `allow_external`, inside the folder of
/// `path`. Throws VirtualSourceError naming the link where it is refused (and for any link of a
/// remote file), DatasetNotFound where there is no such link or its file does not exist,
/// InvalidArgument where `link` is no external link.
[[nodiscard]] ExternalTarget external_link_target(const std::filesystem::path& path, const std::string& link,
                                                  bool allow_external);

/// The attributes of the group or dataset `object` ("/" for the root group) in `path`, in h5py's
/// order: creation order where the object tracks it (h5py's track_order), else name order. An attribute of a type
/// h5tile does not read is listed as Unsupported; the others still read. Throws FileNotFound, NotHdf5File,
/// DatasetNotFound (no such object).
[[nodiscard]] std::vector<Attribute> read_attributes(const std::filesystem::path& path, const std::string& object);

/// The attributes of each of `objects`, in order, as read_attributes reads them, with the file
/// opened once for all (for a URL: its first block and metadata fetched once, not once an object).
/// Throws as read_attributes for the first object that fails.
[[nodiscard]] std::vector<std::vector<Attribute>> read_attributes_of_each(const std::filesystem::path& path,
                                                                          const std::vector<std::string>& objects);

/// Creates attribute `name` of `object` in the existing local file `path`, replacing one of
/// that name: numbers of `value`'s dtype and shape (host memory; an empty shape for a scalar),
/// stored as h5py stores that dtype. Changes the file in place (as h5py does), after the
/// writes of `path` this process started. Throws FileNotFound, DatasetNotFound (no such
/// object), InvalidArgument (a URL, device memory, an empty name).
void write_attribute(const std::filesystem::path& path, const std::string& object, const std::string& name,
                     const ArrayView& value);

/// As above, for strings of `shape` (row-major; an empty shape for one string): variable-length
/// UTF-8 (h5py's `str`) where `fixed_width` is 0, else fixed-length, NUL-padded to
/// `fixed_width` bytes (h5py's `bytes`; a longer string is InvalidArgument).
void write_attribute(const std::filesystem::path& path, const std::string& object, const std::string& name,
                     const std::vector<std::string>& strings, const Shape& shape, std::size_t fixed_width = 0);

/// As above, an attribute with no value (a null dataspace, h5py's `Empty`) of type `dtype`.
void write_empty_attribute(const std::filesystem::path& path, const std::string& object, const std::string& name,
                           DType dtype);

/// Removes attribute `name` of `object` in place. Throws DatasetNotFound where the object or
/// the attribute does not exist.
void delete_attribute(const std::filesystem::path& path, const std::string& object, const std::string& name);

/// How create_file makes a file (h5py's File keywords of the same names).
struct FileCreation {
  bool track_order = false;          ///< the root group tracks the creation order of links and attributes
  std::uint64_t userblock_size = 0;  ///< bytes before the HDF5 data (0, or a power of two >= 512)
};

/// An empty HDF5 file at the local `path`, as h5py's File(path, "w") (`exclusive` false: what is
/// there is replaced, after the writes of `path` this process started) and File(path, "x")
/// (`exclusive`: FileExists where anything is at `path`). Throws InvalidArgument (a URL; a
/// directory, device, FIFO or socket at `path`, naming what it is), FileNotFound (no folder).
void create_file(const std::filesystem::path& path, bool exclusive, const FileCreation& options = {});

/// Creates group `group` (an absolute path) in the local file `path`, with the groups missing on
/// its way (h5py's create_group); it tracks the creation order of its links and attributes
/// where `track_order`. Throws InvalidArgument where the name exists or a part of its path is a
/// dataset, FileNotFound, NotHdf5File.
void create_group(const std::filesystem::path& path, const std::string& group, bool track_order = false);

/// Removes the link `name` (h5py's `del group[name]`): the object stays while another link
/// leads to it. Throws DatasetNotFound where there is no such link.
void delete_link(const std::filesystem::path& path, const std::string& name);

/// Renames the link `from` to `to` (h5py's move). Throws DatasetNotFound where `from` does
/// not exist, InvalidArgument where `to` does.
void move_link(const std::filesystem::path& path, const std::string& from, const std::string& to);

/// Makes the link `name` in the local file `path`, as `link` describes it (its `name` is not
/// used): soft, to the path `link.target`; external, to `link.target` in `link.file`; hard, to
/// the object the path `link.target` leads to in this file (h5py's `group[name] = obj`). Throws
/// InvalidArgument where `name` exists, DatasetNotFound where a hard link's target does not.
void create_link(const std::filesystem::path& path, const std::string& name, const Link& link);

/// How copy_object copies (h5py's Group.copy keywords).
struct CopyOptions {
  bool shallow = false;             ///< a group's members are not copied
  bool expand_soft = false;         ///< soft links become copies of what they lead to
  bool expand_external = false;     ///< external links too
  bool expand_references = false;   ///< objects that references lead to are copied too
  bool without_attributes = false;  ///< attributes are not copied
};

/// Copies the group or dataset `from` of the local file `source` to `to` in the local file
/// `destination` (the same file, or another existing one), as HDF5's H5Ocopy copies it (h5py's
/// Group.copy). Throws DatasetNotFound where `from` does not exist, InvalidArgument where `to`
/// does.
void copy_object(const std::filesystem::path& source, const std::string& from, const std::filesystem::path& destination,
                 const std::string& to, const CopyOptions& options = {});

/// Changes the shape of the chunked dataset `dataset` to `shape`, within its maximum shape
/// (h5py's Dataset.resize): elements past the old shape read as the fill value. Throws
/// UnsupportedType for a dataset that is not chunked, InvalidArgument for a shape of another
/// rank or past the maximum shape.
void resize_dataset(const std::filesystem::path& path, const std::string& dataset, const Shape& shape);

/// When HDF5 writes the fill value into a dataset's storage (H5Pset_fill_time; h5py's fill_time).
enum class FillTime : unsigned char {
  IfSet,  ///< when storage is allocated, where a fill value was set (HDF5's and h5py's default)
  Alloc,  ///< whenever storage is allocated
  Never,  ///< never: elements never written hold whatever the storage held
};

/// One file of a dataset stored in external files (H5Pset_external; h5py's `external`).
struct ExternalFile {
  std::string name;                       ///< as HDF5 takes it (relative names: to the process's folder)
  std::uint64_t offset = 0;               ///< where the dataset's bytes start in it
  std::uint64_t size = kUnlimitedExtent;  ///< bytes of it used; kUnlimitedExtent: as many as needed
};

/// What create_dataset makes (h5py's create_dataset keywords).
struct DatasetCreation {
  DType dtype{DTypeKind::Float32};
  /// A compound, enum, array, tagged or big-endian type: the NumPy dtype h5py stores it as, in the
  /// JSON form of DatasetInfo::numpy_type (also a type string such as ">i4"); `dtype` is then
  /// opaque bytes of its size (DType::opaque). Empty: the type of `dtype`.
  std::string numpy_type;
  /// Strings (dtype S<n> or object, that is variable-length): their character set, "ascii" (also
  /// empty) or "utf-8", as h5py stores bytes and str.
  std::string charset;
  /// A named datatype of the same file (an absolute path): the dataset's type is it, linked to it
  /// as h5py links a dataset made with `dtype=f[name]`; `dtype` must have its size.
  std::string named_type;
  Shape shape;
  Shape max_shape;  ///< empty: `shape`; kUnlimitedExtent for an axis without limit
  Shape chunk;      ///< empty: contiguous (or compact); needed with filters or a max shape
  Compression compression{};
  bool compact = false;               ///< the data in the object header (at most 64 KiB)
  std::vector<std::byte> fill_value;  ///< one element of `dtype` (object: the string's bytes), or empty: zeros
  bool track_order = false;
  /// Whether the dataset records its times (HDF5's default); not, as h5py makes datasets, so
  /// that the same content makes the same bytes.
  bool track_times = false;
  FillTime fill_time = FillTime::IfSet;
  /// HDF5's scale-offset filter before the others: integers keep this many bits (0: as many as
  /// HDF5 finds the chunk needs), floats this many decimal digits (D-scale; lossy). Needs chunks.
  std::optional<unsigned> scale_offset;
  std::vector<ExternalFile> external;  ///< contiguous data kept in these files instead of this one
  bool null_space = false;             ///< no elements at all (h5py's Empty); `shape` must be empty
};

/// Creates the empty dataset `dataset` (an absolute path; groups missing on its way made) in the
/// local file `path`: its elements read as the fill value until written (write_into writes
/// them, in parallel). Throws InvalidArgument where the name exists, a part of its path is a
/// dataset, or the creation does not fit together (a chunk of another rank, a max shape below the
/// shape, filters without chunks), FileNotFound, NotHdf5File.
void create_dataset(const std::filesystem::path& path, const std::string& dataset, const DatasetCreation& creation);

/// One mapping of a virtual dataset made by create_virtual_dataset: a part of it that a part of a
/// source dataset fills. Each part is a dataspace with its selection in HDF5's own encoding
/// (H5Sencode; h5py's `SpaceID.encode()`), so that any selection HDF5 maps is taken.
struct VirtualMapping {
  std::vector<std::byte> selection;         ///< the virtual dataset's part (its dataspace, selected)
  std::string file;                         ///< the source file as HDF5 stores it ("." for this file)
  std::string dataset;                      ///< the source dataset's path in it
  std::vector<std::byte> source_selection;  ///< the source's part (its dataspace, selected)
};

/// Creates the virtual dataset `dataset` (groups missing on its way made) in the local file `path`
/// (h5py's create_virtual_dataset): of `creation`'s type, shape, maximum shape and fill value
/// (its storage fields are not used), made of `mappings`, which HDF5 checks (a mapping whose two
/// parts differ in size: InvalidArgument naming it). Reads follow the sources under the same
/// confinement as every virtual dataset's. Throws InvalidArgument where the name exists.
void create_virtual_dataset(const std::filesystem::path& path, const std::string& dataset,
                            const DatasetCreation& creation, const std::vector<VirtualMapping>& mappings);

/// Commits the named datatype `name` (an absolute path; groups missing on its way made) in the
/// local file `path`, as h5py's `group[name] = numpy.dtype(...)` does: the type that `type`'s
/// `dtype`, `numpy_type` and `charset` describe (its other fields are not used). Throws
/// InvalidArgument where the name exists, as create_dataset for the type.
void commit_datatype(const std::filesystem::path& path, const std::string& name, const DatasetCreation& type);

/// Keeps the local file `path` open for writing until release_for_writing: the changes this
/// process makes to it in place (write_into, attributes, create_group, ... above) go through
/// that one open instead of opening and flushing the file each time, as h5py's File in a write
/// mode holds its file; reads in this process see them at once (HDF5 shares the open), other
/// processes once they are flushed (flush_writes, the last release, or a to_file of the path).
/// Each hold needs a release. Throws as an open of the file for writing (FileNotFound,
/// NotHdf5File, InvalidArgument for a URL).
void hold_for_writing(const std::filesystem::path& path);

/// Flushes what this process changed in the held file `path` to the kernel (h5py's
/// File.flush); nothing where it is not held.
void flush_writes(const std::filesystem::path& path);

/// Whether this process holds the local file `path` open for writing (hold_for_writing): another
/// HDF5 library in the process (h5py's) must then flush_writes first and open it without HDF5's
/// file locking, which that open's lock would refuse.
[[nodiscard]] bool held_for_writing(const std::filesystem::path& path);

/// The version of the HDF5 library this build of h5tile reads and writes files with (major,
/// minor, release): the newest file format its changes may use (h5py's `File.libver` names it).
[[nodiscard]] std::array<unsigned, 3> hdf5_library_version();

/// Lends the held file `path` to another HDF5 library in this process (h5py's, whose low-level
/// identifiers write what h5tile does not): what h5tile changed is flushed and its open of the
/// file closed (its kept datasets, and every reader's kept open of the file, first), so that the
/// other library may open it read-write with nothing of h5tile's cached beside it. The holds
/// stay. Until take_back_for_writing, h5tile's changes of `path` throw InvalidArgument (reads open
/// the file as they open one another process writes: the other library flushes first). Throws
/// InvalidArgument where this process does not hold `path`, or where h5tile still has an object of
/// it open (a read or change in progress in another thread). Where it is lent already, only
/// the readers' kept opens are let go again (the other library may have changed the file since).
void lend_for_writing(const std::filesystem::path& path);

/// Ends lend_for_writing (the other library must have closed the file): h5tile opens it again
/// for its changes. Nothing where `path` is not lent.
void take_back_for_writing(const std::filesystem::path& path);

/// Ends one hold of `path`; the last flushes and closes it (throwing what the flush throws).
void release_for_writing(const std::filesystem::path& path);

}  // namespace h5tile
