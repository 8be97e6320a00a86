#include <h5tile/dtype.hpp>

#include <array>
#include <complex>
#include <string_view>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile {
namespace {

struct KindInfo {
  DTypeKind kind;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<KindInfo, 15> kKinds{{
    {DTypeKind::Bool, "bool", 1},
    {DTypeKind::Int8, "int8", 1},
    {DTypeKind::Int16, "int16", 2},
    {DTypeKind::Int32, "int32", 4},
    {DTypeKind::Int64, "int64", 8},
    {DTypeKind::UInt8, "uint8", 1},
    {DTypeKind::UInt16, "uint16", 2},
    {DTypeKind::UInt32, "uint32", 4},
    {DTypeKind::UInt64, "uint64", 8},
    {DTypeKind::Float16, "float16", 2},
    {DTypeKind::Float32, "float32", 4},
    {DTypeKind::Float64, "float64", 8},
    {DTypeKind::Complex64, "complex64", 8},
    {DTypeKind::Complex128, "complex128", 16},
    {DTypeKind::VarString, "object", sizeof(char*)},
}};

// The size of "V16" or "S8" after its letter, or 0 where `name` is not `letter` and a size.
std::size_t sized_name(const std::string& name, char letter) {
  if (name.size() < 2 || name[0] != letter) return 0;
  try {
    std::size_t used = 0;
    const auto n = std::stoull(name.substr(1), &used);
    return used == name.size() - 1 ? n : 0;
  } catch (const std::logic_error&) {
    return 0;  // not a number
  }
}

}  // namespace

DType::DType(DTypeKind kind) : kind_(kind), size_(0) {
  for (const auto& k : kKinds) {
    if (k.kind == kind) {
      size_ = k.size;
      return;
    }
  }
  throw InvalidArgument(kind == DTypeKind::Bytes ? "DType(DTypeKind::Bytes) needs a size: use DType::bytes(size)"
                                                 : "DType(DTypeKind::Opaque) needs a size: use DType::opaque(size)");
}

DType DType::bytes(std::size_t size) {
  if (size == 0) {
    throw InvalidArgument("a fixed-length string dtype needs a size of at least 1 byte");
  }
  return {DTypeKind::Bytes, size};
}

DType DType::opaque(std::size_t size) {
  if (size == 0) {
    throw InvalidArgument("an opaque dtype needs a size of at least 1 byte");
  }
  return {DTypeKind::Opaque, size};
}

DType DType::from_name(const std::string& name) {
  for (const auto& k : kKinds) {
    if (k.name == name) {
      return DType(k.kind);
    }
  }
  if (const auto n = sized_name(name, 'V')) return opaque(n);
  if (const auto n = sized_name(name, 'S')) return bytes(n);
  throw UnsupportedType(
      fmt::format("unsupported dtype '{}': expected bool, int8..int64, uint8..uint64, float16, float32, "
                  "float64, complex64, complex128, V<bytes>, S<bytes> or object",
                  name));
}

std::string DType::name() const {
  if (kind_ == DTypeKind::Opaque) {
    return fmt::format("V{}", size_);
  }
  if (kind_ == DTypeKind::Bytes) {
    return fmt::format("S{}", size_);
  }
  for (const auto& k : kKinds) {
    if (k.kind == kind_) {
      return std::string(k.name);
    }
  }
  return "unknown";
}

template <>
DType dtype_of<bool>() {
  return DType(DTypeKind::Bool);
}
template <>
DType dtype_of<std::int8_t>() {
  return DType(DTypeKind::Int8);
}
template <>
DType dtype_of<std::int16_t>() {
  return DType(DTypeKind::Int16);
}
template <>
DType dtype_of<std::int32_t>() {
  return DType(DTypeKind::Int32);
}
template <>
DType dtype_of<std::int64_t>() {
  return DType(DTypeKind::Int64);
}
template <>
DType dtype_of<std::uint8_t>() {
  return DType(DTypeKind::UInt8);
}
template <>
DType dtype_of<std::uint16_t>() {
  return DType(DTypeKind::UInt16);
}
template <>
DType dtype_of<std::uint32_t>() {
  return DType(DTypeKind::UInt32);
}
template <>
DType dtype_of<std::uint64_t>() {
  return DType(DTypeKind::UInt64);
}
template <>
DType dtype_of<float>() {
  return DType(DTypeKind::Float32);
}
template <>
DType dtype_of<double>() {
  return DType(DTypeKind::Float64);
}
template <>
DType dtype_of<std::complex<float>>() {
  return DType(DTypeKind::Complex64);
}
template <>
DType dtype_of<std::complex<double>>() {
  return DType(DTypeKind::Complex128);
}

}  // namespace h5tile
