// Boxes copied between row-major arrays in device memory (cuda/copy_box.hpp).
#include "cuda/copy_box.hpp"

#include <vector>

#include "cuda/check.hpp"
#include "engine/raw_transfer.hpp"

namespace h5tile::detail::gpu {

void copy_box(std::byte* dst, const Shape& dst_shape, const std::byte* src, const Shape& src_shape, const Shape& extent,
              std::size_t es, cudaStream_t stream) {
  const auto rank = extent.size();
  if (rank == 0) {
    cuda_check(cudaMemcpyAsync(dst, src, es, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    return;
  }
  const auto src_strides = rowmajor_strides(src_shape, es);
  const auto dst_strides = rowmajor_strides(dst_shape, es);
  std::size_t k = rank - 1;  // first axis of the run
  std::size_t width = extent[k] * es;
  while (k > 0 && extent[k] == src_shape[k] && extent[k] == dst_shape[k]) {
    --k;
    width *= extent[k];
  }
  if (k == 0) {
    cuda_check(cudaMemcpyAsync(dst, src, width, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    return;
  }
  // Axes k - 1 (rows) and, where there is one, k - 2 (slices) go in one copy; the rest loop.
  const std::size_t row = k - 1;
  const bool slices = row > 0;
  const std::size_t outer = slices ? row - 1 : 0;
  std::vector<std::uint64_t> idx(outer, 0);
  for (;;) {
    const std::byte* s = src;
    std::byte* d = dst;
    for (std::size_t a = 0; a < outer; ++a) {
      s += static_cast<std::int64_t>(idx[a]) * src_strides[a];
      d += static_cast<std::int64_t>(idx[a]) * dst_strides[a];
    }
    const auto spitch = static_cast<std::size_t>(src_strides[row]);
    const auto dpitch = static_cast<std::size_t>(dst_strides[row]);
    if (!slices) {
      cuda_check(cudaMemcpy2DAsync(d, dpitch, s, spitch, width, extent[row], cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpy2DAsync");
    } else {
      cudaMemcpy3DParms p{};
      // cudaPitchedPtr: pointer, row pitch, row width, rows per slice.
      p.srcPtr = {const_cast<std::byte*>(s), spitch, width,  // NOLINT(*-const-cast)
                  static_cast<std::size_t>(src_strides[row - 1]) / spitch};
      p.dstPtr = {d, dpitch, width, static_cast<std::size_t>(dst_strides[row - 1]) / dpitch};
      p.extent = {width, extent[row], extent[row - 1]};
      p.kind = cudaMemcpyDeviceToDevice;
      cuda_check(cudaMemcpy3DAsync(&p, stream), "cudaMemcpy3DAsync");
    }
    std::size_t a = outer;
    while (a > 0 && ++idx[a - 1] == extent[a - 1]) {
      idx[a - 1] = 0;
      --a;
    }
    if (a == 0) return;
  }
}

}  // namespace h5tile::detail::gpu
