// hdf5plugin's LZ4 filter (ID 32004, registered with The HDF Group). A chunk is stored as: its
// size (8 bytes, big-endian), the block size (4 bytes, big-endian), then per block of that many
// bytes (the last one shorter) its stored size (4 bytes, big-endian) and its bytes: an LZ4 block,
// or the block itself where LZ4 did not make it smaller (stored size = block size).
// Client data: [block size in bytes] (absent or 0: 1 GiB).

#include <lz4.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {
namespace {

constexpr std::size_t kDefaultBlock = std::size_t{1} << 30;  // the plugin's

std::uint64_t read_be(const std::byte* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v << 8 | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

void write_be(std::byte* p, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(v >> (8 * (n - 1 - i)));
}

class Lz4 final : public Codec {
 public:
  explicit Lz4(std::size_t block) : block_(block) {}

  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const override {
    scratch.resize(chunk_bytes);
    scratch.resize(*decode_to(data, scratch.data(), chunk_bytes));
    data.swap(scratch);
  }

  std::optional<std::size_t> decode_to(const ByteBuffer& data, std::byte* out, std::size_t chunk_bytes) const override {
    const auto corrupt = [&](const std::string& why) {
      return RuntimeError(fmt::format("lz4 chunk of {} bytes is corrupt: {}", data.size(), why));
    };
    if (data.size() < 12) throw corrupt("shorter than its header");
    const auto size = read_be(data.data(), 8);
    auto block = static_cast<std::size_t>(read_be(data.data() + 8, 4));
    if (size > chunk_bytes) {
      throw RuntimeError(fmt::format("lz4 chunk of {} bytes says it holds {}, more than a chunk ({} bytes)",
                                     data.size(), size, chunk_bytes));
    }
    if (block == 0 && size > 0) throw corrupt("a block size of 0");
    block = std::min<std::size_t>(block, size);
    std::size_t in = 12;
    for (std::size_t at = 0; at < size; at += block) {
      const auto n = std::min<std::size_t>(block, size - at);
      if (data.size() - in < 4) throw corrupt("cut short");
      const auto stored = static_cast<std::size_t>(read_be(data.data() + in, 4));
      in += 4;
      if (stored > data.size() - in) throw corrupt("cut short");
      if (stored == n) {
        std::memcpy(out + at, data.data() + in, n);
      } else if (stored > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
                 LZ4_decompress_safe(reinterpret_cast<const char*>(data.data() + in), reinterpret_cast<char*>(out + at),
                                     static_cast<int>(stored), static_cast<int>(n)) != static_cast<int>(n)) {
        throw corrupt(fmt::format("the block at byte {} does not decode to {} bytes", at, n));
      }
      in += stored;
    }
    return static_cast<std::size_t>(size);
  }

  void encode(ByteBuffer& data, ByteBuffer& scratch) const override {
    (void)encode_from(data.data(), data.size(), scratch);
    data.swap(scratch);
  }

  bool encode_from(const std::byte* in, std::size_t size, ByteBuffer& out) const override {
    if (size > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
      throw RuntimeError(fmt::format("lz4 compresses chunks under 2 GiB, not {} bytes", size));
    }
    const auto block = std::max<std::size_t>(1, std::min(block_, size));
    const auto blocks = (size + block - 1) / block;
    out.resize(12 + blocks * 4 + static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(size))));
    write_be(out.data(), size, 8);
    write_be(out.data() + 8, block, 4);
    std::size_t at = 12;
    for (std::size_t from = 0; from < size; from += block) {
      const auto n = std::min(block, size - from);
      auto stored = static_cast<std::size_t>(
          LZ4_compress_default(reinterpret_cast<const char*>(in + from), reinterpret_cast<char*>(out.data() + at + 4),
                               static_cast<int>(n), LZ4_compressBound(static_cast<int>(n))));
      if (stored == 0 || stored >= n) {  // not smaller: stored as it is, as the plugin does
        stored = n;
        std::memcpy(out.data() + at + 4, in + from, n);
      }
      write_be(out.data() + at, stored, 4);
      at += 4 + stored;
    }
    out.resize(at);
    return true;
  }

 private:
  std::size_t block_;
};

}  // namespace

std::unique_ptr<Codec> make_lz4(const FilterSpec& spec, std::size_t /*elem_size*/) {
  if (spec.params.size() > 1) {
    return nullptr;
  }
  return std::make_unique<Lz4>(spec.params.empty() || spec.params[0] == 0 ? kDefaultBlock : spec.params[0]);
}

}  // namespace h5tile::detail
