// hdf5plugin's Zstandard filter (ID 32015, registered with The HDF Group): one zstd frame per
// chunk. Client data: [level] (a signed level stored as unsigned; absent: zstd's default).

#include <zstd.h>

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {
namespace {

struct FreeDctx {
  void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
};
struct FreeCctx {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};

// One context of each kind per worker thread (not thread-safe; reused from chunk to chunk).
ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, FreeDctx> context(ZSTD_createDCtx());
  if (!context) throw RuntimeError("cannot allocate a zstd decompression context");
  return context.get();
}
ZSTD_CCtx* thread_cctx() {
  thread_local std::unique_ptr<ZSTD_CCtx, FreeCctx> context(ZSTD_createCCtx());
  if (!context) throw RuntimeError("cannot allocate a zstd compression context");
  return context.get();
}

class Zstd final : public Codec {
 public:
  explicit Zstd(int level) : level_(level) {}

  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const override {
    scratch.resize(chunk_bytes);
    scratch.resize(*decode_to(data, scratch.data(), chunk_bytes));
    data.swap(scratch);
  }

  std::optional<std::size_t> decode_to(const ByteBuffer& data, std::byte* out, std::size_t chunk_bytes) const override {
    const auto produced = ZSTD_decompressDCtx(thread_dctx(), out, chunk_bytes, data.data(), data.size());
    if (ZSTD_isError(produced) != 0) {
      throw RuntimeError(fmt::format("zstd frame of {} bytes does not decode within a chunk ({} bytes): {}",
                                     data.size(), chunk_bytes, ZSTD_getErrorName(produced)));
    }
    return produced;
  }

  void encode(ByteBuffer& data, ByteBuffer& scratch) const override {
    (void)encode_from(data.data(), data.size(), scratch);
    data.swap(scratch);
  }

  bool encode_from(const std::byte* in, std::size_t size, ByteBuffer& out) const override {
    out.resize(ZSTD_compressBound(size));
    const auto written = ZSTD_compressCCtx(thread_cctx(), out.data(), out.size(), in, size, level_);
    if (ZSTD_isError(written) != 0) {
      throw RuntimeError(fmt::format("zstd cannot compress {} bytes: {}", size, ZSTD_getErrorName(written)));
    }
    out.resize(written);
    return true;
  }

 private:
  int level_;
};

}  // namespace

std::unique_ptr<Codec> make_zstd(const FilterSpec& spec, std::size_t /*elem_size*/) {
  if (spec.params.size() > 1) {
    return nullptr;
  }
  // As the plugin compresses: the level clamped to zstd's range; absent, zstd's default.
  int level = spec.params.empty() ? ZSTD_CLEVEL_DEFAULT : static_cast<int>(spec.params[0]);
  level = std::max(ZSTD_minCLevel(), std::min(ZSTD_maxCLevel(), level));
  return std::make_unique<Zstd>(level);
}

}  // namespace h5tile::detail
