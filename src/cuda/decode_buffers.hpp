#pragma once
// The GPU decoder's CUDA resources, one RAII type each: pinned host memory, device memory that
// grows, events and streams (cuda/gpu_decode.cpp).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include <cuda_runtime_api.h>

#include "cuda/check.hpp"

namespace h5tile::detail::gpu {

// Pinned host memory, grown or shrunk to what a read asks for.
class Pinned {
 public:
  Pinned() = default;
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  ~Pinned() { reset(); }
  void resize(std::size_t bytes) {
    if (bytes == size_) return;
    reset();
    void* p = nullptr;
    cuda_check(cudaHostAlloc(&p, std::max<std::size_t>(bytes, 1), cudaHostAllocPortable),
               fmt::format("cudaHostAlloc of {} bytes", bytes));
    p_ = static_cast<std::byte*>(p);
    size_ = bytes;
    held() += bytes;
  }
  void reserve(std::size_t bytes) {
    if (bytes > size_) resize(std::max(bytes, 2 * size_));
  }
  [[nodiscard]] std::byte* data() const noexcept { return p_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // The bytes that every Pinned holds.
  [[nodiscard]] static std::uint64_t total() noexcept { return held().load(); }

 private:
  static std::atomic<std::uint64_t>& held() noexcept {
    static std::atomic<std::uint64_t> bytes{0};
    return bytes;
  }
  void reset() noexcept {
    if (p_ != nullptr) (void)cudaFreeHost(p_);
    held() -= size_;
    p_ = nullptr;
    size_ = 0;
  }
  std::byte* p_ = nullptr;
  std::size_t size_ = 0;
};

// Device memory that grows; growing waits for `stream` (the memory may still be in use there).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p_ != nullptr) (void)cudaFree(p_);
  }
  std::byte* reserve(std::size_t bytes, cudaStream_t stream) {
    if (bytes > size_) {
      cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      if (p_ != nullptr) (void)cudaFree(p_);
      p_ = nullptr;
      size_ = 0;
      void* p = nullptr;
      cuda_check(cudaMalloc(&p, bytes), fmt::format("cudaMalloc of {} bytes for GPU decoding", bytes));
      p_ = static_cast<std::byte*>(p);
      size_ = bytes;
    }
    return p_;
  }
  [[nodiscard]] std::byte* data() const noexcept { return p_; }

 private:
  std::byte* p_ = nullptr;
  std::size_t size_ = 0;
};

// An event that CUDA times (timing: the phases of last_device_io) or only orders.
class Event {
 public:
  explicit Event(bool timing) {
    cuda_check(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { (void)cudaEventDestroy(e_); }
  [[nodiscard]] cudaEvent_t get() const noexcept { return e_; }
  void record(cudaStream_t stream) const { cuda_check(cudaEventRecord(e_, stream), "cudaEventRecord"); }

 private:
  cudaEvent_t e_ = nullptr;
};

class Stream {
 public:
  Stream() { cuda_check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { (void)cudaStreamDestroy(s_); }
  [[nodiscard]] cudaStream_t get() const noexcept { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace h5tile::detail::gpu
