// h5py's LZF filter (ID 32000, h5py's lzf_filter.c): a chunk is stored as the raw output of
// liblzf's lzf_compress, with no header. Where LZF does not make a chunk smaller, h5py's filter
// fails and HDF5, the filter being optional, stores the chunk as it is with the filter's bit set
// in the chunk's filter mask (FilterPipeline skips the filter then).
// Client data: [filter revision, LZF API version, chunk size in bytes], all informative only.

#include <lzf.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {
namespace {

constexpr std::size_t kMaxChunk = std::numeric_limits<unsigned>::max();  // liblzf counts in unsigned int

class Lzf final : public Codec {
 public:
  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const override {
    scratch.resize(chunk_bytes);
    scratch.resize(*decode_to(data, scratch.data(), chunk_bytes));
    data.swap(scratch);
  }

  std::optional<std::size_t> decode_to(const ByteBuffer& data, std::byte* out, std::size_t chunk_bytes) const override {
    if (data.size() > kMaxChunk || chunk_bytes > kMaxChunk) {
      throw RuntimeError(
          fmt::format("lzf decodes chunks under 4 GiB, not {} bytes", std::max(data.size(), chunk_bytes)));
    }
    if (chunk_bytes == 0) return 0;
    errno = 0;
    const unsigned produced =
        lzf_decompress(data.data(), static_cast<unsigned>(data.size()), out, static_cast<unsigned>(chunk_bytes));
    if (produced == 0) {
      throw RuntimeError(fmt::format("lzf chunk of {} bytes is corrupt: {}", data.size(),
                                     errno == E2BIG
                                         ? fmt::format("it decodes to more than the chunk's {} bytes", chunk_bytes)
                                         : std::string("not an LZF stream")));
    }
    return produced;
  }

  void encode(ByteBuffer& data, ByteBuffer& scratch) const override {
    (void)encode_from(data.data(), data.size(), scratch);
    data.swap(scratch);
  }

  // Always succeeds: with room for the worst case (one control byte per 32 literal bytes), what
  // LZF cannot shrink is stored as literal runs, a valid LZF stream that h5py's filter decodes.
  bool encode_from(const std::byte* in, std::size_t size, ByteBuffer& out) const override {
    const std::size_t room = size + size / 32 + 16;
    if (room > kMaxChunk) {
      throw RuntimeError(fmt::format("lzf compresses chunks under 4 GiB, not {} bytes", size));
    }
    out.resize(room);
    if (size == 0) {
      out.resize(0);
      return true;
    }
    const unsigned stored = lzf_compress(in, static_cast<unsigned>(size), out.data(), static_cast<unsigned>(room));
    if (stored == 0) {
      throw RuntimeError(fmt::format("lzf could not compress a chunk of {} bytes into {}", size, room));
    }
    out.resize(stored);
    return true;
  }
};

}  // namespace

std::unique_ptr<Codec> make_lzf(const FilterSpec& spec, std::size_t /*elem_size*/) {
  if (spec.params.size() > 3) {
    return nullptr;
  }
  return std::make_unique<Lzf>();
}

}  // namespace h5tile::detail
