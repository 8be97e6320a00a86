// zlib streams made and inflated with libdeflate (zlib_stream.hpp).

#include <libdeflate.h>

#include <array>
#include <memory>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/zlib_stream.hpp"

namespace h5tile::detail {
namespace {

struct FreeDecompressor {
  void operator()(libdeflate_decompressor* d) const noexcept { libdeflate_free_decompressor(d); }
};
struct FreeCompressor {
  void operator()(libdeflate_compressor* c) const noexcept { libdeflate_free_compressor(c); }
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

// One compressor per worker thread and level (each holds its level's tables, up to a few MiB).
libdeflate_compressor* thread_compressor(int level) {
  thread_local std::array<std::unique_ptr<libdeflate_compressor, FreeCompressor>, 10> compressors;
  auto& compressor = compressors.at(static_cast<std::size_t>(level));
  if (!compressor) {
    compressor.reset(libdeflate_alloc_compressor(level));
    if (!compressor) throw RuntimeError(fmt::format("cannot allocate a libdeflate compressor of level {}", level));
  }
  return compressor.get();
}

}  // namespace

std::size_t deflate_bound(std::size_t size) { return libdeflate_zlib_compress_bound(nullptr, size); }

std::size_t deflate_stream(const std::byte* in, std::size_t size, std::byte* out, int level) {
  const auto written = libdeflate_zlib_compress(thread_compressor(level), in, size, out, deflate_bound(size));
  if (written == 0) {
    throw RuntimeError(fmt::format("libdeflate could not compress {} bytes into its own bound", size));
  }
  return written;
}

InflateResult inflate_stream(const std::byte* in, std::size_t size, std::byte* out, std::size_t capacity,
                             std::size_t& produced) {
  switch (libdeflate_zlib_decompress(thread_decompressor(), in, size, out, capacity, &produced)) {
    case LIBDEFLATE_SUCCESS: return InflateResult::Ok;
    case LIBDEFLATE_INSUFFICIENT_SPACE: return InflateResult::NoRoom;
    default: return InflateResult::Corrupt;
  }
}

}  // namespace h5tile::detail
