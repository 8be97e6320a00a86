#include <h5tile/array.hpp>

#include <sys/mman.h>

#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/error.hpp>

#include "core/device_memory.hpp"
#include "core/host_pool.hpp"

namespace h5tile {

std::uint64_t element_count(const Shape& shape) {
  std::uint64_t n = 1;
  for (const auto e : shape) {
    if (e != 0 && n > std::numeric_limits<std::uint64_t>::max() / e) {
      throw InvalidArgument(fmt::format("shape {} has more elements than fit in 64 bits", to_string(shape)));
    }
    n *= e;
  }
  return n;
}

std::uint64_t byte_count(const Shape& shape, std::size_t element_size) {
  const auto count = element_count(shape);
  if (element_size != 0 && count > std::numeric_limits<std::uint64_t>::max() / element_size) {
    throw InvalidArgument(
        fmt::format("shape {} of {}-byte elements holds 2^64 bytes or more (more than fit in 64 bits)",
                    to_string(shape), element_size));
  }
  return count * element_size;
}

std::string to_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

Box Box::whole(const Shape& shape) { return Box{Shape(shape.size(), 0), shape}; }

bool Box::fits(const Shape& shape) const {
  if (offset.size() != shape.size() || extent.size() != shape.size()) {
    return false;
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (offset[i] > shape[i] || extent[i] > shape[i] - offset[i]) {
      return false;
    }
  }
  return true;
}

bool Box::overlaps(const Box& other) const {
  if (rank() != other.rank()) {
    return false;
  }
  for (std::size_t i = 0; i < rank(); ++i) {
    const bool disjoint = offset[i] + extent[i] <= other.offset[i] || other.offset[i] + other.extent[i] <= offset[i];
    if (disjoint || extent[i] == 0 || other.extent[i] == 0) {
      return false;
    }
  }
  return true;
}

std::string to_string(const Box& box) {
  std::string out = "[";
  for (std::size_t i = 0; i < box.rank(); ++i) {
    out += fmt::format("{}{}:{}", i ? ", " : "", box.offset[i], box.offset[i] + box.extent[i]);
  }
  return out + "]";
}

std::vector<std::int64_t> ArrayView::strides() const {
  if (!byte_strides.empty()) {
    return byte_strides;
  }
  std::vector<std::int64_t> s(shape.size());
  std::int64_t stride = static_cast<std::int64_t>(dtype.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = stride;
    stride *= static_cast<std::int64_t>(shape[i]);
  }
  return s;
}

bool ArrayView::is_contiguous() const {
  if (byte_strides.empty()) {
    return true;
  }
  std::int64_t expected = static_cast<std::int64_t>(dtype.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && byte_strides[i] != expected) {
      return false;
    }
    expected *= static_cast<std::int64_t>(shape[i]);
  }
  return true;
}

Array::Array(DType dtype, Shape shape) : Array(dtype, std::move(shape), -1) {}

Array::Array(DType dtype, Shape shape, int device) : dtype_(dtype), shape_(std::move(shape)), device_(device) {
  nbytes_ = byte_count(shape_, dtype_.size());
  if (device_ >= 0) {
    data_ = Buffer(detail::gpu::allocate(nbytes_, device_), BufferDeleter{detail::gpu::release});
    return;
  }
  // Large arrays are backed by transparent huge pages where the kernel can provide them (its
  // "madvise" mode): filling fresh memory with pread then takes one fault per 2 MiB instead of
  // per 4 KiB, where the kernel has huge pages to give (BENCHMARKS.md, huge pages).
  constexpr std::uint64_t kPage = 4096;
  constexpr std::uint64_t kHugePage = 2 * 1024 * 1024;
  const std::uint64_t align = nbytes_ >= 2 * kHugePage ? kHugePage : kPage;
  const std::uint64_t rounded = (std::max<std::uint64_t>(nbytes_, 1) + align - 1) / align * align;
  data_ = Buffer(detail::host_pool::allocate(rounded, align), BufferDeleter{detail::host_pool::release});
  if (!data_) {
    throw RuntimeError(fmt::format("cannot allocate {} bytes for an array of shape {}", nbytes_, to_string(shape_)));
  }
  if (align == kHugePage) {
    (void)::madvise(data_.get(), rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
  }
}

}  // namespace h5tile
