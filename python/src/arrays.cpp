#include "arrays.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <vector>

namespace h5tile::python {

h5tile::DType dtype_of(const nb::dlpack::dtype& t) {
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(t.code);
  if (t.lanes == 1) {
    switch (code) {
      case Code::Bool:
        if (t.bits == 8) return h5tile::DType(h5tile::DTypeKind::Bool);
        break;
      case Code::Int:
        switch (t.bits) {
          case 8: return h5tile::DType(h5tile::DTypeKind::Int8);
          case 16: return h5tile::DType(h5tile::DTypeKind::Int16);
          case 32: return h5tile::DType(h5tile::DTypeKind::Int32);
          case 64: return h5tile::DType(h5tile::DTypeKind::Int64);
          default: break;
        }
        break;
      case Code::UInt:
        switch (t.bits) {
          case 8: return h5tile::DType(h5tile::DTypeKind::UInt8);
          case 16: return h5tile::DType(h5tile::DTypeKind::UInt16);
          case 32: return h5tile::DType(h5tile::DTypeKind::UInt32);
          case 64: return h5tile::DType(h5tile::DTypeKind::UInt64);
          default: break;
        }
        break;
      case Code::Float:
        switch (t.bits) {
          case 16: return h5tile::DType(h5tile::DTypeKind::Float16);
          case 32: return h5tile::DType(h5tile::DTypeKind::Float32);
          case 64: return h5tile::DType(h5tile::DTypeKind::Float64);
          default: break;
        }
        break;
      case Code::Complex:
        if (t.bits == 64) return h5tile::DType(h5tile::DTypeKind::Complex64);
        if (t.bits == 128) return h5tile::DType(h5tile::DTypeKind::Complex128);
        break;
      default: break;
    }
  }
  throw h5tile::UnsupportedType("unsupported array dtype (DLPack code " + std::to_string(t.code) + ", " +
                                std::to_string(t.bits) + " bits)");
}

nb::dlpack::dtype dlpack_of(h5tile::DType d) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code c, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(c), static_cast<uint8_t>(bits), 1};
  };
  switch (d.kind()) {
    case h5tile::DTypeKind::Bool: return make(Code::Bool, 8);
    case h5tile::DTypeKind::Int8: return make(Code::Int, 8);
    case h5tile::DTypeKind::Int16: return make(Code::Int, 16);
    case h5tile::DTypeKind::Int32: return make(Code::Int, 32);
    case h5tile::DTypeKind::Int64: return make(Code::Int, 64);
    case h5tile::DTypeKind::UInt8: return make(Code::UInt, 8);
    case h5tile::DTypeKind::UInt16: return make(Code::UInt, 16);
    case h5tile::DTypeKind::UInt32: return make(Code::UInt, 32);
    case h5tile::DTypeKind::UInt64: return make(Code::UInt, 64);
    case h5tile::DTypeKind::Float16: return make(Code::Float, 16);
    case h5tile::DTypeKind::Float32: return make(Code::Float, 32);
    case h5tile::DTypeKind::Float64: return make(Code::Float, 64);
    case h5tile::DTypeKind::Complex64: return make(Code::Complex, 64);
    case h5tile::DTypeKind::Complex128: return make(Code::Complex, 128);
    // Bytes: Python views opaque ones as V<n> and fixed-length strings as S<n> (to_python); variable-
    // length strings are never handed out as arrays.
    case h5tile::DTypeKind::Opaque:
    case h5tile::DTypeKind::Bytes:
    case h5tile::DTypeKind::VarString: return make(Code::UInt, 8);
  }
  return make(Code::UInt, 8);
}

nb::object to_python(h5tile::Array&& array) {
  const auto shape = array.shape();
  const auto dtype = array.dtype();
  const int device = array.device();
  std::vector<std::size_t> dims(shape.begin(), shape.end());
  const bool sized = dtype.kind() == h5tile::DTypeKind::Opaque || dtype.kind() == h5tile::DTypeKind::Bytes;
  if (sized) dims.push_back(dtype.size());
  // The capsule owns the buffer and frees it (host or device) with the buffer's own deleter.
  auto* owned = new h5tile::Buffer(array.release());
  std::byte* data = owned->get();
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<h5tile::Buffer*>(p); });
  if (device >= 0) {
    return nb::cast(nb::ndarray<nb::cupy>(data, dims.size(), dims.data(), owner, nullptr, dlpack_of(dtype),
                                          nb::device::cuda::value, device));
  }
  nb::object host = nb::cast(nb::ndarray<nb::numpy>(data, dims.size(), dims.data(), owner, nullptr, dlpack_of(dtype)));
  if (!sized) {
    return host;
  }
  // Opaque bytes and fixed-length strings travel as uint8 with a last axis of the item size;
  // NumPy sees them as V<n> and S<n>.
  const nb::tuple logical(nb::cast(shape));
  return host.attr("view")(dtype.name()).attr("reshape")(logical);
}

}  // namespace h5tile::python
