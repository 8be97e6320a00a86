#pragma once
// HDF5's Fletcher-32 (H5_checksum_fletcher32) as sums that add up part by part, for the GPU's
// check of stored chunks (cuda/fletcher32.cu: many blocks per chunk) and for the host, where the
// unit tests hold it to the CPU codec (engine/codecs/fletcher32.cpp). Compiled by nvcc as
// __host__ __device__, by the C++ compiler as plain inline functions.
//
// The bytes are read as 16-bit big-endian words w_1 .. w_m (an odd last byte is the high byte of
// a last word). sum1 = sum w_i and sum2 = sum (m - i + 1) w_i (the sum of the running sums), both
// mod 65535. Two parts A then B add up as sum1 = sum1_A + sum1_B and sum2 = sum2_A + sum2_B +
// m_B sum1_A: B's words add sum1_A to each of B's running sums. HDF5 folds its sums with an
// end-around carry, so its result holds 0xffff, not 0, for a sum that is a positive multiple of
// 65535, and 0 only where every word is 0: `nonzero` keeps what that needs.

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define H5TILE_HOST_DEVICE __host__ __device__
#else
#define H5TILE_HOST_DEVICE
#endif

namespace h5tile::detail {

inline constexpr std::uint32_t kFletcher32Mod = 65535;

// The sums of a part of `words` 16-bit words, each mod 65535 (0 .. 65534).
struct Fletcher32Sums {
  std::uint32_t sum1 = 0;
  std::uint32_t sum2 = 0;
  std::uint64_t words = 0;
  bool nonzero = false;  // some word is not 0
};

// The 16-bit words that `size` bytes make: an odd last byte makes one.
H5TILE_HOST_DEVICE inline std::uint64_t fletcher32_words(std::uint64_t size) { return (size + 1) / 2; }

// Word j of `size` bytes at `data`: bytes 2j (high) and 2j + 1 (low; 0 past the end).
H5TILE_HOST_DEVICE inline std::uint32_t fletcher32_word(const unsigned char* data, std::uint64_t size,
                                                        std::uint64_t j) {
  const std::uint32_t high = data[2 * j];
  const std::uint32_t low = 2 * j + 1 < size ? data[2 * j + 1] : 0U;
  return high << 8 | low;
}

// The sums of words [first, end) of `size` bytes at `data`, one word after another.
H5TILE_HOST_DEVICE inline Fletcher32Sums fletcher32_sums(const unsigned char* data, std::uint64_t size,
                                                         std::uint64_t first, std::uint64_t end) {
  Fletcher32Sums s;
  std::uint64_t sum1 = 0;
  std::uint64_t sum2 = 0;
  for (std::uint64_t j = first; j < end; ++j) {
    const std::uint32_t w = fletcher32_word(data, size, j);
    sum1 = (sum1 + w) % kFletcher32Mod;
    sum2 = (sum2 + sum1) % kFletcher32Mod;
    s.nonzero = s.nonzero || w != 0;
  }
  s.sum1 = static_cast<std::uint32_t>(sum1);
  s.sum2 = static_cast<std::uint32_t>(sum2);
  s.words = end > first ? end - first : 0;
  return s;
}

// `s` followed by `words` words of 0: each adds sum1 to sum2.
H5TILE_HOST_DEVICE inline Fletcher32Sums fletcher32_shift(Fletcher32Sums s, std::uint64_t words) {
  s.sum2 = static_cast<std::uint32_t>((s.sum2 + (words % kFletcher32Mod) * s.sum1) % kFletcher32Mod);
  s.words += words;
  return s;
}

// The sums of part `a` followed by part `b`.
H5TILE_HOST_DEVICE inline Fletcher32Sums fletcher32_combine(const Fletcher32Sums& a, const Fletcher32Sums& b) {
  Fletcher32Sums s = fletcher32_shift(a, b.words);
  s.sum1 = (s.sum1 + b.sum1) % kFletcher32Mod;
  s.sum2 = (s.sum2 + b.sum2) % kFletcher32Mod;
  s.nonzero = a.nonzero || b.nonzero;
  return s;
}

// The checksum of the bytes whose sums are `s`, as HDF5 computes it: sum2 << 16 | sum1, each
// 0xffff for a positive multiple of 65535 (a part with a word that is not 0 has positive sums).
H5TILE_HOST_DEVICE inline std::uint32_t fletcher32_value(const Fletcher32Sums& s) {
  const std::uint32_t sum1 = s.nonzero && s.sum1 == 0 ? kFletcher32Mod : s.sum1;
  const std::uint32_t sum2 = s.nonzero && s.sum2 == 0 ? kFletcher32Mod : s.sum2;
  return sum2 << 16 | sum1;
}

// Whether a stored checksum (little-endian after the bytes) is `sum`: HDF5 before 1.6.3 stored
// the bytes of each 16-bit half swapped, and HDF5 accepts both.
H5TILE_HOST_DEVICE inline bool fletcher32_matches(std::uint32_t stored, std::uint32_t sum) {
  const std::uint32_t swapped = ((sum & 0x00ff00ffU) << 8) | ((sum >> 8) & 0x00ff00ffU);
  return stored == sum || stored == swapped;
}

}  // namespace h5tile::detail
