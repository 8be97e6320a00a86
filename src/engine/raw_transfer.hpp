#pragma once
// Moving a box of a row-major dataset stored contiguously in a file to or from strided
// host memory with pread/pwrite. Long runs go straight between file and memory; short
// runs are coalesced through a bounce buffer so that a strided tile costs few system calls.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <h5tile/array.hpp>

#include "io/byte_source.hpp"
#include "io/posix/posix_file.hpp"

namespace h5tile::detail {

// A dataset's raw bytes: row-major elements of `shape` starting at `base` in `file` (any byte
// source, for reads) or `sink` (for writes; where none, `file`, which must then be a local file).
struct RawDataset {
  const ByteSource* file = nullptr;
  std::uint64_t base = 0;
  Shape shape;
  std::size_t elem_size = 0;
  const ByteSink* sink = nullptr;
  // Where writes go.
  [[nodiscard]] const ByteSink* writable() const noexcept {
    if (sink != nullptr) return sink;
    return file != nullptr ? file->posix_file() : nullptr;
  }
};

// Memory for a box: `ptr` addresses the box's first element; `strides` are in bytes per axis.
struct StridedBytes {
  std::byte* ptr = nullptr;
  std::vector<std::int64_t> strides;
};

// Reads `box` of `src` into `dst`.
void read_raw(const RawDataset& src, const Box& box, const StridedBytes& dst);
// Writes `src` into `box` of `dst`; bytes of `dst` outside the box are not touched.
void write_raw(const RawDataset& dst, const Box& box, const StridedBytes& src);

// The bytes of `file` that `box` touches, from its first element to the end of its last, as
// [begin, end). It holds exactly the box's bytes (end - begin == box.count() * elem_size) where
// the box is one run of the file's row-major order, and other bytes between its runs elsewhere.
// An empty box gives an empty span.
struct FileSpan {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};
[[nodiscard]] FileSpan file_span(const RawDataset& file, const Box& box);

// Splits `box` into boxes of at most `max_bytes` (but at least one element) that are each
// contiguous in the row-major order of `box`, listed in that order. A box with no
// elements gives none; a 0-d box gives itself.
[[nodiscard]] std::vector<Box> split_rowmajor(const Box& box, std::size_t elem_size, std::size_t max_bytes);

// The memory of `part`, a box inside `whole`, whose memory is `mem`.
[[nodiscard]] StridedBytes sub_memory(const StridedBytes& mem, const Box& whole, const Box& part);

// Row-major byte strides of `shape`.
[[nodiscard]] std::vector<std::int64_t> rowmajor_strides(const Shape& shape, std::size_t elem_size);

// Whether `mem` holds a box of `extent` elements as one row-major run (strides of axes of
// extent 1 do not matter): a chunk whose rows span the trailing axes of the memory it goes to.
[[nodiscard]] bool is_rowmajor_run(const StridedBytes& mem, const Shape& extent, std::size_t elem_size);

// Copies a box of `extent` elements between two strided memories.
void copy_box(const StridedBytes& dst, const StridedBytes& src, const Shape& extent, std::size_t elem_size);

// Copies `count` elements of `elem_size` bytes between strided locations.
void copy_elements(std::byte* dst, std::int64_t dst_stride, const std::byte* src, std::int64_t src_stride,
                   std::uint64_t count, std::size_t elem_size);

}  // namespace h5tile::detail
