#include "hdf5/attributes.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "hdf5/file.hpp"
#include "hdf5/links.hpp"
#include "hdf5/types.hpp"

namespace h5tile::detail {
namespace {

void write_attribute(hid_t object, const char* name, hid_t file_type, hid_t memory_type, hid_t space,
                     const void* data) {
  const AttributeHandle attribute(
      check(H5Acreate2(object, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT), fmt::format("H5Acreate2({})", name)));
  if (data != nullptr) {
    check(H5Awrite(attribute.get(), memory_type, data), fmt::format("H5Awrite({})", name));
  }
}

}  // namespace

void write_u64_attribute(hid_t object, const char* name, const Shape& shape, const std::uint64_t* values) {
  const Hdf5Lock lock;
  const auto space = make_space(shape);
  write_attribute(object, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, space.get(), values);
}

void write_strings_attribute(hid_t object, const char* name, const std::vector<std::string>& strings) {
  std::size_t width = 1;
  for (const auto& s : strings) width = std::max(width, s.size() + 1);
  std::vector<char> text(strings.size() * width, '\0');
  for (std::size_t i = 0; i < strings.size(); ++i) {
    std::memcpy(text.data() + i * width, strings[i].data(), strings[i].size());
  }
  const Hdf5Lock lock;
  const TypeHandle type(check(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  check(H5Tset_size(type.get(), width), "H5Tset_size");
  const auto space = make_space({strings.size()});
  write_attribute(object, name, type.get(), type.get(), space.get(), text.data());
}

void write_empty_attribute(hid_t object, const char* name, hid_t type) {
  const Hdf5Lock lock;
  const SpaceHandle none(check(H5Screate(H5S_NULL), "H5Screate(null)"));
  write_attribute(object, name, type, type, none.get(), nullptr);
}

AttributeHandle open_attribute(hid_t object, const char* name) {
  const Hdf5Lock lock;
  if (H5Aexists(object, name) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return {};
  }
  return AttributeHandle(check(H5Aopen(object, name, H5P_DEFAULT), fmt::format("H5Aopen({})", name)));
}

AttributeHandle open_attribute(hid_t location, const std::string& path, const char* name) {
  const Hdf5Lock lock;
  // No external link on the way is followed (its target would be opened unchecked).
  const GuardedLinks no_links({});
  if (H5Aexists_by_name(location, path.c_str(), name, no_links.lapl()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return {};
  }
  return AttributeHandle(check(H5Aopen_by_name(location, path.c_str(), name, H5P_DEFAULT, no_links.lapl()),
                               fmt::format("H5Aopen_by_name({})", name)));
}

Shape attribute_shape(hid_t attribute) {
  const Hdf5Lock lock;
  const SpaceHandle space(check(H5Aget_space(attribute), "H5Aget_space"));
  return shape_of(space.get());
}

std::vector<std::uint64_t> read_u64_attribute(hid_t attribute, std::uint64_t count) {
  const Hdf5Lock lock;
  std::vector<std::uint64_t> values(count);
  check(H5Aread(attribute, H5T_NATIVE_UINT64, values.data()), "H5Aread");
  return values;
}

std::optional<std::vector<std::int64_t>> read_integers_attribute(hid_t attribute, std::uint64_t count) {
  const Hdf5Lock lock;
  const TypeHandle type(check(H5Aget_type(attribute), "H5Aget_type"));
  if (H5Tget_class(type.get()) != H5T_INTEGER) {
    return std::nullopt;
  }
  std::vector<std::int64_t> values(count);
  check(H5Aread(attribute, H5T_NATIVE_INT64, values.data()), "H5Aread");
  return values;
}

std::optional<std::vector<std::string>> read_strings_attribute(hid_t attribute, std::uint64_t count,
                                                               std::size_t max_width) {
  const Hdf5Lock lock;
  const TypeHandle type(check(H5Aget_type(attribute), "H5Aget_type"));
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0) {
    return std::nullopt;
  }
  const auto width = H5Tget_size(type.get());
  if (width == 0 || width > max_width) {
    return std::nullopt;
  }
  std::vector<char> text(count * width);
  check(H5Aread(attribute, type.get(), text.data()), "H5Aread");
  std::vector<std::string> strings;
  strings.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const char* s = text.data() + i * width;
    strings.emplace_back(s, strnlen(s, width));
  }
  return strings;
}

DType attribute_dtype(hid_t attribute, const std::string& where) {
  const Hdf5Lock lock;
  const TypeHandle type(check(H5Aget_type(attribute), "H5Aget_type"));
  return dtype_of_type(type.get(), where);
}

}  // namespace h5tile::detail
