// HDF5's shuffle filter (H5Z_FILTER_SHUFFLE, ID 2): a byte transpose. Client data: [element size].

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {
namespace {

// memcpy that accepts empty ranges (whose pointers may be null: memcpy itself does not).
void copy_bytes(std::byte* out, const std::byte* in, std::size_t size) {
  if (size != 0) std::memcpy(out, in, size);
}

#if defined(__SSE2__)
// 16 elements at a time with SSE2 (every x86-64 CPU has it) for 2-, 4- and 8-byte elements, about
// ten times the byte loop: unshuffling interleaves the E byte streams with unpack instructions;
// shuffling masks byte k out of every element and packs the bytes together.
using V = __m128i;
V load(const std::byte* p) { return _mm_loadu_si128(reinterpret_cast<const V*>(p)); }
void store(std::byte* p, V v) { _mm_storeu_si128(reinterpret_cast<V*>(p), v); }
// A store past the caches where `p` is 16-byte aligned (as streaming stores must be), else store.
void stream(std::byte* p, V v) {
  if ((reinterpret_cast<std::uintptr_t>(p) & 15U) == 0) {
    _mm_stream_si128(reinterpret_cast<V*>(p), v);
  } else {
    store(p, v);
  }
}
template <bool Streaming>
void put(std::byte* p, V v) {
  if constexpr (Streaming) {
    stream(p, v);
  } else {
    store(p, v);
  }
}

// Elements [i, i + 16) from the E streams of n bytes each at `in` to `o` (with streaming stores
// where Streaming).
template <std::size_t E, bool Streaming = false>
void unshuffle16(const std::byte* in, std::size_t n, std::size_t i, std::byte* o) {
  V a[E];  // NOLINT(*-avoid-c-arrays): std::array drops __m128i's alignment attribute
  for (std::size_t k = 0; k < E; ++k) a[k] = load(in + k * n + i);
  if constexpr (E == 2) {
    put<Streaming>(o, _mm_unpacklo_epi8(a[0], a[1]));
    put<Streaming>(o + 16, _mm_unpackhi_epi8(a[0], a[1]));
  } else if constexpr (E == 4) {
    const V lo01 = _mm_unpacklo_epi8(a[0], a[1]), hi01 = _mm_unpackhi_epi8(a[0], a[1]);
    const V lo23 = _mm_unpacklo_epi8(a[2], a[3]), hi23 = _mm_unpackhi_epi8(a[2], a[3]);
    put<Streaming>(o, _mm_unpacklo_epi16(lo01, lo23));
    put<Streaming>(o + 16, _mm_unpackhi_epi16(lo01, lo23));
    put<Streaming>(o + 32, _mm_unpacklo_epi16(hi01, hi23));
    put<Streaming>(o + 48, _mm_unpackhi_epi16(hi01, hi23));
  } else {
    // Bytes 0-3 (q) and 4-7 (r) of each element, then the two halves side by side.
    V pairs_lo[4];  // NOLINT(*-avoid-c-arrays)
    V pairs_hi[4];  // NOLINT(*-avoid-c-arrays)
    for (std::size_t k = 0; k < 4; ++k) {
      pairs_lo[k] = _mm_unpacklo_epi8(a[2 * k], a[2 * k + 1]);  // elements 0-7
      pairs_hi[k] = _mm_unpackhi_epi8(a[2 * k], a[2 * k + 1]);  // elements 8-15
    }
    for (std::size_t h = 0; h < 2; ++h) {
      const V* pr = h == 0 ? pairs_lo : pairs_hi;
      const V q_lo = _mm_unpacklo_epi16(pr[0], pr[1]), q_hi = _mm_unpackhi_epi16(pr[0], pr[1]);
      const V r_lo = _mm_unpacklo_epi16(pr[2], pr[3]), r_hi = _mm_unpackhi_epi16(pr[2], pr[3]);
      std::byte* oh = o + h * 64;
      put<Streaming>(oh, _mm_unpacklo_epi32(q_lo, r_lo));
      put<Streaming>(oh + 16, _mm_unpackhi_epi32(q_lo, r_lo));
      put<Streaming>(oh + 32, _mm_unpacklo_epi32(q_hi, r_hi));
      put<Streaming>(oh + 48, _mm_unpackhi_epi32(q_hi, r_hi));
    }
  }
}

// Byte k of four vectors of 4-byte lanes (16 lanes), in lane order.
V bytes_of_dwords(const V* v, int k) {
  const V mask = _mm_set1_epi32(0xff);
  const auto lane = [&](int j) { return _mm_and_si128(_mm_srli_epi32(v[j], 8 * k), mask); };
  return _mm_packus_epi16(_mm_packs_epi32(lane(0), lane(1)), _mm_packs_epi32(lane(2), lane(3)));
}

// Elements [i, i + 16) at `in` (i * E) to the E streams of n bytes each at `out`.
template <std::size_t E>
void shuffle16(const std::byte* in, std::byte* out, std::size_t n, std::size_t i) {
  const std::byte* e = in + i * E;
  if constexpr (E == 2) {
    const V mask = _mm_set1_epi16(0xff);
    const V v0 = load(e), v1 = load(e + 16);
    store(out + i, _mm_packus_epi16(_mm_and_si128(v0, mask), _mm_and_si128(v1, mask)));
    store(out + n + i, _mm_packus_epi16(_mm_srli_epi16(v0, 8), _mm_srli_epi16(v1, 8)));
  } else if constexpr (E == 4) {
    const V v[4] = {load(e), load(e + 16), load(e + 32), load(e + 48)};  // NOLINT(*-avoid-c-arrays)
    for (int k = 0; k < 4; ++k) store(out + static_cast<std::size_t>(k) * n + i, bytes_of_dwords(v, k));
  } else {
    // The low and the high 4 bytes of the 16 elements, as two sets of four vectors of dwords.
    V lo[4];  // NOLINT(*-avoid-c-arrays)
    V hi[4];  // NOLINT(*-avoid-c-arrays)
    for (std::size_t j = 0; j < 4; ++j) {
      const V a = load(e + 32 * j), b = load(e + 32 * j + 16);  // elements 4j .. 4j + 3
      lo[j] = _mm_unpacklo_epi64(_mm_shuffle_epi32(a, _MM_SHUFFLE(3, 1, 2, 0)),
                                 _mm_shuffle_epi32(b, _MM_SHUFFLE(3, 1, 2, 0)));
      hi[j] = _mm_unpackhi_epi64(_mm_shuffle_epi32(a, _MM_SHUFFLE(3, 1, 2, 0)),
                                 _mm_shuffle_epi32(b, _MM_SHUFFLE(3, 1, 2, 0)));
    }
    for (int k = 0; k < 4; ++k) {
      store(out + static_cast<std::size_t>(k) * n + i, bytes_of_dwords(lo, k));
      store(out + static_cast<std::size_t>(k + 4) * n + i, bytes_of_dwords(hi, k));
    }
  }
}
#endif

// Elements [first, first + count) of the E streams of n bytes each at `in`, to `out`. Fixed
// element sizes let the compiler unroll the inner loop; 2, 4 and 8 bytes go 16 elements at a time
// with SSE2 where it is there, the rest (and other CPUs) byte by byte.
template <std::size_t E, bool Streaming = false>
void unshuffle_fixed(const std::byte* in, std::size_t n, std::size_t first, std::size_t count, std::byte* out) {
  std::size_t j = 0;  // elements done
#if defined(__SSE2__)
  if constexpr (E == 2 || E == 4 || E == 8) {
    for (; j + 16 <= count; j += 16) unshuffle16<E, Streaming>(in, n, first + j, out + j * E);
  }
#endif
  for (; j < count; ++j) {
    for (std::size_t k = 0; k < E; ++k) out[j * E + k] = in[k * n + first + j];
  }
}

template <std::size_t E>
void shuffle_fixed(const std::byte* in, std::byte* out, std::size_t n) {
  std::size_t first = 0;
#if defined(__SSE2__)
  if constexpr (E == 2 || E == 4 || E == 8) {
    for (; first + 16 <= n; first += 16) shuffle16<E>(in, out, n, first);
  }
#endif
  for (std::size_t k = 0; k < E; ++k) {
    for (std::size_t i = first; i < n; ++i) out[k * n + i] = in[i * E + k];
  }
}

// unshuffle_fixed for any element size (the streams of n elements of `elem_size` bytes at `in`).
template <bool Streaming = false>
void unshuffle_elements(const std::byte* in, std::size_t n, std::size_t elem_size, std::size_t first, std::size_t count,
                        std::byte* out) {
  switch (elem_size) {
    case 2: unshuffle_fixed<2, Streaming>(in, n, first, count, out); break;
    case 4: unshuffle_fixed<4, Streaming>(in, n, first, count, out); break;
    case 8: unshuffle_fixed<8, Streaming>(in, n, first, count, out); break;
    case 16: unshuffle_fixed<16>(in, n, first, count, out); break;
    default:
      for (std::size_t j = 0; j < count; ++j) {
        for (std::size_t k = 0; k < elem_size; ++k) out[j * elem_size + k] = in[k * n + first + j];
      }
  }
}

class Shuffle final : public Codec {
 public:
  explicit Shuffle(std::size_t elem_size) : elem_size_(elem_size) {}
  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t /*chunk_bytes*/) const override {
    if (elem_size_ <= 1 || data.size() < 2 * elem_size_) {
      return;  // HDF5 leaves such buffers as they are
    }
    scratch.resize(data.size());
    unshuffle(data.data(), scratch.data(), data.size(), elem_size_);
    data.swap(scratch);
  }

  std::optional<std::size_t> decode_to(const ByteBuffer& data, std::byte* out, std::size_t chunk_bytes) const override {
    if (data.size() > chunk_bytes) {
      throw RuntimeError(fmt::format("{} bytes are more than a chunk ({} bytes)", data.size(), chunk_bytes));
    }
    unshuffle(data.data(), out, data.size(), elem_size_);  // copies what HDF5 leaves as it is
    return data.size();
  }

  bool decode_to_runs(const ByteBuffer& data, const ChunkRuns& runs, std::size_t chunk_bytes) const override {
    // A whole chunk of whole elements only (HDF5 leaves a buffer of fewer than two as it is).
    if (runs.element_size != elem_size_ || elem_size_ <= 1 || data.size() != chunk_bytes ||
        data.size() % elem_size_ != 0 || data.size() < 2 * elem_size_) {
      return false;
    }
    unshuffle_runs(data.data(), data.size() / elem_size_, runs);
    return true;
  }

  void encode(ByteBuffer& data, ByteBuffer& scratch) const override {
    if (elem_size_ <= 1 || data.size() < 2 * elem_size_) {
      return;  // as HDF5 leaves them
    }
    scratch.resize(data.size());
    shuffle(data.data(), scratch.data(), data.size(), elem_size_);
    data.swap(scratch);
  }

  bool encode_from(const std::byte* in, std::size_t size, ByteBuffer& out) const override {
    out.resize(size);
    shuffle(in, out.data(), size, elem_size_);  // copies what HDF5 leaves as it is
    return true;
  }

 private:
  std::size_t elem_size_;
};

}  // namespace

