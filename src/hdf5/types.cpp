#include "hdf5/types.hpp"

#include <bit>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <h5tile/error.hpp>

namespace h5tile::detail {

static_assert(std::endian::native == std::endian::little, "h5tile's raw data path assumes a little-endian host");

TypeHandle copy_type(hid_t type) {
  const Hdf5Lock lock;
  return TypeHandle(check(H5Tcopy(type), "H5Tcopy"));
}

namespace {

TypeHandle half_type() {
  // IEEE 754 binary16: sign bit 15, 5 exponent bits at 10, 10 mantissa bits, bias 15.
  auto t = copy_type(H5T_IEEE_F32LE);
  check(H5Tset_fields(t.get(), 15, 10, 5, 0, 10), "H5Tset_fields(half)");
  check(H5Tset_size(t.get(), 2), "H5Tset_size(half)");
  check(H5Tset_ebias(t.get(), 15), "H5Tset_ebias(half)");
  return t;
}

TypeHandle bool_type() {
  auto t = TypeHandle(check(H5Tenum_create(H5T_STD_I8LE), "H5Tenum_create(bool)"));
  const std::int8_t no = 0;
  const std::int8_t yes = 1;
  check(H5Tenum_insert(t.get(), "FALSE", &no), "H5Tenum_insert(FALSE)");
  check(H5Tenum_insert(t.get(), "TRUE", &yes), "H5Tenum_insert(TRUE)");
  return t;
}

// HDF5's string type as h5py makes it for NumPy `S<n>` (`size` bytes, null-padded) or for a
// variable-length string (H5T_VARIABLE), in character set `cset`.
TypeHandle string_type(std::size_t size, H5T_cset_t cset) {
  auto t = copy_type(H5T_C_S1);
  check(H5Tset_size(t.get(), size), "H5Tset_size(string)");
  if (size != H5T_VARIABLE) check(H5Tset_strpad(t.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  check(H5Tset_cset(t.get(), cset), "H5Tset_cset");
  return t;
}

TypeHandle complex_type(hid_t part, std::size_t part_size) {
  auto t = TypeHandle(check(H5Tcreate(H5T_COMPOUND, 2 * part_size), "H5Tcreate(complex)"));
  check(H5Tinsert(t.get(), "r", 0, part), "H5Tinsert(r)");
  check(H5Tinsert(t.get(), "i", part_size, part), "H5Tinsert(i)");
  return t;
}

std::string member_name(hid_t type, unsigned i) {
  char* raw = H5Tget_member_name(type, i);
  if (raw == nullptr) {
    return {};
  }
  std::string name(raw);
  H5free_memory(raw);
  return name;
}

// An enum member's value as a number: `raw` holds one value of the enum's integer base type.
std::int64_t enum_value(hid_t base, const std::vector<unsigned char>& raw) {
  std::uint64_t bits = 0;
  const auto size = raw.size();
  const bool big = H5Tget_order(base) == H5T_ORDER_BE;
  for (std::size_t i = 0; i < size; ++i) bits |= std::uint64_t{raw[big ? size - 1 - i : i]} << (8 * i);
  if (H5Tget_sign(base) == H5T_SGN_2 && size < 8 && (bits >> (8 * size - 1)) != 0)
    bits |= ~std::uint64_t{0} << (8 * size);
  return static_cast<std::int64_t>(bits);
}

// h5py's bool: an enum {FALSE: 0, TRUE: 1} (in either order) of any integer base; h5py reads
// every such enum as NumPy's bool (HDF5 converts a wider one to its own 1-byte enum).
bool is_h5py_bool(hid_t type) {
  const auto size = H5Tget_size(type);
  if (H5Tget_nmembers(type) != 2 || size > 8) {
    return false;
  }
  const TypeHandle base(H5Tget_super(type));
  std::vector<unsigned char> raw(size);
  std::int64_t values[2] = {-1, -1};
  for (unsigned i = 0; i < 2; ++i) {
    if (!base || H5Tget_member_value(type, i, raw.data()) < 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    values[i] = enum_value(base.get(), raw);
  }
  const auto n0 = member_name(type, 0);
  const auto n1 = member_name(type, 1);
  return (n0 == "FALSE" && values[0] == 0 && n1 == "TRUE" && values[1] == 1) ||
         (n1 == "FALSE" && values[1] == 0 && n0 == "TRUE" && values[0] == 1);
}

// h5py's complex: a compound {r, i} (in either order, at any offsets) of two floats of one
// size, which h5py reads as NumPy's complex (HDF5 converts one that is not packed as h5py
// writes it: is_packed_complex).
std::optional<DType> h5py_complex(hid_t type) {
  if (H5Tget_nmembers(type) != 2) {
    return std::nullopt;
  }
  const auto n0 = member_name(type, 0);
  const auto n1 = member_name(type, 1);
  if (!((n0 == "r" && n1 == "i") || (n0 == "i" && n1 == "r"))) {
    return std::nullopt;
  }
  const auto part = TypeHandle(H5Tget_member_type(type, 0));
  const auto part_i = TypeHandle(H5Tget_member_type(type, 1));
  if (!part || !part_i || H5Tget_class(part.get()) != H5T_FLOAT || H5Tget_class(part_i.get()) != H5T_FLOAT) {
    return std::nullopt;
  }
  const auto size = H5Tget_size(part.get());
  if (H5Tget_size(part_i.get()) != size) {
    return std::nullopt;
  }
  if (size == 4) {
    return DType(DTypeKind::Complex64);
  }
  if (size == 8) {
    return DType(DTypeKind::Complex128);
  }
  return std::nullopt;
}

// h5py's complex as h5py writes it: r at 0, i right after it, nothing else.
bool is_packed_complex(hid_t type, std::size_t part_size) {
  return member_name(type, 0) == "r" && H5Tget_member_offset(type, 1) == part_size &&
         H5Tget_size(type) == 2 * part_size;
}

std::string describe_unsupported(hid_t type) {
  const auto size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_VLEN: return "variable-length sequence";
    case H5T_REFERENCE: return "reference";
    case H5T_ARRAY: return "array type";
    case H5T_TIME: return "time type";
    case H5T_BITFIELD: return fmt::format("bitfield of {} bytes", size);
    case H5T_ENUM: return "enum (only h5py's bool enum is supported)";
    case H5T_COMPOUND: {
      std::string names;
      const int n = H5Tget_nmembers(type);
      for (int i = 0; i < n; ++i) {
        names += (i ? ", " : "") + member_name(type, static_cast<unsigned>(i));
      }
      return fmt::format("compound type {{{}}} (only h5py's complex {{r, i}} is supported)", names);
    }
    case H5T_FLOAT: return fmt::format("float of {} bytes", size);
    case H5T_INTEGER: return fmt::format("integer of {} bytes", size);
    default: return "unknown type class";
  }
}

// NumPy's byte-order character for a multi-byte number of `type` ('|' for one byte).
char byte_order(hid_t type, std::size_t size) {
  return size == 1 ? '|' : H5Tget_order(type) == H5T_ORDER_BE ? '>' : '<';
}

// An integer or float whose every bit is its value's, as NumPy's of that size keeps it (no
// precision narrower than the size, no offset): HDF5 copies those bytes unconverted for h5py.
bool is_plain_number(hid_t type, std::size_t size) {
  if (H5Tget_precision(type) != 8 * size || H5Tget_offset(type) != 0) return false;
  if (H5Tget_class(type) == H5T_INTEGER) return size == 1 || size == 2 || size == 4 || size == 8;
  if (size == 2) return H5Tequal(type, half_type().get()) > 0;  // little-endian IEEE half only
  const hid_t ieee = size == 4   ? (H5Tget_order(type) == H5T_ORDER_BE ? H5T_IEEE_F32BE : H5T_IEEE_F32LE)
                     : size == 8 ? (H5Tget_order(type) == H5T_ORDER_BE ? H5T_IEEE_F64BE : H5T_IEEE_F64LE)
                                 : H5I_INVALID_HID;
  return ieee != H5I_INVALID_HID && H5Tequal(type, ieee) > 0;
}

std::optional<nlohmann::json> numpy_json(hid_t type);

// The NumPy dtype an opaque type tagged "NUMPY:<dtype>" holds (h5py stores datetime64 and
// timedelta64 so, and reads them back as that dtype, bytes unchanged), or nullopt.
std::optional<std::string> numpy_tag(hid_t type) {
  char* raw = H5Tget_tag(type);
  if (raw == nullptr) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  const std::string tag(raw);
  H5free_memory(raw);
  constexpr std::string_view prefix = "NUMPY:";
  if (tag.rfind(prefix, 0) != 0 || tag.size() == prefix.size()) return std::nullopt;
  return tag.substr(prefix.size());
}

// A compound's members, as NumPy's {names, formats, offsets, itemsize} at h5py's offsets.
std::optional<nlohmann::json> compound_json(hid_t type, std::size_t size) {
  if (auto c = h5py_complex(type)) {
    // A member: its bytes are read as they are, so only h5py's own layout is NumPy's complex.
    const TypeHandle part(H5Tget_member_type(type, 0));
    if (!is_packed_complex(type, c->size() / 2) || !is_plain_number(part.get(), c->size() / 2)) return std::nullopt;
    return fmt::format("{}c{}", byte_order(part.get(), c->size() / 2), c->size());
  }
  const int n = H5Tget_nmembers(type);
  if (n <= 0) return std::nullopt;
  auto names = nlohmann::json::array();
  auto formats = nlohmann::json::array();
  auto offsets = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<unsigned>(i);
    const TypeHandle member(H5Tget_member_type(type, u));
    auto format = member ? numpy_json(member.get()) : std::nullopt;
    if (!format) return std::nullopt;
    names.push_back(member_name(type, u));
    formats.push_back(std::move(*format));
    offsets.push_back(H5Tget_member_offset(type, u));
  }
  return nlohmann::json{{"names", std::move(names)},
                        {"formats", std::move(formats)},
                        {"offsets", std::move(offsets)},
                        {"itemsize", size}};
}

// An enum as h5py reads it: its integer base type, with the names and values as NumPy metadata
// (h5py.check_enum_dtype gives them back); h5py's own bool enum is NumPy's bool.
std::optional<nlohmann::json> enum_json(hid_t type, std::size_t size) {
  if (is_h5py_bool(type)) {
    if (size == 1) return std::string("|b1");
    return std::nullopt;  // a wider bool enum member: its bytes are not NumPy's bool (h5py converts)
  }
  const TypeHandle base(H5Tget_super(type));
  if (!base || H5Tget_class(base.get()) != H5T_INTEGER || !is_plain_number(base.get(), size)) return std::nullopt;
  auto values = nlohmann::json::object();
  std::vector<unsigned char> raw(size);
  for (int i = 0, n = H5Tget_nmembers(type); i < n; ++i) {
    if (H5Tget_member_value(type, static_cast<unsigned>(i), raw.data()) < 0) return std::nullopt;
    values[member_name(type, static_cast<unsigned>(i))] = enum_value(base.get(), raw);
  }
  return nlohmann::json{{"base", *numpy_json(base.get())}, {"enum", std::move(values)}};
}

// An HDF5 array type as NumPy's sub-array dtype: (base, shape).
std::optional<nlohmann::json> array_json(hid_t type) {
  const int rank = H5Tget_array_ndims(type);
  const TypeHandle base(H5Tget_super(type));
  auto element = rank > 0 && base ? numpy_json(base.get()) : std::nullopt;
  if (!element) return std::nullopt;
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (H5Tget_array_dims2(type, dims.data()) < 0) return std::nullopt;
  return nlohmann::json{{"base", std::move(*element)}, {"shape", dims}};
}

// The NumPy dtype h5py reads `type` as, as JSON (the form DatasetInfo::numpy_type documents),
// where HDF5 would hand h5py the stored bytes unconverted (h5py's memory type equals the file
// type): then h5tile's raw reads return exactly h5py's bytes. nullopt for anything else
// (variable-length members, references, non-null-padded strings, odd number layouts).
std::optional<nlohmann::json> numpy_json(hid_t type) {
  const auto size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      if (!is_plain_number(type, size)) return std::nullopt;
      return fmt::format("{}{}{}", byte_order(type, size), H5Tget_sign(type) == H5T_SGN_2 ? 'i' : 'u', size);
    case H5T_FLOAT:
      if (!is_plain_number(type, size)) return std::nullopt;
      return fmt::format("{}f{}", byte_order(type, size), size);
    case H5T_STRING:
      if (H5Tis_variable_str(type) > 0 || H5Tget_strpad(type) != H5T_STR_NULLPAD) return std::nullopt;
      return nlohmann::json{{"base", fmt::format("|S{}", size)},
                            {"h5py_encoding", H5Tget_cset(type) == H5T_CSET_UTF8 ? "utf-8" : "ascii"}};
    case H5T_OPAQUE: {
      if (auto numpy = numpy_tag(type)) {  // h5py's datetime64 and timedelta64, with h5py's metadata
        return nlohmann::json{{"base", *numpy}, {"h5py_opaque", true}};
      }
      return fmt::format("|V{}", size);
    }
    case H5T_COMPOUND: return compound_json(type, size);
    case H5T_ENUM: return enum_json(type, size);
    case H5T_ARRAY: return array_json(type);
    default: return std::nullopt;
  }
}

}  // namespace

std::string structured_numpy_type(hid_t type) {
  const Hdf5Lock lock;
  const auto cls = H5Tget_class(type);
  if (cls == H5T_OPAQUE) {  // h5py's datetime64 / timedelta64: a NumPy type string, as JSON
    const auto numpy = numpy_json(type);
    return numpy && numpy->is_object() ? numpy->dump() : std::string();
  }
  if (cls != H5T_COMPOUND && cls != H5T_ENUM && cls != H5T_ARRAY) return {};
  if ((cls == H5T_ENUM && is_h5py_bool(type)) || (cls == H5T_COMPOUND && h5py_complex(type))) return {};
  const auto json = numpy_json(type);
  H5Eclear2(H5E_DEFAULT);
  if (!json) return {};
  try {
    return json->dump();
  } catch (const nlohmann::json::exception&) {
    return {};  // a member name that is not UTF-8
  }
}

namespace {

// An integer or float type of NumPy's kind `kind` ('i', 'u', 'f') and `size` bytes, little-endian
// unless `big`; nullopt for a size NumPy has but HDF5's standard types do not (f16 and wider).
std::optional<TypeHandle> number_type(char kind, std::size_t size, bool big) {
  hid_t base = H5I_INVALID_HID;
  if (kind == 'i') {
    base = size == 1 ? H5T_STD_I8LE : size == 2 ? H5T_STD_I16LE : size == 4 ? H5T_STD_I32LE : H5T_STD_I64LE;
  } else if (kind == 'u') {
    base = size == 1 ? H5T_STD_U8LE : size == 2 ? H5T_STD_U16LE : size == 4 ? H5T_STD_U32LE : H5T_STD_U64LE;
  }
  if ((kind == 'i' || kind == 'u') && size != 1 && size != 2 && size != 4 && size != 8) return std::nullopt;
  if (kind == 'f' && size != 2 && size != 4 && size != 8) return std::nullopt;
  auto t = kind == 'f' ? (size == 2 ? half_type() : copy_type(size == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE))
                       : copy_type(base);
  if (big && size > 1) check(H5Tset_order(t.get(), H5T_ORDER_BE), "H5Tset_order");
  return t;
}

// The HDF5 type h5py makes for the NumPy type string `text` ("<i4", ">f8", "|b1", "<c8", "|S5",
// "|V4"); UnsupportedType for the others.
TypeHandle type_from_numpy_string(const std::string& text) {
  auto refuse = [&] {
    return UnsupportedType(fmt::format("h5tile does not create HDF5 types for NumPy's '{}'", text));
  };
  if (text.size() < 3) throw refuse();
  const bool big = text[0] == '>';
  const char kind = text[1];
  std::size_t size = 0;
  for (std::size_t i = 2; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || size > (std::size_t{1} << 32)) throw refuse();
    size = size * 10 + static_cast<std::size_t>(text[i] - '0');
  }
  if (size == 0) throw refuse();
  switch (kind) {
    case 'b':
      if (size == 1) return bool_type();
      break;
    case 'i':
    case 'u':
    case 'f':
      if (auto t = number_type(kind, size, big)) return std::move(*t);
      break;
    case 'c':
      if (auto part = number_type('f', size / 2, big); part && size % 2 == 0 && size >= 8) {
        return complex_type(part->get(), size / 2);
      }
      break;
    case 'S': return string_type(size, H5T_CSET_ASCII);
    case 'V': return TypeHandle(check(H5Tcreate(H5T_OPAQUE, size), "H5Tcreate(opaque)"));
    default: break;
  }
  throw refuse();
}

// The inverse of numpy_json: the HDF5 type h5py makes for the NumPy dtype that `json` describes.
TypeHandle type_from_numpy_json(const nlohmann::json& json) {
  if (json.is_string()) return type_from_numpy_string(json.get<std::string>());
  if (json.contains("names")) {
    const auto& names = json.at("names");
    const auto& formats = json.at("formats");
    const auto& offsets = json.at("offsets");
    if (names.size() != formats.size() || names.size() != offsets.size() || names.empty()) {
      throw InvalidArgument(
          fmt::format("a compound type's names, formats and offsets differ in number: {}", json.dump()));
    }
    auto t = TypeHandle(check(H5Tcreate(H5T_COMPOUND, json.at("itemsize").get<std::size_t>()), "H5Tcreate(compound)"));
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto member = type_from_numpy_json(formats[i]);
      check(H5Tinsert(t.get(), names[i].get<std::string>().c_str(), offsets[i].get<std::size_t>(), member.get()),
            "H5Tinsert");
    }
    return t;
  }
  if (json.value("h5py_opaque", false)) {  // datetime64 / timedelta64, tagged as h5py tags them
    const auto numpy = json.at("base").get<std::string>();
    std::size_t size = 0;
    for (auto c = numpy.begin() + 2; c != numpy.end() && *c >= '0' && *c <= '9'; ++c) size = size * 10 + (*c - '0');
    auto t = TypeHandle(check(H5Tcreate(H5T_OPAQUE, size == 0 ? 8 : size), "H5Tcreate(opaque)"));
    check(H5Tset_tag(t.get(), ("NUMPY:" + numpy).c_str()), "H5Tset_tag");
    return t;
  }
  const auto base = type_from_numpy_json(json.at("base"));
  if (json.contains("shape")) {
    const auto dims = json.at("shape").get<std::vector<hsize_t>>();
    if (dims.empty()) return copy_type(base.get());
    return TypeHandle(
        check(H5Tarray_create2(base.get(), static_cast<unsigned>(dims.size()), dims.data()), "H5Tarray_create2"));
  }
  if (json.contains("enum")) {
    if (H5Tget_class(base.get()) != H5T_INTEGER) {
      throw UnsupportedType(fmt::format("an enum's base must be an integer type: {}", json.dump()));
    }
    auto t = TypeHandle(check(H5Tenum_create(base.get()), "H5Tenum_create"));
    const auto size = H5Tget_size(base.get());
    const bool big = H5Tget_order(base.get()) == H5T_ORDER_BE;
    for (const auto& [name, value] : json.at("enum").items()) {
      const auto bits = static_cast<std::uint64_t>(value.get<std::int64_t>());
      std::vector<unsigned char> raw(size);
      for (std::size_t i = 0; i < size; ++i) raw[big ? size - 1 - i : i] = static_cast<unsigned char>(bits >> (8 * i));
      check(H5Tenum_insert(t.get(), name.c_str(), raw.data()), "H5Tenum_insert");
    }
    return t;
  }
  if (json.contains("h5py_encoding")) {
    check(H5Tset_cset(base.get(), json.at("h5py_encoding") == "utf-8" ? H5T_CSET_UTF8 : H5T_CSET_ASCII), "H5Tset_cset");
    return copy_type(base.get());
  }
  throw UnsupportedType(fmt::format("h5tile does not create HDF5 types for {}", json.dump()));
}

}  // namespace

