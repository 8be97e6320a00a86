#pragma once
// Every CUDA runtime call goes through cuda_check, which names the call and CUDA's reason.

#include <string_view>

#include <cuda_runtime_api.h>

namespace h5tile::detail::gpu {

void cuda_check(cudaError_t status, std::string_view what);

// Makes `device` current on this thread for the scope, restoring the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope();

 private:
  int previous_ = 0;
};

}  // namespace h5tile::detail::gpu
