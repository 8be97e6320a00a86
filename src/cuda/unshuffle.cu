// HDF5's shuffle filter undone on the GPU, for the chunks that nvCOMP has just decoded (a byte
// transpose per chunk: see cuda/kernels.hpp). Elements of 2, 4 and 8 bytes, with chunks whose
// element count is a multiple of 4 (nearly all), go four elements per thread: one 4-byte load
// from each of the E byte streams (coalesced across the warp), the bytes put in place in
// registers, one 8-, 16- or 32-byte store (chunks start at a multiple of 16 bytes: `stride`).
// Anything else goes byte by byte. The chunks lie `stride` bytes apart, or each at its own
// address (a table in device memory: a chunk unshuffled straight into its place in the destination).
#include <cstdint>
#include <string>

#include "cuda/check.hpp"
#include "cuda/kernels.hpp"

namespace h5tile::detail::gpu {
namespace {

constexpr unsigned kThreads = 256;

// Where chunk c starts: `stride` bytes apart from `base`, or at pointers[c] (device memory).
struct Strided {
  std::uint8_t* base;
  std::size_t stride;
  __device__ std::uint8_t* operator()(std::size_t c) const { return base + c * stride; }
};
struct Listed {
  std::uint8_t* const* pointers;
  __device__ std::uint8_t* operator()(std::size_t c) const { return pointers[c]; }
};

template <unsigned E, class In, class Out>
__global__ void unshuffle_by_four(In in, Out out, std::size_t n, std::size_t groups_per_chunk, std::size_t groups) {
  for (std::size_t g = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; g < groups;
       g += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t c = g / groups_per_chunk;
    const std::size_t q = g % groups_per_chunk;  // elements 4q .. 4q + 3 of chunk c
    const std::uint8_t* src = in(c) + 4 * q;
    std::uint32_t w[E];  // w[k]: byte k of the four elements
#pragma unroll
    for (unsigned k = 0; k < E; ++k) w[k] = *reinterpret_cast<const std::uint32_t*>(src + k * n);
    std::uint32_t o[E];  // the four elements, as they lie in memory
#pragma unroll
    for (unsigned j = 0; j < E; ++j) {
      std::uint32_t word = 0;
#pragma unroll
      for (unsigned p = 0; p < 4; ++p) {
        const unsigned b = 4 * j + p;  // byte b of the output: byte b % E of element b / E
        word |= ((w[b % E] >> (8 * (b / E))) & 0xffU) << (8 * p);
      }
      o[j] = word;
    }
    std::uint8_t* dst = out(c) + 4 * q * E;
    if constexpr (E == 2) {
      *reinterpret_cast<uint2*>(dst) = make_uint2(o[0], o[1]);
    } else {
#pragma unroll
      for (unsigned j = 0; j < E; j += 4) {
        *reinterpret_cast<uint4*>(dst + 4 * j) = make_uint4(o[j], o[j + 1], o[j + 2], o[j + 3]);
      }
    }
  }
}

template <class In, class Out>
__global__ void unshuffle_bytes(In in, Out out, std::size_t chunk_bytes, std::size_t elem_size, std::size_t total) {
  const std::size_t n = chunk_bytes / elem_size;
  for (std::size_t b = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; b < total;
       b += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t c = b / chunk_bytes;
    const std::size_t r = b % chunk_bytes;
    const std::uint8_t* src = in(c);
    out(c)[r] = r < n * elem_size ? src[(r % elem_size) * n + r / elem_size] : src[r];
  }
}

unsigned blocks_for(std::size_t work) {
  const std::size_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < (std::size_t{1} << 20) ? blocks : (std::size_t{1} << 20));
}

template <class In, class Out>
void unshuffle(In i, Out o, std::size_t chunk_bytes, std::size_t count, std::size_t elem_size, cudaStream_t stream) {
  if (count == 0 || chunk_bytes == 0) return;
  const std::size_t n = chunk_bytes / elem_size;
  if ((elem_size == 2 || elem_size == 4 || elem_size == 8) && n % 4 == 0 && n * elem_size == chunk_bytes) {
    const std::size_t per_chunk = n / 4;
    const std::size_t groups = per_chunk * count;
    if (groups == 0) return;
    const unsigned blocks = blocks_for(groups);
    switch (elem_size) {
      case 2: unshuffle_by_four<2><<<blocks, kThreads, 0, stream>>>(i, o, n, per_chunk, groups); break;
      case 4: unshuffle_by_four<4><<<blocks, kThreads, 0, stream>>>(i, o, n, per_chunk, groups); break;
      default: unshuffle_by_four<8><<<blocks, kThreads, 0, stream>>>(i, o, n, per_chunk, groups); break;
    }
  } else {
    const std::size_t total = chunk_bytes * count;
    unshuffle_bytes<<<blocks_for(total), kThreads, 0, stream>>>(i, o, chunk_bytes, elem_size, total);
  }
  cuda_check(cudaGetLastError(),
             "unshuffle kernel (" + std::to_string(count) + " chunks of " + std::to_string(chunk_bytes) + " bytes)");
}

}  // namespace

bool kernels_built() noexcept { return true; }

void unshuffle_chunks(const std::byte* in, std::byte* out, std::size_t chunk_bytes, std::size_t stride,
                      std::size_t count, std::size_t elem_size, cudaStream_t stream) {
  unshuffle(Strided{reinterpret_cast<std::uint8_t*>(const_cast<std::byte*>(in)), stride},  // NOLINT(*-const-cast)
            Strided{reinterpret_cast<std::uint8_t*>(out), stride}, chunk_bytes, count, elem_size, stream);
}

void unshuffle_listed(const std::byte* const* in, std::byte* const* out, std::size_t chunk_bytes, std::size_t count,
                      std::size_t elem_size, cudaStream_t stream) {
  unshuffle(Listed{reinterpret_cast<std::uint8_t* const*>(const_cast<std::byte* const*>(in))},  // NOLINT(*-const-cast)
            Listed{reinterpret_cast<std::uint8_t* const*>(out)}, chunk_bytes, count, elem_size, stream);
}

}  // namespace h5tile::detail::gpu