TypeHandle make_string_type(DType dtype, bool utf8) {
  const Hdf5Lock lock;
  const auto cset = utf8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII;
  if (dtype.kind() == DTypeKind::VarString) return string_type(H5T_VARIABLE, cset);
  if (dtype.kind() == DTypeKind::Bytes) return string_type(dtype.size(), cset);
  throw InvalidArgument(fmt::format("{} is not a string type", dtype.name()));
}

TypeHandle make_structured_type(const std::string& numpy_type, std::size_t size) {
  const Hdf5Lock lock;
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(numpy_type);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(fmt::format("not a NumPy type in h5tile's JSON form: {} ({})", numpy_type, e.what()));
  }
  TypeHandle type;
  try {
    type = type_from_numpy_json(json);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(fmt::format("not a NumPy type in h5tile's JSON form: {} ({})", numpy_type, e.what()));
  }
  if (H5Tget_size(type.get()) != size) {
    throw InvalidArgument(fmt::format("the type {} has {} bytes, not the {} its elements have", numpy_type,
                                      H5Tget_size(type.get()), size));
  }
  return type;
}

TypeHandle make_type(DType dtype) {
  const Hdf5Lock lock;
  switch (dtype.kind()) {
    case DTypeKind::Bool: return bool_type();
    case DTypeKind::Int8: return copy_type(H5T_STD_I8LE);
    case DTypeKind::Int16: return copy_type(H5T_STD_I16LE);
    case DTypeKind::Int32: return copy_type(H5T_STD_I32LE);
    case DTypeKind::Int64: return copy_type(H5T_STD_I64LE);
    case DTypeKind::UInt8: return copy_type(H5T_STD_U8LE);
    case DTypeKind::UInt16: return copy_type(H5T_STD_U16LE);
    case DTypeKind::UInt32: return copy_type(H5T_STD_U32LE);
    case DTypeKind::UInt64: return copy_type(H5T_STD_U64LE);
    case DTypeKind::Float16: return half_type();
    case DTypeKind::Float32: return copy_type(H5T_IEEE_F32LE);
    case DTypeKind::Float64: return copy_type(H5T_IEEE_F64LE);
    case DTypeKind::Complex64: return complex_type(H5T_IEEE_F32LE, 4);
    case DTypeKind::Complex128: return complex_type(H5T_IEEE_F64LE, 8);
    case DTypeKind::Opaque: {
      // No tag, as h5py writes NumPy's void dtype (HDF5 converts only between equal tags).
      return TypeHandle(check(H5Tcreate(H5T_OPAQUE, dtype.size()), "H5Tcreate(opaque)"));
    }
    case DTypeKind::Bytes: return string_type(dtype.size(), H5T_CSET_ASCII);  // as h5py writes NumPy's S<n>
    case DTypeKind::VarString:
      throw UnsupportedType(
          "h5tile does not write variable-length strings: write fixed-length ones (NumPy S<n>), or use h5py");
  }
  throw UnsupportedType(fmt::format("unsupported dtype {}", dtype.name()));
}

