// The Blosc filter (ID 32001, registered with The HDF Group; hdf5plugin's Blosc): one Blosc
// (version 1) buffer per chunk, whose header gives its sizes. Client data, as the filter's
// set_local completes them: [filter version, Blosc format version, element size, chunk bytes,
// level 0-9, shuffle (0 none, 1 bytes, 2 bits), compressor code (0 blosclz, 1 lz4, 2 lz4hc,
// 3 snappy, 4 zlib, 5 zstd)]; only the first four where the creator gave no more.

#include <blosc.h>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {
namespace {

class Blosc final : public Codec {
 public:
  Blosc(int level, int shuffle, std::size_t type_size, const char* compressor)
      : level_(level), shuffle_(shuffle), type_size_(type_size), compressor_(compressor) {}

  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const override {
    scratch.resize(chunk_bytes);
    scratch.resize(*decode_to(data, scratch.data(), chunk_bytes));
    data.swap(scratch);
  }

  std::optional<std::size_t> decode_to(const ByteBuffer& data, std::byte* out, std::size_t chunk_bytes) const override {
    std::size_t size = 0;
    std::size_t stored = 0;
    std::size_t block = 0;
    if (data.size() < BLOSC_MIN_HEADER_LENGTH) {
      throw RuntimeError(fmt::format("blosc buffer of {} bytes is shorter than its header", data.size()));
    }
    blosc_cbuffer_sizes(data.data(), &size, &stored, &block);
    if (stored != data.size()) {
      throw RuntimeError(fmt::format("blosc buffer of {} bytes says it has {}", data.size(), stored));
    }
    // Blosc's own check that decompressing stays inside the buffer (its header's offsets).
    if (blosc_cbuffer_validate(data.data(), data.size(), &size) != 0) {
      throw RuntimeError(fmt::format("blosc buffer of {} bytes is corrupt (its header)", data.size()));
    }
    if (size > chunk_bytes) {
      throw RuntimeError(fmt::format("blosc buffer of {} bytes decodes to {}, more than a chunk ({} bytes)",
                                     data.size(), size, chunk_bytes));
    }
    if (size > 0 && blosc_decompress_ctx(data.data(), out, size, 1) != static_cast<int>(size)) {
      throw RuntimeError(fmt::format("blosc buffer of {} bytes is corrupt", data.size()));
    }
    return size;
  }

  void encode(ByteBuffer& data, ByteBuffer& scratch) const override {
    (void)encode_from(data.data(), data.size(), scratch);
    data.swap(scratch);
  }

  bool encode_from(const std::byte* in, std::size_t size, ByteBuffer& out) const override {
    // Room for the header: compressing then always succeeds (stored as it is where it must be).
    out.resize(size + BLOSC_MAX_OVERHEAD);
    const int written =
        blosc_compress_ctx(level_, shuffle_, type_size_, size, in, out.data(), out.size(), compressor_, 0, 1);
    if (written <= 0) {
      throw RuntimeError(fmt::format("blosc ({}) cannot compress {} bytes", compressor_, size));
    }
    out.resize(static_cast<std::size_t>(written));
    return true;
  }

 private:
  int level_;
  int shuffle_;
  std::size_t type_size_;
  const char* compressor_;  // Blosc's static name
};

}  // namespace

std::unique_ptr<Codec> make_blosc(const FilterSpec& spec, std::size_t elem_size) {
  const auto& p = spec.params;
  // Defaults where the creator left them (as the filter's): level 5, byte shuffle, blosclz.
  const int level = p.size() > 4 ? static_cast<int>(p[4]) : 5;
  const int shuffle = p.size() > 5 ? static_cast<int>(p[5]) : 1;
  const int code = p.size() > 6 ? static_cast<int>(p[6]) : 0;
  const char* compressor = nullptr;
  if (p.size() > 8 || level < 0 || level > 9 || shuffle < 0 || shuffle > 2 ||
      blosc_compcode_to_compname(code, &compressor) < 0) {
    return nullptr;  // not what the filter writes, or a compressor this Blosc lacks: HDF5 decodes
  }
  const std::size_t type_size = p.size() > 2 && p[2] > 0 ? p[2] : elem_size;
  return std::make_unique<Blosc>(level, shuffle, type_size, compressor);
}

}  // namespace h5tile::detail
