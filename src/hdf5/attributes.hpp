#pragma once
// Attributes: the few shapes of them that h5tile writes and reads (u64 arrays, fixed-length
// strings, an empty attribute that carries a type), each call checked.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/array.hpp>

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

}  // namespace h5tile::detail
