#pragma once
// Attributes: the few shapes of them that h5tile writes and reads (u64 arrays, fixed-length
// strings, an empty attribute that carries a type), each call checked.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/array.hpp>
#include <h5tile/object_types.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// Creates attribute `name` of `object`: unsigned 64-bit values (little-endian on disk) of `shape`.
void write_u64_attribute(hid_t object, const char* name, const Shape& shape, const std::uint64_t* values);
// Creates attribute `name` of `object`: one fixed-length string per element, as wide as the
// longest (NUL-padded).
void write_strings_attribute(hid_t object, const char* name, const std::vector<std::string>& strings);
// Creates attribute `name` of `object` with no elements (a null dataspace) and type `type`.
void write_empty_attribute(hid_t object, const char* name, hid_t type);

// Attribute `name` of `object`, or an empty handle where it has none.
[[nodiscard]] AttributeHandle open_attribute(hid_t object, const char* name);
// Attribute `name` of the object at `path` (from `location`), without opening that object (a
// virtual dataset's mapping is then not decoded), or an empty handle where it has none or where
// the path goes through an external link (not followed: its target file is not opened).
[[nodiscard]] AttributeHandle open_attribute(hid_t location, const std::string& path, const char* name);

// The attribute's shape (empty for a scalar or null dataspace).
[[nodiscard]] Shape attribute_shape(hid_t attribute);
// The attribute's `count` values as unsigned 64-bit integers.
[[nodiscard]] std::vector<std::uint64_t> read_u64_attribute(hid_t attribute, std::uint64_t count);
// The attribute's `count` values as signed 64-bit integers (larger ones clipped), or nullopt where
// its type is not an integer type.
[[nodiscard]] std::optional<std::vector<std::int64_t>> read_integers_attribute(hid_t attribute, std::uint64_t count);
// The attribute's `count` fixed-length strings, or nullopt where it holds something else (or
// strings wider than `max_width` bytes).
[[nodiscard]] std::optional<std::vector<std::string>> read_strings_attribute(hid_t attribute, std::uint64_t count,
                                                                             std::size_t max_width);
// The dtype the attribute's type reads as (UnsupportedType naming `where` otherwise).
[[nodiscard]] DType attribute_dtype(hid_t attribute, const std::string& where);

// The group or dataset `name` ("/" for the root, else normalised) of `file`, no external link
// followed; DatasetNotFound naming `path` where there is none.
[[nodiscard]] ObjectHandle open_object(hid_t file, const std::string& name, const std::filesystem::path& path);

// The names of the attributes of `object`, in name order.
[[nodiscard]] std::vector<std::string> attribute_names(hid_t object);
// Attribute `name` of `object` and its value; a type h5tile does not read is an Unsupported one
// (`where` names the object in messages).
[[nodiscard]] Attribute read_attribute(hid_t object, const std::string& name, const std::string& where);
// Creates attribute `name` of `object`, replacing one of that name: numbers (host memory,
// C-contiguous), or strings (variable-length UTF-8 where `fixed_width` is 0, else fixed-length
// NUL-padded, as h5py writes `str` and `bytes`).
void write_attribute(hid_t object, const std::string& name, const ArrayView& value);
void write_attribute(hid_t object, const std::string& name, const std::vector<std::string>& strings, const Shape& shape,
                     std::size_t fixed_width);
// Creates attribute `name` of `object` with no value (a null dataspace) of `dtype`, replacing one of that name.
void write_empty_attribute(hid_t object, const std::string& name, DType dtype);
// Removes attribute `name` of `object`; false where there is none.
bool delete_attribute(hid_t object, const std::string& name);

}  // namespace h5tile::detail
