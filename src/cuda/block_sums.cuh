#pragma once
// What the checksum kernels (cuda/adler32.cu, cuda/fletcher32.cu) share: blocks of kThreads threads
// that each sum a part of a chunk into two 64-bit sums and add them up across the block.
#include <cstdint>

namespace h5tile::detail::gpu::checksum {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarps = kThreads / 32;
constexpr unsigned kMostGridY = 65535;  // CUDA's largest grid height: chunks beyond it loop

// A running pair of sums: a checksum's first (a) and its position-weighted second (b).
struct Sums {
  std::uint64_t a;
  std::uint64_t b;
};

// Sums `s` over the block; thread 0 gets the result (others: partial sums). Every thread calls it.
__device__ inline Sums block_sum(Sums s) {
  __shared__ std::uint64_t shared_a[kWarps];
  __shared__ std::uint64_t shared_b[kWarps];
  for (unsigned o = 16; o > 0; o /= 2) {
    s.a += __shfl_down_sync(0xffffffffU, s.a, o);
    s.b += __shfl_down_sync(0xffffffffU, s.b, o);
  }
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  __syncthreads();  // the shared sums of an earlier call have been read
  if (lane == 0) {
    shared_a[warp] = s.a;
    shared_b[warp] = s.b;
  }
  __syncthreads();
  if (warp == 0) {
    s.a = lane < kWarps ? shared_a[lane] : 0;
    s.b = lane < kWarps ? shared_b[lane] : 0;
    for (unsigned o = 16; o > 0; o /= 2) {
      s.a += __shfl_down_sync(0xffffffffU, s.a, o);
      s.b += __shfl_down_sync(0xffffffffU, s.b, o);
    }
  }
  return s;
}

__device__ inline std::uint64_t at_most(std::uint64_t v, std::uint64_t most) { return v < most ? v : most; }

}  // namespace h5tile::detail::gpu::checksum
