#pragma once
// What the GPU benchmarks share: CUDA errors as exceptions, and wall time with the device
// synchronised before and after.
#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

namespace h5tile::bench {

inline void cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(status)));
}

// Seconds `f` takes, the device synchronised before the clock starts and before it stops.
inline double seconds(const std::function<void()>& f) {
  cuda(cudaDeviceSynchronize(), "sync");
  const auto t0 = std::chrono::steady_clock::now();
  f();
  cuda(cudaDeviceSynchronize(), "sync");
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace h5tile::bench
