#pragma once
// Boxes copied between row-major arrays in device memory, with as few copies as the shapes allow.

#include <cstddef>

#include <cuda_runtime_api.h>

#include <h5tile/array.hpp>

namespace h5tile::detail::gpu {

// Copies box `extent` between row-major arrays of `src_shape` (at `src`, its first element) and
// `dst_shape` (at `dst`) in device memory: trailing axes that both hold whole merge into one run,
// then one 2-D or 3-D copy per remaining outer index. Asynchronous on `stream`.
void copy_box(std::byte* dst, const Shape& dst_shape, const std::byte* src, const Shape& src_shape, const Shape& extent,
              std::size_t es, cudaStream_t stream);

}  // namespace h5tile::detail::gpu