DType dtype_of_type(hid_t type, const std::string& where) {
  const Hdf5Lock lock;
  const auto size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: {
      const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
      switch (size) {
        case 1: return DType(is_signed ? DTypeKind::Int8 : DTypeKind::UInt8);
        case 2: return DType(is_signed ? DTypeKind::Int16 : DTypeKind::UInt16);
        case 4: return DType(is_signed ? DTypeKind::Int32 : DTypeKind::UInt32);
        case 8: return DType(is_signed ? DTypeKind::Int64 : DTypeKind::UInt64);
        default: break;
      }
      break;
    }
    case H5T_FLOAT:
      switch (size) {
        case 2: return DType(DTypeKind::Float16);
        case 4: return DType(DTypeKind::Float32);
        case 8: return DType(DTypeKind::Float64);
        default: break;
      }
      break;
    case H5T_ENUM:
      if (is_h5py_bool(type)) {
        return DType(DTypeKind::Bool);
      }
      if (!structured_numpy_type(type).empty()) return DType::opaque(size);
      break;
    case H5T_COMPOUND:
      if (auto c = h5py_complex(type)) {
        return *c;
      }
      if (!structured_numpy_type(type).empty()) return DType::opaque(size);
      break;
    case H5T_ARRAY:
      if (!structured_numpy_type(type).empty()) return DType::opaque(size);
      break;
    case H5T_OPAQUE: return DType::opaque(size);
    case H5T_STRING: return H5Tis_variable_str(type) > 0 ? DType(DTypeKind::VarString) : DType::bytes(size);
    default: break;
  }
  throw UnsupportedType(fmt::format("{} has an unsupported HDF5 type: {}", where, describe_unsupported(type)));
}

