// The Fletcher-32 of stored chunks, checked on the GPU before they are decoded where fletcher32 is
// the last filter (cuda/gpu_decode.cpp): the checksum covers the stored bytes, already on the
// device, so nothing more crosses PCIe.
//
// Each of a chunk's blocks sums its own words [begin, end) of the chunk (core/fletcher32_sums.hpp):
// sum1_k = sum w_j and sum2_k = sum (end - j) w_j, then shifts sum2_k by the words after its part
// (fletcher32_shift: as if they were zeros, each adds sum1_k). The shifted sums of the parts add up
// to the chunk's: the last block of a chunk to finish (a counter per chunk) adds them and writes
// HDF5's checksum (fletcher32_value). Chunks differ in size (they are compressed): each has its
// pointer and size, and the blocks past a short chunk's end sum nothing.
#include <cstdint>
#include <string>

#include "core/fletcher32_sums.hpp"
#include "cuda/block_sums.cuh"
#include "cuda/check.hpp"
#include "cuda/kernels.hpp"

namespace h5tile::detail::gpu {
namespace {

using checksum::at_most;
using checksum::block_sum;
using checksum::kMostGridY;
using checksum::kThreads;
using checksum::Sums;

// A block's sums of its part, shifted to the chunk's end (16 bytes, as fletcher32_scratch_bytes counts).
struct Partial {
  std::uint32_t sum1;
  std::uint32_t sum2;
  std::uint32_t nonzero;
  std::uint32_t unused;
};

__global__ void fletcher32_kernel(const unsigned char* const* chunks, const std::uint64_t* sizes, std::size_t count,
                                  std::uint64_t part, Partial* partials, unsigned* arrivals, std::uint32_t* out) {
  __shared__ bool last;
  for (std::size_t c = blockIdx.y; c < count; c += gridDim.y) {
    const unsigned char* chunk = chunks[c];
    const std::uint64_t size = sizes[c];
    const std::uint64_t words = fletcher32_words(size);
    const std::uint64_t begin = at_most(blockIdx.x * part, words);
    const std::uint64_t end = at_most(begin + part, words);
    // Each term is below 65535^2 < 2^32: 64 bits hold far more of them than a thread adds.
    Sums s{0, 0};
    unsigned nonzero = 0;
    for (std::uint64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
      const std::uint32_t w = fletcher32_word(chunk, size, j);
      s.a += w;
      s.b += (end - j) % kFletcher32Mod * w;
      nonzero |= w;
    }
    s.a %= kFletcher32Mod;
    s.b %= kFletcher32Mod;
    s = block_sum(s);
    const bool any = __syncthreads_or(nonzero != 0) != 0;
    if (threadIdx.x == 0) {
      Fletcher32Sums mine;
      mine.sum1 = static_cast<std::uint32_t>(s.a % kFletcher32Mod);
      mine.sum2 = static_cast<std::uint32_t>(s.b % kFletcher32Mod);
      mine.words = end - begin;
      mine.nonzero = any;
      mine = fletcher32_shift(mine, words - end);
      partials[c * gridDim.x + blockIdx.x] = {mine.sum1, mine.sum2, any ? 1U : 0U, 0U};
      __threadfence();  // the partial sums are seen by the chunk's last block
      last = atomicAdd(&arrivals[c], 1U) == gridDim.x - 1;
    }
    __syncthreads();
    if (last) {
      Sums t{0, 0};
      unsigned seen = 0;
      const volatile Partial* theirs = partials + c * gridDim.x;
      for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) {
        t.a += theirs[k].sum1;
        t.b += theirs[k].sum2;
        seen |= theirs[k].nonzero;
      }
      t = block_sum(t);
      const bool chunk_nonzero = __syncthreads_or(seen != 0) != 0;
      if (threadIdx.x == 0) {
        Fletcher32Sums total;
        total.sum1 = static_cast<std::uint32_t>(t.a % kFletcher32Mod);
        total.sum2 = static_cast<std::uint32_t>(t.b % kFletcher32Mod);
        total.words = words;
        total.nonzero = chunk_nonzero;
        out[c] = fletcher32_value(total);
      }
    }
    __syncthreads();  // `last` is read before the next chunk sets it
  }
}

}  // namespace

void fletcher32_listed(const std::byte* const* chunks, const std::uint64_t* sizes, std::size_t most_bytes,
                       std::size_t count, std::uint32_t* out, std::byte* scratch, cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t blocks = fletcher32_blocks(most_bytes);
  const std::uint64_t most_words = fletcher32_words(most_bytes);
  const std::uint64_t part = (most_words + blocks - 1) / blocks;
  auto* partials = reinterpret_cast<Partial*>(scratch);
  auto* arrivals = reinterpret_cast<unsigned*>(scratch + count * blocks * sizeof(Partial));
  cuda_check(cudaMemsetAsync(arrivals, 0, count * sizeof(unsigned), stream), "cudaMemsetAsync");
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(count < kMostGridY ? count : kMostGridY));
  fletcher32_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const unsigned char* const*>(chunks), sizes, count,
                                                   part < 1 ? 1 : part, partials, arrivals, out);
  cuda_check(cudaGetLastError(), "Fletcher-32 kernel (" + std::to_string(count) + " chunks of at most " +
                                     std::to_string(most_bytes) + " bytes)");
}

}  // namespace h5tile::detail::gpu
