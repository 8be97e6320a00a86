#pragma once
/// @file
/// The types that describe what a file holds besides array data (objects, links, named types,
/// attributes), apart from the functions that read them (objects.hpp), so that every layer may
/// name them.

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

/// What a named datatype (h5py's Datatype) is, described as DatasetInfo describes a dataset's
/// elements.
struct NamedType {
  DType dtype{DTypeKind::UInt8};  ///< as DatasetInfo::dtype ("object" for variable-length strings)
  std::string numpy_type;         ///< as DatasetInfo::numpy_type (compound, enum, array types)
  std::string charset;            ///< strings: "ascii" or "utf-8"; empty otherwise
};

/// Where an external link leads: the file it opens and the object's path there.
struct ExternalTarget {
  std::filesystem::path file;  ///< the file HDF5 would open for the link (found as HDF5 searches)
  std::string object;          ///< the target's path in that file
};

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

}  // namespace h5tile
