#pragma once
/// @file
/// What a file holds besides array data: its groups and datasets, and the attributes of each
/// object (what h5py's `keys()`, `visit()` and `.attrs` show).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/array.hpp>

namespace h5tile {

/// What an object of a file is.
enum class ObjectKind : std::uint8_t {
  Group,
  Dataset,
  Datatype,  ///< a named (committed) datatype
};

/// One object of a file, by its full path.
struct ObjectEntry {
  std::string name;  ///< "/g/x"
  ObjectKind kind = ObjectKind::Group;
};

/// Every group, dataset and named datatype reachable from the root group of `path` (the root
/// itself excluded), each once, depth first in name order ("/a", "/a/x", "/b"). Reads metadata
/// only; external links are not followed. `path` may be a URL (see io.hpp).
/// Throws FileNotFound, NotHdf5File, IoError.
[[nodiscard]] std::vector<ObjectEntry> list_objects(const std::filesystem::path& path);

/// What a link is (h5py's HardLink, SoftLink, ExternalLink).
enum class LinkKind : std::uint8_t {
  Hard,      ///< names an object of the file (`object`, `object_id`)
  Soft,      ///< names a path (`target`), resolved when followed; may dangle
  External,  ///< names an object (`target`) of another file (`file`)
};

/// One link of a group: a name, and what it leads to.
struct Link {
  std::string name;  ///< the link's name in its group
  LinkKind kind = LinkKind::Hard;
  ObjectKind object = ObjectKind::Group;  ///< Hard: what the object is
  std::string object_id;                  ///< Hard: the object's identity (equal for two names of one object)
  std::string target;                     ///< Soft: the path it names; External: the object's path in `file`
  std::string file;                       ///< External: the file, as stored in the link
};

/// The links of one group, in the order h5py lists them (creation order where the group tracks
/// it, else name order).
struct GroupLinks {
  std::string path;  ///< the first path found to the group ("/", "/g")
  std::string id;    ///< the group's identity (as Link::object_id)
  std::vector<Link> links;
};

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

/// What a named datatype (h5py's Datatype) is, described as DatasetInfo describes a dataset's
/// elements.
struct NamedType {
  DType dtype{DTypeKind::UInt8};  ///< as DatasetInfo::dtype ("object" for variable-length strings)
  std::string numpy_type;         ///< as DatasetInfo::numpy_type (compound, enum, array types)
  std::string charset;            ///< strings: "ascii" or "utf-8"; empty otherwise
};

/// The named datatype `name` of `path`. Throws DatasetNotFound where there is none,
/// NotADataset where `name` is another kind of object, UnsupportedType for a type h5tile does
/// not read (naming it).
[[nodiscard]] NamedType describe_named_type(const std::filesystem::path& path, const std::string& name);

/// Where an external link leads: the file it opens and the object's path there.
struct ExternalTarget {
  std::filesystem::path file;  ///< the file HDF5 would open for the link (found as HDF5 searches)
  std::string object;          ///< the target's path in that file
};

/// Where the external link `link` of `path` leads (a link of `path` itself: every part before
/// its last leads through `path`'s own groups), under the rules of every external link h5tile
/// follows: the target must be a regular file and, unless `allow_external`, inside the folder of
/// `path`. Throws VirtualSourceError naming the link where it is refused (and for any link of a
/// remote file), DatasetNotFound where there is no such link or its file does not exist,
/// InvalidArgument where `link` is no external link.
[[nodiscard]] ExternalTarget external_link_target(const std::filesystem::path& path, const std::string& link,
                                                  bool allow_external);

/// How an attribute's value is held.
enum class AttributeKind : std::uint8_t {
  Numbers,          ///< `numbers` holds the values (any dtype h5tile reads)
  FixedStrings,     ///< `strings` holds them, trailing NULs removed; `string_width` bytes each
  VariableStrings,  ///< `strings` holds them as stored (UTF-8 or ASCII)
  Empty,            ///< a null dataspace: a type and no value (`numbers`: the dtype, no elements)
  References,       ///< object references, or lists of them (DIMENSION_LIST): see `references`
  Unsupported,      ///< a type h5tile does not read (compound, region reference...): `reason` says which
};

/// One attribute and its value.
struct Attribute {
  std::string name;
  AttributeKind kind = AttributeKind::Numbers;
  Shape shape;                       ///< empty for a scalar
  std::optional<Array> numbers;      ///< Numbers (host memory, of `shape`); Empty: the dtype, shape {0}
  std::vector<std::string> strings;  ///< FixedStrings and VariableStrings, row-major
  std::size_t string_width = 0;      ///< FixedStrings: the stored width in bytes
  std::string reason;                ///< Unsupported: why
  /// References, row-major: the full paths of the objects each element refers to (one path for
  /// a plain reference, a list for a variable-length list of them, as netCDF-4's DIMENSION_LIST;
  /// "" for a reference to no object, or to an object without a name)
  std::vector<std::vector<std::string>> references;
};

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

}  // namespace h5tile
