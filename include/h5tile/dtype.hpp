#pragma once
/// @file
/// Element types h5tile reads and writes, named as NumPy names them.

#include <cstddef>
#include <cstdint>
#include <string>

namespace h5tile {

/// The kind of an element. Every kind maps to one NumPy dtype and is stored in HDF5 the
/// way h5py stores that dtype (bool as an int8 enum, complex as an `r`/`i` compound,
/// float16 as IEEE half, opaque as HDF5 opaque), so h5py reads back the same dtype.
enum class DTypeKind : std::uint8_t {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  Float32,
  Float64,
  Complex64,
  Complex128,
  Opaque,  ///< fixed-size raw bytes (NumPy `V<n>`)
  /// Fixed-length strings (NumPy `S<n>`, as h5py reads them): HDF5's fixed-length string type,
  /// null-padded, ASCII or UTF-8 (DatasetInfo::charset says which; the bytes are the same).
  Bytes,
  /// Variable-length strings (h5py reads them as NumPy object arrays of bytes). Only described
  /// and read with read_strings(): an Array cannot hold them, so from_file, read_box and the
  /// other reads throw UnsupportedType naming read_strings. size() is that of one char*.
  VarString,
};

/// An element type: a kind and its size in bytes (the size only varies for Opaque and Bytes).
class DType {
 public:
  /// A fixed-size kind (every kind but Opaque and Bytes). Throws InvalidArgument for those.
  explicit DType(DTypeKind kind);
  /// Opaque bytes of `size` bytes (1 <= size). Throws InvalidArgument otherwise.
  [[nodiscard]] static DType opaque(std::size_t size);
  /// Fixed-length strings of `size` bytes (1 <= size). Throws InvalidArgument otherwise.
  [[nodiscard]] static DType bytes(std::size_t size);
  /// Parses a NumPy-style name: "float32", "int8", "bool", "complex64", "V16", "S8", ...
  /// Throws UnsupportedType naming the string.
  [[nodiscard]] static DType from_name(const std::string& name);

  [[nodiscard]] DTypeKind kind() const noexcept { return kind_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The NumPy name ("float32", "V16", "S8"; "object" for VarString).
  [[nodiscard]] std::string name() const;

  friend bool operator==(const DType&, const DType&) = default;

 private:
  DType(DTypeKind kind, std::size_t size) : kind_(kind), size_(size) {}
  DTypeKind kind_;
  std::size_t size_;
};

/// The DType of a C++ element type (bool, std::int8_t ... double, std::complex<float|double>).
template <class T>
[[nodiscard]] DType dtype_of();

}  // namespace h5tile