void unshuffle(const std::byte* in, std::byte* out, std::size_t size, std::size_t elem_size) {
  const std::size_t n = elem_size == 0 ? 0 : size / elem_size;
  if (elem_size <= 1 || n <= 1) {
    copy_bytes(out, in, size);
    return;
  }
  unshuffle_elements(in, n, elem_size, 0, n, out);
  copy_bytes(out + n * elem_size, in + n * elem_size, size - n * elem_size);  // the tail
}

void unshuffle_runs(const std::byte* in, std::size_t n, const ChunkRuns& runs) {
#if defined(__SSE2__)
  if (runs.streaming) {
    for (const auto& run : runs.runs) {
      unshuffle_elements<true>(in, n, runs.element_size, run.first, runs.length, run.out);
    }
    _mm_sfence();  // streaming stores are not ordered with the ones that tell other threads the read is done
    return;
  }
#endif
  for (const auto& run : runs.runs) unshuffle_elements(in, n, runs.element_size, run.first, runs.length, run.out);
}

void shuffle(const std::byte* in, std::byte* out, std::size_t size, std::size_t elem_size) {
  const std::size_t n = elem_size == 0 ? 0 : size / elem_size;
  if (elem_size <= 1 || n <= 1) {
    copy_bytes(out, in, size);
    return;
  }
  switch (elem_size) {
    case 2: shuffle_fixed<2>(in, out, n); break;
    case 4: shuffle_fixed<4>(in, out, n); break;
    case 8: shuffle_fixed<8>(in, out, n); break;
    case 16: shuffle_fixed<16>(in, out, n); break;
    default:
      for (std::size_t k = 0; k < elem_size; ++k) {
        for (std::size_t i = 0; i < n; ++i) out[k * n + i] = in[i * elem_size + k];
      }
  }
  copy_bytes(out + n * elem_size, in + n * elem_size, size - n * elem_size);  // the tail
}

std::unique_ptr<Codec> make_shuffle(const FilterSpec& spec, std::size_t elem_size) {
  // HDF5 stores the element size it shuffled by (set_local); without it, the dataset's.
  if (spec.params.size() > 1 || (spec.params.size() == 1 && spec.params[0] == 0)) {
    return nullptr;
  }
  return std::make_unique<Shuffle>(spec.params.empty() ? elem_size : spec.params[0]);
}

}  // namespace h5tile::detail
