// A CUDA build without nvcc's kernels (H5TILE_WITH_CUDA_KERNELS off): the GPU decoder then leaves
// shuffled datasets, deflate (whose Adler-32 only the kernel checks) and fletcher32 to the CPU
// (gpu_filters says why), so the kernels are never launched.
#include <h5tile/error.hpp>

#include "cuda/kernels.hpp"
#include "gpu/decode.hpp"

namespace h5tile::detail::gpu {
namespace {

[[noreturn]] void absent() {
  throw RuntimeError("h5tile was built without its GPU kernels (H5TILE_WITH_CUDA_KERNELS=OFF)");
}

}  // namespace

bool kernels_built() noexcept { return false; }

void unshuffle_chunks(const std::byte* /*in*/, std::byte* /*out*/, std::size_t /*chunk_bytes*/, std::size_t /*stride*/,
                      std::size_t /*count*/, std::size_t /*elem_size*/, cudaStream_t /*stream*/) {
  absent();
}

void adler32_chunks(const std::byte* /*data*/, std::size_t /*chunk_bytes*/, std::size_t /*stride*/,
                    std::size_t /*count*/, std::uint32_t* /*out*/, std::byte* /*scratch*/, cudaStream_t /*stream*/) {
  absent();
}

void unshuffle_listed(const std::byte* const* /*in*/, std::byte* const* /*out*/, std::size_t /*chunk_bytes*/,
                      std::size_t /*count*/, std::size_t /*elem_size*/, cudaStream_t /*stream*/) {
  absent();
}

void adler32_listed(const std::byte* const* /*chunks*/, std::size_t /*chunk_bytes*/, std::size_t /*count*/,
                    std::uint32_t* /*out*/, std::byte* /*scratch*/, cudaStream_t /*stream*/) {
  absent();
}

void fletcher32_listed(const std::byte* const* /*chunks*/, const std::uint64_t* /*sizes*/, std::size_t /*most_bytes*/,
                       std::size_t /*count*/, std::uint32_t* /*out*/, std::byte* /*scratch*/, cudaStream_t /*stream*/) {
  absent();
}

}  // namespace h5tile::detail::gpu
