// zlib streams inflated with zlib (zlib_stream.hpp): built where libdeflate is not found.

#include <zlib.h>

#include <limits>

#include <h5tile/error.hpp>

#include "engine/codecs/zlib_stream.hpp"

namespace h5tile::detail {

InflateResult inflate_zlib(const std::byte* in, std::size_t size, std::byte* out, std::size_t capacity,
                           std::size_t& produced) {
  if (size > std::numeric_limits<uLong>::max() || capacity > std::numeric_limits<uLongf>::max()) {
    throw RuntimeError("chunk too large for zlib");
  }
  auto written = static_cast<uLongf>(capacity);
  const int result = ::uncompress(reinterpret_cast<Bytef*>(out), &written, reinterpret_cast<const Bytef*>(in),
                                  static_cast<uLong>(size));
  if (result == Z_BUF_ERROR) return InflateResult::NoRoom;
  if (result != Z_OK) return InflateResult::Corrupt;
  produced = written;
  return InflateResult::Ok;
}

}  // namespace h5tile::detail
