#pragma once
// Device memory for arrays (core/array.cpp): what core needs of the GPU layer, declared here at
// the bottom and defined by whichever GPU layer is built (src/cuda/backend.cpp, or
// src/gpu/without_cuda.cpp, whose allocate throws).

#include <cstddef>
#include <cstdint>

namespace h5tile::detail::gpu {

// `bytes` of memory on CUDA device `device` (cudaMalloc). Throws RuntimeError when it fails.
[[nodiscard]] std::byte* allocate(std::uint64_t bytes, int device);
// Frees what allocate returned.
void release(std::byte* p) noexcept;

}  // namespace h5tile::detail::gpu
