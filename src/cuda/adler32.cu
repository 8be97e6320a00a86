// The Adler-32 of chunks inflated on the GPU, checked against their zlib streams' trailers
// (cuda/gpu_decode.cpp): nvCOMP inflates raw deflate and leaves the trailer unchecked.
//
// For bytes x_0 .. x_{n-1}, Adler-32 is a = 1 + A and b = n + B (mod 65521), with the sums
// A = sum x_i and B = sum (n - i) x_i. Each of a chunk's blocks sums its own part [begin, end)
// of the chunk into A_k and B_k = sum (end - i) x_i (16 bytes per thread at a time, with dp4a),
// then adds (n - end) A_k to B_k: zlib's adler32_combine, which shifts a part's B by the length
// of what follows it. The shifted sums of the parts simply add up: the last block of a chunk to
// finish (a counter per chunk) adds them and writes the chunk's Adler-32. Sums stay in 64 bits
// and are reduced mod 65521 before they can overflow.
#include <cstdint>
#include <string>

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

constexpr std::uint32_t kMod = 65521;

// Byte j of a 16-byte word at distance `left` (mod 65521) from its part's end weighs left - j:
// the word adds sum x_j to A and left * sum x_j - sum j x_j to B (sum j x_j <= 120 * 255 < kMod).
__device__ void add_word(uint4 v, std::uint32_t left, Sums& s) {
  const std::uint32_t ones = 0x01010101U;
  const std::uint32_t sum = __dp4a(v.x, ones, __dp4a(v.y, ones, __dp4a(v.z, ones, __dp4a(v.w, ones, 0U))));
  const std::uint32_t weighted =
      __dp4a(v.x, 0x03020100U, __dp4a(v.y, 0x07060504U, __dp4a(v.z, 0x0b0a0908U, __dp4a(v.w, 0x0f0e0d0cU, 0U))));
  s.a += sum;
  s.b += std::uint64_t{left} * sum + (kMod - weighted);
}

// Chunk c at data + c * stride, or (data null) at pointers[c].
__global__ void adler32_kernel(const std::uint8_t* __restrict__ data, std::size_t stride,
                               const std::uint8_t* const* pointers, std::size_t n, std::size_t count, std::size_t part,
                               Sums* partials, unsigned* arrivals, std::uint32_t* out) {
  __shared__ bool last;
  for (std::size_t c = blockIdx.y; c < count; c += gridDim.y) {
    const std::uint8_t* chunk = data != nullptr ? data + c * stride : pointers[c];
    const std::size_t begin = at_most(blockIdx.x * part, n);
    const std::size_t end = at_most(begin + part, n);
    const std::size_t words = (end - begin) / 16;
    Sums s{0, 0};
    const auto* w = reinterpret_cast<const uint4*>(chunk + begin);
    for (std::size_t i = threadIdx.x; i < words; i += blockDim.x) {
      add_word(w[i], static_cast<std::uint32_t>((end - begin - 16 * i) % kMod), s);
    }
    for (std::size_t i = begin + 16 * words + threadIdx.x; i < end; i += blockDim.x) {
      const std::uint32_t x = chunk[i];
      s.a += x;
      s.b += (end - i) % kMod * x;
    }
    s.a %= kMod;
    s.b %= kMod;
    s = block_sum(s);
    if (threadIdx.x == 0) {
      const std::uint64_t a = s.a % kMod;
      partials[c * gridDim.x + blockIdx.x] = {a, (s.b + (n - end) % kMod * a) % kMod};
      __threadfence();  // the partial sums are seen by the chunk's last block
      last = atomicAdd(&arrivals[c], 1U) == gridDim.x - 1;
    }
    __syncthreads();
    if (last) {
      Sums t{0, 0};
      const volatile Sums* mine = partials + c * gridDim.x;
      for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) {
        t.a += mine[k].a;
        t.b += mine[k].b;
      }
      t = block_sum(t);
      if (threadIdx.x == 0) {
        const auto a = static_cast<std::uint32_t>((1 + t.a) % kMod);
        const auto b = static_cast<std::uint32_t>((n % kMod + t.b) % kMod);
        out[c] = b << 16 | a;
      }
    }
    __syncthreads();  // `last` is read before the next chunk sets it
  }
}

void adler32(const std::byte* data, std::size_t stride, const std::byte* const* pointers, std::size_t chunk_bytes,
             std::size_t count, std::uint32_t* out, std::byte* scratch, cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t blocks = adler32_blocks(chunk_bytes);
  const std::size_t part = ((chunk_bytes + blocks - 1) / blocks + 15) / 16 * 16;  // parts start 16 bytes aligned
  auto* partials = reinterpret_cast<Sums*>(scratch);
  auto* arrivals = reinterpret_cast<unsigned*>(scratch + count * blocks * sizeof(Sums));
  cuda_check(cudaMemsetAsync(arrivals, 0, count * sizeof(unsigned), stream), "cudaMemsetAsync");
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(count < kMostGridY ? count : kMostGridY));
  adler32_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const std::uint8_t*>(data), stride,
                                                reinterpret_cast<const std::uint8_t* const*>(pointers), chunk_bytes,
                                                count, part, partials, arrivals, out);
  cuda_check(cudaGetLastError(),
             "Adler-32 kernel (" + std::to_string(count) + " chunks of " + std::to_string(chunk_bytes) + " bytes)");
}

}  // namespace

void adler32_chunks(const std::byte* data, std::size_t chunk_bytes, std::size_t stride, std::size_t count,
                    std::uint32_t* out, std::byte* scratch, cudaStream_t stream) {
  adler32(data, stride, nullptr, chunk_bytes, count, out, scratch, stream);
}

void adler32_listed(const std::byte* const* chunks, std::size_t chunk_bytes, std::size_t count, std::uint32_t* out,
                    std::byte* scratch, cudaStream_t stream) {
  adler32(nullptr, 0, chunks, chunk_bytes, count, out, scratch, stream);
}

}  // namespace h5tile::detail::gpu
