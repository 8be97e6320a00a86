#pragma once
// The CUDA layer's kernels (src/cuda/unshuffle.cu), compiled by nvcc where CMake enables CUDA as a
// language (H5TILE_WITH_CUDA_KERNELS); cuda/kernels_absent.cpp stands in for them otherwise.

#include <cstddef>

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

}  // namespace h5tile::detail::gpu
