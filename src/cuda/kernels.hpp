#pragma once
// The CUDA layer's kernels (src/cuda/unshuffle.cu, src/cuda/adler32.cu, src/cuda/fletcher32.cu), compiled by nvcc where
// CMake enables CUDA as a language (H5TILE_WITH_CUDA_KERNELS); cuda/kernels_absent.cpp stands in
// for them otherwise.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace h5tile::detail::gpu {

// Whether they were built (also declared in gpu/decode.hpp, for the layers above).
[[nodiscard]] bool kernels_built() noexcept;

// Undoes HDF5's shuffle filter on `count` chunks of `chunk_bytes` each, `stride` bytes apart (a
// multiple of 16) at `in` (device memory), into `out` (the same layout): byte k of element i of a
// chunk comes from byte k * n + i, n = chunk_bytes / elem_size; the chunk_bytes % elem_size
// trailing bytes are copied as they are. Asynchronous on `stream`. `in` and `out` must not overlap.
void unshuffle_chunks(const std::byte* in, std::byte* out, std::size_t chunk_bytes, std::size_t stride,
                      std::size_t count, std::size_t elem_size, cudaStream_t stream);

// The same for chunks each at its own address: `in` and `out` are device memory holding `count`
// pointers, each a multiple of 16 (8 for 2-byte elements); out[c] may be the chunk's place in the
// destination.
void unshuffle_listed(const std::byte* const* in, std::byte* const* out, std::size_t chunk_bytes, std::size_t count,
                      std::size_t elem_size, cudaStream_t stream);

// The blocks that adler32_chunks gives each chunk of `chunk_bytes`: one per 64 KiB, at least one,
// at most 1024 (the chunk's last block adds up their sums).
[[nodiscard]] constexpr std::size_t adler32_blocks(std::size_t chunk_bytes) noexcept {
  constexpr std::size_t kBytesPerBlock = std::size_t{64} << 10;
  constexpr std::size_t kMostBlocks = 1024;
  const std::size_t blocks = (chunk_bytes + kBytesPerBlock - 1) / kBytesPerBlock;
  return blocks < 1 ? 1 : blocks > kMostBlocks ? kMostBlocks : blocks;
}

// The device scratch memory that adler32_chunks needs for `count` chunks of `chunk_bytes`.
[[nodiscard]] constexpr std::size_t adler32_scratch_bytes(std::size_t chunk_bytes, std::size_t count) noexcept {
  return count * (adler32_blocks(chunk_bytes) * 16 + 4);  // per block two sums; per chunk a counter
}

// Writes to out[c] the Adler-32 (zlib's adler32(), as a zlib stream's trailer holds it) of each of
// `count` chunks of `chunk_bytes`, `stride` bytes apart at `data` (device memory; `data` and
// `stride` multiples of 16), in one launch, each chunk summed by adler32_blocks(chunk_bytes)
// blocks. `out` (device memory, `count` values) and `scratch` (device memory of
// adler32_scratch_bytes(chunk_bytes, count), 8-byte aligned) are written. Asynchronous on `stream`.
void adler32_chunks(const std::byte* data, std::size_t chunk_bytes, std::size_t stride, std::size_t count,
                    std::uint32_t* out, std::byte* scratch, cudaStream_t stream);

// The same for chunks each at its own address: `chunks` is device memory holding `count` pointers,
// each a multiple of 16.
void adler32_listed(const std::byte* const* chunks, std::size_t chunk_bytes, std::size_t count, std::uint32_t* out,
                    std::byte* scratch, cudaStream_t stream);

// The blocks that fletcher32_listed gives each chunk when the largest is `most_bytes`: one per
// 64 KiB, at least one, at most 1024 (the chunk's last block to finish adds up their sums).
[[nodiscard]] constexpr std::size_t fletcher32_blocks(std::size_t most_bytes) noexcept {
  return adler32_blocks(most_bytes);
}

// The device scratch memory that fletcher32_listed needs for `count` chunks of at most `most_bytes`.
[[nodiscard]] constexpr std::size_t fletcher32_scratch_bytes(std::size_t most_bytes, std::size_t count) noexcept {
  return count * (fletcher32_blocks(most_bytes) * 16 + 4);  // per block its sums; per chunk a counter
}

// Writes to out[c] HDF5's Fletcher-32 (H5_checksum_fletcher32, as the fletcher32 filter appends
// it) of each of `count` chunks: chunk c is sizes[c] bytes at chunks[c] (device memory: `count`
// pointers, any alignment, and `count` sizes, each at most `most_bytes`), in one launch, each chunk
// summed by fletcher32_blocks(most_bytes) blocks (core/fletcher32_sums.hpp). `out` (device memory,
// `count` values) and `scratch` (device memory of fletcher32_scratch_bytes(most_bytes, count),
// 8-byte aligned) are written. Asynchronous on `stream`.
void fletcher32_listed(const std::byte* const* chunks, const std::uint64_t* sizes, std::size_t most_bytes,
                       std::size_t count, std::uint32_t* out, std::byte* scratch, cudaStream_t stream);

}  // namespace h5tile::detail::gpu
