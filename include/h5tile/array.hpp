#pragma once
/// @file
/// Shapes, boxes (regions of a global shape), non-owning strided views and owning arrays.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <h5tile/dtype.hpp>

namespace h5tile {

/// The extent of each axis, slowest-varying first (row-major, as HDF5 and NumPy default).
using Shape = std::vector<std::uint64_t>;

/// Number of elements of a shape (1 for a 0-d shape). Throws InvalidArgument on overflow.
[[nodiscard]] std::uint64_t element_count(const Shape& shape);

/// Bytes of `shape` in elements of `element_size` bytes: the one checked computation of a
/// size in bytes. Throws InvalidArgument, naming the shape, where that is 2^64 bytes or more.
[[nodiscard]] std::uint64_t byte_count(const Shape& shape, std::size_t element_size);

/// "[4, 5]" for messages.
[[nodiscard]] std::string to_string(const Shape& shape);

/// A rectangular region of a global shape: `offset[i] <= x[i] < offset[i] + extent[i]`.
struct Box {
  Shape offset;
  Shape extent;

  /// The whole of `shape`.
  [[nodiscard]] static Box whole(const Shape& shape);
  [[nodiscard]] std::size_t rank() const noexcept { return extent.size(); }
  [[nodiscard]] std::uint64_t count() const { return element_count(extent); }
  /// True if this box lies inside `shape` (same rank, no axis past the end).
  [[nodiscard]] bool fits(const Shape& shape) const;
  /// True if the two boxes share at least one element.
  [[nodiscard]] bool overlaps(const Box& other) const;
  friend bool operator==(const Box&, const Box&) = default;
};

/// "[0:512, 0:300]" for messages.
[[nodiscard]] std::string to_string(const Box& box);

/// Where the memory of an ArrayView lives.
enum class MemoryKind : std::uint8_t {
  Auto,    ///< detected from the pointer (device memory when CUDA says so)
  Host,    ///< host memory (pageable or pinned)
  Device,  ///< CUDA device memory (or managed memory)
};

/// A non-owning view of an N-d array in host or device memory: a pointer, a dtype, a shape
/// and strides in bytes (any sign and order for host memory; non-negative for device
/// memory; row-major when `byte_strides` is empty). The memory must outlive every
/// operation given the view.
struct ArrayView {
  const void* data = nullptr;
  DType dtype{DTypeKind::UInt8};
  Shape shape;
  std::vector<std::int64_t> byte_strides;  ///< empty: C-contiguous
  MemoryKind memory = MemoryKind::Auto;

  /// The strides actually in effect (row-major ones when `byte_strides` is empty).
  [[nodiscard]] std::vector<std::int64_t> strides() const;
  /// True when the elements are packed in row-major order.
  [[nodiscard]] bool is_contiguous() const;
  [[nodiscard]] std::uint64_t nbytes() const { return byte_count(shape, dtype.size()); }
};

/// A view of a typed, contiguous C++ buffer: `view(vec.data(), {rows, cols})`.
template <class T>
[[nodiscard]] ArrayView view(const T* data, Shape shape) {
  return ArrayView{data, dtype_of<T>(), std::move(shape), {}};
}

/// Frees an Array's memory with the function that matches its allocation (host or device).
struct BufferDeleter {
  void (*release)(std::byte*) noexcept = nullptr;
  void operator()(std::byte* p) const noexcept {
    if (release != nullptr) {
      release(p);
    }
  }
};
/// An owning byte buffer.
using Buffer = std::unique_ptr<std::byte[], BufferDeleter>;

/// An owning, C-contiguous array (the result of reads) in host memory (page-aligned) or in
/// the memory of one CUDA device. Move-only.
class Array {
 public:
  /// Allocates an uninitialised host array. Throws InvalidArgument if the size overflows.
  Array(DType dtype, Shape shape);
  /// Allocates an uninitialised array on CUDA device `device` (host memory when device < 0).
  /// Throws RuntimeError when h5tile was built without CUDA or the device does not exist.
  Array(DType dtype, Shape shape, int device);
  Array(Array&&) noexcept = default;
  Array& operator=(Array&&) noexcept = default;
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  ~Array() = default;

  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] const Shape& shape() const noexcept { return shape_; }
  [[nodiscard]] std::size_t rank() const noexcept { return shape_.size(); }
  [[nodiscard]] std::uint64_t size() const { return element_count(shape_); }
  [[nodiscard]] std::uint64_t nbytes() const noexcept { return nbytes_; }
  /// The CUDA device holding the data, or -1 for host memory.
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] std::byte* data() noexcept { return data_.get(); }
  [[nodiscard]] const std::byte* data() const noexcept { return data_.get(); }
  /// The elements as T (host arrays only); T must match the dtype's size.
  template <class T>
  [[nodiscard]] std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data_.get()), static_cast<std::size_t>(nbytes_ / sizeof(T))};
  }
  template <class T>
  [[nodiscard]] std::span<T> as() {
    return {reinterpret_cast<T*>(data_.get()), static_cast<std::size_t>(nbytes_ / sizeof(T))};
  }
  /// A view of the whole array, for writing it back.
  [[nodiscard]] ArrayView view() const {
    return ArrayView{data_.get(), dtype_, shape_, {}, device_ < 0 ? MemoryKind::Host : MemoryKind::Device};
  }
  /// Hands the buffer (and how to free it) to the caller, for zero-copy bindings; the array
  /// becomes empty.
  [[nodiscard]] Buffer release() noexcept {
    nbytes_ = 0;
    return std::move(data_);
  }

 private:
  DType dtype_;
  Shape shape_;
  std::uint64_t nbytes_ = 0;
  int device_ = -1;
  Buffer data_;
};

}  // namespace h5tile
