// zlib streams made and inflated with zlib (zlib_stream.hpp): built where libdeflate is not found.

#include <zlib.h>

#include <limits>

#include <h5tile/error.hpp>

#include "engine/codecs/zlib_stream.hpp"

namespace h5tile::detail {

namespace {

void check_size(std::size_t size) {
  if (size > std::numeric_limits<uLong>::max()) {
    throw RuntimeError("chunk too large for zlib");
  }
}

}  // namespace

std::size_t deflate_bound(std::size_t size) {
  check_size(size);
  return ::compressBound(static_cast<uLong>(size));
}

std::size_t deflate_stream(const std::byte* in, std::size_t size, std::byte* out, int level) {
  auto written = static_cast<uLongf>(deflate_bound(size));
  if (::compress2(reinterpret_cast<Bytef*>(out), &written, reinterpret_cast<const Bytef*>(in), static_cast<uLong>(size),
                  level) != Z_OK) {
    throw RuntimeError("zlib could not compress a chunk");
  }
  return written;
}

InflateResult inflate_stream(const std::byte* in, std::size_t size, std::byte* out, std::size_t capacity,
                             std::size_t& produced) {
  check_size(size);
  check_size(capacity);
  auto written = static_cast<uLongf>(capacity);
  const int result = ::uncompress(reinterpret_cast<Bytef*>(out), &written, reinterpret_cast<const Bytef*>(in),
                                  static_cast<uLong>(size));
  if (result == Z_BUF_ERROR) return InflateResult::NoRoom;
  if (result != Z_OK) return InflateResult::Corrupt;
  produced = written;
  return InflateResult::Ok;
}

}  // namespace h5tile::detail
