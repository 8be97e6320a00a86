#pragma once
/// @file
/// What a file holds besides array data: its groups and datasets, and the attributes of each
/// object (what h5py's `keys()`, `visit()` and `.attrs` show).

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <h5tile/array.hpp>
#include <h5tile/object_types.hpp>

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

}  // namespace h5tile
