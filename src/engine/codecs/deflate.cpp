// HDF5's deflate filter (H5Z_FILTER_DEFLATE, ID 1): a zlib stream (RFC 1950), inflated with
// libdeflate. Client data: [level 0-9].

#include <libdeflate.h>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"

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

class Deflate final : public Codec {
 public:
  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const override {
    scratch.resize(chunk_bytes);
    std::size_t produced = 0;
    const auto result = libdeflate_zlib_decompress(thread_decompressor(), data.data(), data.size(), scratch.data(),
                                                   scratch.size(), &produced);
    if (result == LIBDEFLATE_INSUFFICIENT_SPACE) {
      throw RuntimeError(
          fmt::format("deflate stream of {} bytes inflates to more than a chunk ({} bytes)", data.size(), chunk_bytes));
    }
    if (result != LIBDEFLATE_SUCCESS) {
      throw RuntimeError(fmt::format("deflate stream of {} bytes is corrupt", data.size()));
    }
    scratch.resize(produced);
    data.swap(scratch);
  }
};

}  // namespace

std::unique_ptr<Codec> make_deflate(const FilterSpec& spec, std::size_t /*elem_size*/) {
  if (spec.params.size() != 1 || spec.params[0] > 9) {
    return nullptr;  // not what H5Pset_deflate writes
  }
  return std::make_unique<Deflate>();
}

}  // namespace h5tile::detail
