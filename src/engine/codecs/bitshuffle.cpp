// The bitshuffle filter (ID 32008, registered with The HDF Group; what X-ray detectors such as
// Dectris' Eiger write, through hdf5plugin or the bitshuffle package), decoded on h5tile's workers.
//
// Bitshuffle transposes the bits of each block of n elements (n a multiple of 8): bit b of element
// i (b counted from the least significant bit of the element's first byte) goes to bit position
// b * n + i of the block, positions numbered from the least significant bit of the block's first
// byte. A chunk of `size` elements is cut into blocks of the block size; the last block is cut down
// to a multiple of 8 elements, and the `size % 8` elements after it are stored as they are.
//
// Client data: [filter major, minor, element size, block size in elements (0: the default),
// compression (0: none, 2: LZ4, 3: Zstandard), Zstandard level]. Compressed, a chunk is: its size
// in bytes (8 bytes, big-endian), the block size in bytes (4 bytes, big-endian), then each block's
// compressed size (4 bytes, big-endian) and its bytes, then the trailing elements as they are.
// Uncompressed, the blocks follow one another without any header.
//
// h5tile decodes it; writing it is left to its plugin (encode refuses).

#include <lz4.h>
#if H5TILE_WITH_ZSTD
#include <zstd.h>
#endif

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {
namespace {

constexpr unsigned kNone = 0;
constexpr unsigned kLz4 = 2;
constexpr unsigned kZstd = 3;
constexpr std::size_t kMultiple = 8;             // blocks hold a multiple of 8 elements
constexpr std::size_t kTargetBlockBytes = 8192;  // the filter's default block: about 8 KiB
constexpr std::size_t kMinDefaultBlock = 128;

std::uint64_t read_be(const std::byte* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v << 8 | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

// The filter's default block size in elements for an element size.
std::size_t default_block(std::size_t elem_size) {
  const std::size_t block = kTargetBlockBytes / elem_size / kMultiple * kMultiple;
  return std::max(block, kMinDefaultBlock);
}

// Transposes the 8 x 8 bit matrix held in `x` (byte r is row r, bit c of it column c): the
// three exchanges of Hacker's Delight's transpose8.
std::uint64_t transpose8(std::uint64_t x) {
  std::uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
  x ^= t ^ (t << 28);
  return x;
}

static_assert(std::endian::native == std::endian::little, "the word tricks below read bytes as little-endian words");

std::uint64_t load64(const std::byte* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);  // little-endian: byte m of the word is p[m] (x86, ARM)
  return v;
}

// Transposes the 8 x 8 byte matrix held in a[0..7] (word k is row k, its byte m column m).
void transpose_bytes(std::uint64_t (&a)[8]) {  // NOLINT(*-avoid-c-arrays)
  for (std::size_t k = 0; k < 4; ++k) {
    const std::uint64_t t = ((a[k] >> 32) ^ a[k + 4]) & 0x00000000FFFFFFFFULL;
    a[k] ^= t << 32;
    a[k + 4] ^= t;
  }
  for (std::size_t k : {0, 1, 4, 5}) {
    const std::uint64_t t = ((a[k] >> 16) ^ a[k + 2]) & 0x0000FFFF0000FFFFULL;
    a[k] ^= t << 16;
    a[k + 2] ^= t;
  }
  for (std::size_t k : {0, 2, 4, 6}) {
    const std::uint64_t t = ((a[k] >> 8) ^ a[k + 1]) & 0x00FF00FF00FF00FFULL;
    a[k] ^= t << 8;
    a[k + 1] ^= t;
  }
}

// Undoes the bit transpose of one block of `n` elements (n a multiple of 8) from `in` into byte
// planes `planes` (plane j: byte j of every element, HDF5's shuffled layout). The 8 bytes of bit
// rows 8j..8j+7 at column g hold, in bit i, bits 0..7 of byte j of element 8g+i: gathered into one
// word (8 columns at a time: a byte transpose of 8 words read whole) and bit-transposed, the word
// is bytes j of elements 8g..8g+7, stored whole.
void unshuffle_bits(const std::byte* in, std::byte* planes, std::size_t n, std::size_t elem_size) {
  const std::size_t row = n / 8;  // bytes per bit row
  for (std::size_t j = 0; j < elem_size; ++j) {
    const std::byte* rows = in + 8 * j * row;
    std::byte* plane = planes + j * n;
    std::size_t g = 0;
    for (; g + 8 <= row; g += 8) {
      std::uint64_t a[8];  // NOLINT(*-avoid-c-arrays)
      for (std::size_t k = 0; k < 8; ++k) a[k] = load64(rows + k * row + g);
      transpose_bytes(a);
      for (std::size_t m = 0; m < 8; ++m) {
        const std::uint64_t x = transpose8(a[m]);
        std::memcpy(plane + 8 * (g + m), &x, sizeof x);
      }
    }
    for (; g < row; ++g) {
      std::uint64_t x = 0;
      for (std::size_t k = 0; k < 8; ++k) x |= std::to_integer<std::uint64_t>(rows[k * row + g]) << (8 * k);
      x = transpose8(x);
      std::memcpy(plane + 8 * g, &x, sizeof x);
    }
  }
}

class Bitshuffle final : public Codec {
 public:
  Bitshuffle(std::size_t elem_size, std::size_t block, unsigned compression)
      : elem_size_(elem_size), block_(block), compression_(compression) {}

  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const override {
    scratch.resize(chunk_bytes);
    scratch.resize(*decode_to(data, scratch.data(), chunk_bytes));
    data.swap(scratch);
  }

  std::optional<std::size_t> decode_to(const ByteBuffer& data, std::byte* out, std::size_t chunk_bytes) const override {
    const std::byte* in = data.data();
    const std::byte* end = in + data.size();
    std::size_t bytes = data.size();
    std::size_t block = block_;
    if (compression_ != kNone) {
      if (data.size() < 12) throw corrupt(data, "shorter than its header");
      bytes = read_be(in, 8);
      const auto block_bytes = read_be(in + 8, 4);
      if (bytes > chunk_bytes) {
        throw corrupt(data, fmt::format("it says it holds {} bytes, more than a chunk ({})", bytes, chunk_bytes));
      }
      if (block_bytes == 0 || block_bytes % (kMultiple * elem_size_) != 0) {
        throw corrupt(data, fmt::format("a block of {} bytes is not a multiple of 8 elements of {} bytes", block_bytes,
                                        elem_size_));
      }
      block = block_bytes / elem_size_;
      in += 12;
    } else if (bytes > chunk_bytes) {
      throw corrupt(data, fmt::format("it is longer than a chunk ({} bytes)", chunk_bytes));
    }
    if (bytes % elem_size_ != 0) {
      throw corrupt(data, fmt::format("{} bytes are not whole elements of {} bytes", bytes, elem_size_));
    }
    const std::size_t size = bytes / elem_size_;
    // A block holds at most the chunk (rounded up to 8 elements): a header may say 4 GiB for a
    // chunk of 8 elements. The blocks are the header's all the same; the buffer is left unzeroed,
    // as every byte of it is decoded into before it is read.
    block = std::min(block, std::max(kMultiple, (size + kMultiple - 1) / kMultiple * kMultiple));
    const auto plain = std::make_unique_for_overwrite<std::byte[]>(compression_ != kNone ? block * elem_size_ : 0);
    const auto planes = std::make_unique_for_overwrite<std::byte[]>(elem_size_ > 1 ? block * elem_size_ : 0);
    std::byte* to = out;
    const auto one_block = [&](std::size_t n) {
      const std::size_t n_bytes = n * elem_size_;
      const std::byte* shuffled = in;
      if (compression_ == kNone) {
        if (static_cast<std::size_t>(end - in) < n_bytes) throw corrupt(data, "it ends inside a block");
        in += n_bytes;
      } else {
        if (end - in < 4) throw corrupt(data, "it ends before a block's size");
        const auto stored = static_cast<std::size_t>(read_be(in, 4));
        in += 4;
        if (static_cast<std::size_t>(end - in) < stored) throw corrupt(data, "it ends inside a block");
        decompress(data, in, stored, plain.get(), n_bytes);
        in += stored;
        shuffled = plain.get();
      }
      if (elem_size_ == 1) {
        unshuffle_bits(shuffled, to, n, 1);  // one plane: the elements themselves
      } else {
        unshuffle_bits(shuffled, planes.get(), n, elem_size_);
        unshuffle(planes.get(), to, n_bytes, elem_size_);  // the planes back into elements
      }
      to += n_bytes;
    };
    for (std::size_t b = 0; b < size / block; ++b) one_block(block);
    if (const std::size_t last = size % block / kMultiple * kMultiple; last > 0) one_block(last);
    const std::size_t leftover = size % kMultiple * elem_size_;
    if (static_cast<std::size_t>(end - in) != leftover) {
      throw corrupt(data, fmt::format("{} bytes follow its blocks where {} were expected",
                                      static_cast<std::size_t>(end - in), leftover));
    }
    std::memcpy(to, in, leftover);
    return bytes;
  }

  void encode(ByteBuffer& /*data*/, ByteBuffer& /*scratch*/) const override {
    throw RuntimeError("h5tile reads bitshuffle chunks but does not write them (write with hdf5plugin)");
  }

 private:
  [[nodiscard]] RuntimeError corrupt(const ByteBuffer& data, const std::string& why) const {
    return RuntimeError(fmt::format("bitshuffle chunk of {} bytes is corrupt: {}", data.size(), why));
  }

  // One block's compressed bytes into exactly `n_bytes`.
  void decompress(const ByteBuffer& data, const std::byte* in, std::size_t stored, std::byte* out,
                  std::size_t n_bytes) const {
    if (compression_ == kLz4) {
      if (stored > static_cast<std::size_t>(std::numeric_limits<int>::max())) throw corrupt(data, "a block over 2 GiB");
      const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(in), reinterpret_cast<char*>(out),
                                          static_cast<int>(stored), static_cast<int>(n_bytes));
      if (got < 0 || static_cast<std::size_t>(got) != n_bytes) {
        throw corrupt(data, fmt::format("an LZ4 block does not decode to its {} bytes", n_bytes));
      }
      return;
    }
#if H5TILE_WITH_ZSTD
    const std::size_t got = ZSTD_decompress(out, n_bytes, in, stored);
    if (ZSTD_isError(got) != 0 || got != n_bytes) {
      throw corrupt(data, fmt::format("a Zstandard block does not decode to its {} bytes", n_bytes));
    }
#endif
  }

  std::size_t elem_size_;
  std::size_t block_;  // in elements, for uncompressed chunks (compressed ones say theirs)
  unsigned compression_;
};

}  // namespace

std::unique_ptr<Codec> make_bitshuffle(const FilterSpec& spec, std::size_t elem_size) {
  const auto& p = spec.params;
  const std::size_t size = p.size() > 2 ? p[2] : elem_size;
  const std::size_t block = p.size() > 3 && p[3] != 0 ? p[3] : default_block(size);
  const unsigned compression = p.size() > 4 ? p[4] : kNone;
  bool known = compression == kNone || compression == kLz4;
#if H5TILE_WITH_ZSTD
  known = known || compression == kZstd;
#endif
  // An element size other than the dataset's, or a block that is not whole groups of 8: HDF5 and
  // its plugin read such a dataset, if anything does.
  if (!known || size != elem_size || size == 0 || block % kMultiple != 0) return nullptr;
  return std::make_unique<Bitshuffle>(size, block, compression);
}

}  // namespace h5tile::detail
