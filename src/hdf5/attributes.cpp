#include "hdf5/attributes.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include <h5tile/error.hpp>

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
  if (!text.empty()) check(H5Aread(attribute, type.get(), text.data()), "H5Aread");
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

namespace h5tile::detail {
namespace {

// Strings of a string-typed attribute (`type`, of `count` elements), into `out`.
void read_strings(hid_t attribute, hid_t type, std::uint64_t count, Attribute& out) {
  if (H5Tis_variable_str(type) > 0) {
    out.kind = AttributeKind::VariableStrings;
    const TypeHandle memory(check(H5Tcopy(H5T_C_S1), "H5Tcopy"));
    check(H5Tset_size(memory.get(), H5T_VARIABLE), "H5Tset_size");
    check(H5Tset_cset(memory.get(), H5Tget_cset(type)), "H5Tset_cset");
    if (count == 0) return;  // no elements: HDF5 refuses a read into no buffer ("null attribute buffer")
    std::vector<char*> pointers(count, nullptr);
    check(H5Aread(attribute, memory.get(), pointers.data()), "H5Aread");
    for (char* p : pointers) out.strings.emplace_back(p == nullptr ? "" : p);
    const SpaceHandle space(check(H5Aget_space(attribute), "H5Aget_space"));
#if H5_VERSION_GE(1, 12, 0)
    check(H5Treclaim(memory.get(), space.get(), H5P_DEFAULT, pointers.data()), "H5Treclaim");
#else
    check(H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, pointers.data()), "H5Dvlen_reclaim");
#endif
    return;
  }
  out.kind = AttributeKind::FixedStrings;
  out.string_width = H5Tget_size(type);
  std::vector<char> text(count * out.string_width);
  if (!text.empty()) {
    check(H5Aread(attribute, type, text.data()), "H5Aread");
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string_view s(text.data() + i * out.string_width, out.string_width);
    while (!s.empty() && s.back() == '\0') s.remove_suffix(1);  // as NumPy's S<n> reads them
    out.strings.emplace_back(s);
  }
}

// The full path of the object `reference` refers to; "" where it has none.
std::string referenced_path(hid_t object, const hobj_ref_t& reference) {
  const auto size = H5Rget_name(object, H5R_OBJECT, &reference, nullptr, 0);
  if (size <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return {};
  }
  std::string name(static_cast<std::size_t>(size) + 1, '\0');
  check(H5Rget_name(object, H5R_OBJECT, &reference, name.data(), name.size()), "H5Rget_name");
  name.resize(static_cast<std::size_t>(size));
  return name;
}

bool is_object_reference(hid_t type) {
  return H5Tget_class(type) == H5T_REFERENCE && H5Tequal(type, H5T_STD_REF_OBJ) > 0;
}

// Object references, or variable-length lists of them (netCDF-4's DIMENSION_LIST), as the
// paths of the objects referred to; false (nothing read) for any other type.
bool read_references(hid_t object, hid_t attribute, hid_t type, std::uint64_t count, Attribute& out) {
  if (is_object_reference(type)) {
    std::vector<hobj_ref_t> references(count);
    if (count > 0) {
      check(H5Aread(attribute, H5T_STD_REF_OBJ, references.data()), "H5Aread");
    }
    for (const auto& reference : references) out.references.push_back({referenced_path(object, reference)});
  } else if (H5Tget_class(type) == H5T_VLEN) {
    const TypeHandle base(check(H5Tget_super(type), "H5Tget_super"));
    if (!is_object_reference(base.get())) {
      return false;
    }
    const TypeHandle memory(check(H5Tvlen_create(H5T_STD_REF_OBJ), "H5Tvlen_create"));
    std::vector<hvl_t> lists(count);
    if (count > 0) {
      check(H5Aread(attribute, memory.get(), lists.data()), "H5Aread");
    }
    // The lists HDF5 allocated are given back however the names' look-up ends.
    const SpaceHandle space(check(H5Aget_space(attribute), "H5Aget_space"));
    const auto reclaim = [&] {
#if H5_VERSION_GE(1, 12, 0)
      (void)H5Treclaim(memory.get(), space.get(), H5P_DEFAULT, lists.data());
#else
      (void)H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, lists.data());
#endif
    };
    try {
      for (const auto& list : lists) {
        auto& paths = out.references.emplace_back();
        const auto* references = static_cast<const hobj_ref_t*>(list.p);
        for (std::size_t i = 0; i < list.len; ++i) paths.push_back(referenced_path(object, references[i]));
      }
    } catch (...) {
      if (count > 0) reclaim();
      throw;
    }
    if (count > 0) reclaim();
  } else {
    return false;
  }
  out.kind = AttributeKind::References;
  return true;
}

}  // namespace

