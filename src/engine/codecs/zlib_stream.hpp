#pragma once
// A zlib stream (RFC 1950), the bytes of HDF5's deflate filter, made and inflated by whichever
// library h5tile was built with: libdeflate (deflate_libdeflate.cpp) or, where it is missing, zlib
// (deflate_zlib.cpp). CMakeLists.txt compiles one of the two; deflate.cpp is the codec on top.

#include <cstddef>

namespace h5tile::detail {

enum class InflateResult : unsigned char {
  Ok,
  NoRoom,   // more than `capacity` bytes, or (zlib cannot tell the two apart) a stream cut short
  Corrupt,  // not a zlib stream
};

// Inflates the `size` bytes at `in` into at most `capacity` bytes at `out`; `produced` is set
// to the bytes written when the result is Ok. Thread-safe.
[[nodiscard]] InflateResult inflate_stream(const std::byte* in, std::size_t size, std::byte* out, std::size_t capacity,
                                           std::size_t& produced);

// The most bytes the stream of `size` bytes takes.
[[nodiscard]] std::size_t deflate_bound(std::size_t size);

// Compresses the `size` bytes at `in` at `level` (0-9) into `out`, which holds at least
// deflate_bound(size) bytes; returns the stream's size. Thread-safe.
[[nodiscard]] std::size_t deflate_stream(const std::byte* in, std::size_t size, std::byte* out, int level);

}  // namespace h5tile::detail
