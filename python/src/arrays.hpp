#pragma once
// Arrays between Python and h5tile: dtypes both ways, views of Python arrays (DLPack or the
// buffer protocol, host or CUDA) without copies, and h5tile Arrays handed to Python as NumPy or
// CuPy arrays that own their memory.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

#include <h5tile/h5tile.hpp>

namespace h5tile::python {

namespace nb = nanobind;

using AnyArray = nb::ndarray<nb::ro>;

// The h5tile dtype of a DLPack dtype; UnsupportedType for the others.
[[nodiscard]] h5tile::DType dtype_of(const nb::dlpack::dtype& t);
// The DLPack dtype h5tile hands out for `d` (opaque dtypes as uint8).
[[nodiscard]] nb::dlpack::dtype dlpack_of(h5tile::DType d);

// A view of a Python array. `sized` not empty: the NumPy name of a dtype of `n` bytes per element
// ("V7": opaque, "S7": fixed-length strings), whose array holds uint8 with a last axis of that
// many bytes (as the Python layer passes them).
template <class NdArray>
h5tile::ArrayView view_of(const NdArray& a, const std::string& sized) {
  h5tile::ArrayView v;
  v.data = a.data();
  std::size_t ndim = a.ndim();
  if (!sized.empty()) {
    v.dtype = h5tile::DType::from_name(sized);
    if (v.dtype.kind() != h5tile::DTypeKind::Opaque && v.dtype.kind() != h5tile::DTypeKind::Bytes) {
      throw h5tile::InvalidArgument("the sized dtype must be V<n> or S<n>, not " + sized);
    }
    if (ndim == 0 || a.shape(ndim - 1) != v.dtype.size() || a.stride(ndim - 1) != 1) {
      throw h5tile::InvalidArgument(
          "V<n> and S<n> arrays must be passed as uint8 with a contiguous last axis of the item size");
    }
    --ndim;
  } else {
    v.dtype = dtype_of(a.dtype());
  }
  const auto item = !sized.empty() ? 1 : static_cast<std::int64_t>(v.dtype.size());
  for (std::size_t i = 0; i < ndim; ++i) {
    v.shape.push_back(static_cast<std::uint64_t>(a.shape(i)));
    v.byte_strides.push_back(a.stride(i) * item);
  }
  const auto device = a.device_type();
  if (device == nb::device::cuda::value || device == nb::device::cuda_managed::value) {
    v.memory = h5tile::MemoryKind::Device;
  } else if (device == nb::device::cpu::value || device == nb::device::cuda_host::value) {
    v.memory = h5tile::MemoryKind::Host;
  } else {
    throw h5tile::InvalidArgument("arrays on DLPack device type " + std::to_string(device) + " are not supported");
  }
  return v;
}

// Hands an Array to Python without a copy: the capsule frees it with its own deleter.
[[nodiscard]] nb::object to_python(h5tile::Array&& array);

}  // namespace h5tile::python
