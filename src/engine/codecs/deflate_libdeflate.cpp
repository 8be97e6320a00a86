// zlib streams inflated with libdeflate (zlib_stream.hpp).

#include <libdeflate.h>

#include <memory>

#include <h5tile/error.hpp>

#include "engine/codecs/zlib_stream.hpp"

namespace h5tile::detail {
namespace {

struct FreeDecompressor {
  void operator()(libdeflate_decompressor* d) const noexcept { libdeflate_free_decompressor(d); }
};

// One decompressor per worker thread (it holds ~32 KiB of tables; not thread-safe).
libdeflate_decompressor* thread_decompressor() {
  thread_local std::unique_ptr<libdeflate_decompressor, FreeDecompressor> decompressor;
  if (!decompressor) {
    decompressor.reset(libdeflate_alloc_decompressor());
    if (!decompressor) throw RuntimeError("cannot allocate a libdeflate decompressor");
  }
  return decompressor.get();
}

}  // namespace

InflateResult inflate_zlib(const std::byte* in, std::size_t size, std::byte* out, std::size_t capacity,
                           std::size_t& produced) {
  switch (libdeflate_zlib_decompress(thread_decompressor(), in, size, out, capacity, &produced)) {
    case LIBDEFLATE_SUCCESS: return InflateResult::Ok;
    case LIBDEFLATE_INSUFFICIENT_SPACE: return InflateResult::NoRoom;
    default: return InflateResult::Corrupt;
  }
}

}  // namespace h5tile::detail