ObjectHandle open_object(hid_t file, const std::string& name, const std::filesystem::path& path) {
  const Hdf5Lock lock;
  const GuardedLinks no_links({});
  if (name != "/" && H5Oexists_by_name(file, name.c_str(), no_links.lapl()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw DatasetNotFound(fmt::format("'{}' does not exist in '{}'", name, path.string()));
  }
  const hid_t object = H5Oopen(file, name.c_str(), no_links.lapl());
  if (object < 0) {
    throw_hdf5_failure<DatasetNotFound>(fmt::format("cannot open '{}' in '{}'", name, path.string()));
  }
  return ObjectHandle(object);
}

namespace {

// Whether `object` (a group, dataset or named datatype) tracks its attributes' creation order
// (h5py's track_order): then h5py lists them in that order.
bool tracks_attribute_order(hid_t object) {
  hid_t plist = H5I_INVALID_HID;
  switch (H5Iget_type(object)) {
    case H5I_GROUP: plist = H5Gget_create_plist(object); break;
    case H5I_DATASET: plist = H5Dget_create_plist(object); break;
    case H5I_DATATYPE: plist = H5Tget_create_plist(object); break;
    default: return false;
  }
  if (plist < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  const PlistHandle owned(plist);
  unsigned flags = 0;
  if (H5Pget_attr_creation_order(plist, &flags) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  return (flags & H5P_CRT_ORDER_TRACKED) != 0;
}

}  // namespace

std::vector<std::string> attribute_names(hid_t object) {
  const Hdf5Lock lock;
  std::vector<std::string> names;
  auto callback = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->emplace_back(name);
    return 0;
  };
  if (tracks_attribute_order(object)) {
    hsize_t index = 0;
    if (H5Aiterate2(object, H5_INDEX_CRT_ORDER, H5_ITER_INC, &index, callback, &names) >= 0) return names;
    H5Eclear2(H5E_DEFAULT);  // tracked but not indexed: in name order, as HDF5 can list them
    names.clear();
  }
  hsize_t index = 0;
  check(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &index, callback, &names), "H5Aiterate2");
  return names;
}

Attribute read_attribute(hid_t object, const std::string& name, const std::string& where) {
  const Hdf5Lock lock;
  Attribute out;
  out.name = name;
  const AttributeHandle attribute(check(H5Aopen(object, name.c_str(), H5P_DEFAULT), fmt::format("H5Aopen({})", name)));
  const SpaceHandle space(check(H5Aget_space(attribute.get()), "H5Aget_space"));
  const TypeHandle type(check(H5Aget_type(attribute.get()), "H5Aget_type"));
  const bool null_space = H5Sget_simple_extent_type(space.get()) == H5S_NULL;
  out.shape = null_space ? Shape{} : shape_of(space.get());
  const auto count = null_space ? 0 : element_count(out.shape);
  if (H5Tget_class(type.get()) == H5T_STRING) {
    if (null_space) {
      out.kind = AttributeKind::Empty;
      return out;
    }
    read_strings(attribute.get(), type.get(), count, out);
    return out;
  }
  if (!null_space && read_references(object, attribute.get(), type.get(), count, out)) {
    return out;
  }
  const auto label = fmt::format("attribute '{}' of {}", name, where);
  std::optional<DType> dtype;
  try {
    dtype = dtype_of_type(type.get(), label);
  } catch (const UnsupportedType& e) {
    out.kind = AttributeKind::Unsupported;
    out.reason = e.what();
    return out;
  }
  if (const auto numpy_type = structured_numpy_type(type.get()); !numpy_type.empty()) {
    // A compound, enum or array type: its bytes are not its values until viewed as its NumPy
    // dtype, which Attribute does not carry; the Python package reads it through h5py.
    out.kind = AttributeKind::Unsupported;
    out.reason = fmt::format("{} is of a compound, enum or array type ({}), which h5tile reads in datasets only", label,
                             numpy_type);
    return out;
  }
  if (null_space) {
    out.kind = AttributeKind::Empty;
    out.numbers.emplace(*dtype, Shape{0});
    return out;
  }
  out.numbers.emplace(*dtype, out.shape);
  const auto memory = memory_type_for(type.get(), *dtype);
  check(H5Aread(attribute.get(), memory.get(), out.numbers->data()), fmt::format("H5Aread({})", label));
  return out;
}

void write_attribute(hid_t object, const std::string& name, const ArrayView& value) {
  const Hdf5Lock lock;
  (void)delete_attribute(object, name);
  const auto type = make_type(value.dtype);
  const auto space = make_space(value.shape);
  write_attribute(object, name.c_str(), type.get(), type.get(), space.get(), value.data);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<std::string>& strings, const Shape& shape,
                     std::size_t fixed_width) {
  const Hdf5Lock lock;
  (void)delete_attribute(object, name);
  const TypeHandle type(check(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  const auto space = make_space(shape);
  if (fixed_width == 0) {
    check(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size");
    check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
    std::vector<const char*> pointers;
    pointers.reserve(strings.size());
    for (const auto& s : strings) pointers.push_back(s.c_str());
    write_attribute(object, name.c_str(), type.get(), type.get(), space.get(), pointers.data());
    return;
  }
  check(H5Tset_size(type.get(), fixed_width), "H5Tset_size");
  check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  std::vector<char> text(strings.size() * fixed_width, '\0');
  for (std::size_t i = 0; i < strings.size(); ++i) {
    std::memcpy(text.data() + i * fixed_width, strings[i].data(), std::min(fixed_width, strings[i].size()));
  }
  write_attribute(object, name.c_str(), type.get(), type.get(), space.get(), text.data());
}

void write_empty_attribute(hid_t object, const std::string& name, DType dtype) {
  const Hdf5Lock lock;
  (void)delete_attribute(object, name);
  const auto type = make_type(dtype);
  write_empty_attribute(object, name.c_str(), type.get());
}

bool delete_attribute(hid_t object, const std::string& name) {
  const Hdf5Lock lock;
  if (H5Aexists(object, name.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  check(H5Adelete(object, name.c_str()), fmt::format("H5Adelete({})", name));
  return true;
}

}  // namespace h5tile::detail