TypeHandle memory_type_for(hid_t file_type, DType dtype) {
  if (dtype.kind() == DTypeKind::Bytes || dtype.kind() == DTypeKind::VarString) {
    // As h5py reads strings: null-padded fixed-length strings (or char* for variable-length
    // ones) in the file's character set. A null-padded file type of that size is then equal to
    // it (read with pread); null-terminated or space-padded ones HDF5 converts, as for h5py.
    const Hdf5Lock lock;
    const H5T_cset_t cset = H5Tget_cset(file_type);
    if (cset < 0) throw Hdf5Error(fmt::format("H5Tget_cset failed: {}", take_hdf5_error()));
    return string_type(dtype.kind() == DTypeKind::Bytes ? dtype.size() : H5T_VARIABLE, cset);
  }
  if (dtype.kind() == DTypeKind::Opaque) {
    // HDF5 converts between opaque types only when their tags match: use the file's own.
    const Hdf5Lock lock;
    return copy_type(file_type);
  }
  return make_type(dtype);
}

std::string string_charset(hid_t type) {
  const Hdf5Lock lock;
  if (H5Tget_class(type) != H5T_STRING) return {};
  return H5Tget_cset(type) == H5T_CSET_UTF8 ? "utf-8" : "ascii";
}

std::size_t type_size(hid_t type) {
  const Hdf5Lock lock;
  const auto size = H5Tget_size(type);
  if (size == 0) {
    throw Hdf5Error(fmt::format("H5Tget_size failed: {}", take_hdf5_error()));
  }
  return size;
}

}  // namespace h5tile::detail
