// The staging path between files and device memory: a bounded pool of pinned host buffers
// per device, each with its own stream and event, so that several reads (or writes) and
// their copies are in flight at once while pinned memory stays within its size (gpu::Staging).
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "cuda/check.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"

namespace h5tile::detail::gpu {
namespace {

struct Slot {
  std::byte* host = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  bool pending = false;  // an asynchronous copy from `host` may still run
};

class StagingPool {
 public:
  StagingPool(int device, std::size_t slot_bytes, std::size_t slots) : device_(device), slot_bytes_(slot_bytes) {
    const DeviceScope scope(device);
    slots_.resize(slots);
    for (auto& s : slots_) {
      void* p = nullptr;
      cuda_check(cudaHostAlloc(&p, slot_bytes, cudaHostAllocPortable),
                 fmt::format("cudaHostAlloc of {} bytes", slot_bytes));
      s.host = static_cast<std::byte*>(p);
      cuda_check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      cuda_check(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming), "cudaEventCreate");
      free_.push_back(&s);
    }
  }
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;
  ~StagingPool() {
    for (auto& s : slots_) {
      if (s.stream != nullptr) (void)cudaStreamSynchronize(s.stream);
      (void)cudaEventDestroy(s.done);
      (void)cudaStreamDestroy(s.stream);
      (void)cudaFreeHost(s.host);
    }
  }

  Slot& acquire() {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return !free_.empty(); });
    Slot& s = *free_.front();
    free_.pop_front();
    lock.unlock();
    if (s.pending) {
      cuda_check(cudaEventSynchronize(s.done), "cudaEventSynchronize");
      s.pending = false;
    }
    return s;
  }

  void release(Slot& s) {
    {
      const std::lock_guard lock(mutex_);
      free_.push_back(&s);
    }
    available_.notify_one();
  }

  [[nodiscard]] std::size_t slot_bytes() const noexcept { return slot_bytes_; }
  [[nodiscard]] std::size_t pinned_bytes() const noexcept { return slot_bytes_ * slots_.size(); }
  [[nodiscard]] int device() const noexcept { return device_; }

 private:
  int device_;
  std::size_t slot_bytes_;
  std::deque<Slot> slots_;
  std::deque<Slot*> free_;
  std::mutex mutex_;
  std::condition_variable available_;
};

std::mutex pools_mutex;
std::map<std::pair<int, unsigned>, std::shared_ptr<StagingPool>> pools;  // by device and Staging::pool

// The pool of `device` for `staging` (rebuilt when a call asks for another size).
std::shared_ptr<StagingPool> pool_for(int device, const Staging& staging) {
  const auto slot_bytes = staging.piece_bytes;
  const auto slots = std::max<std::size_t>(1, staging.bytes / slot_bytes);
  const std::lock_guard lock(pools_mutex);
  auto& pool = pools[{device, staging.pool}];
  if (!pool || pool->slot_bytes() != slot_bytes || pool->pinned_bytes() != slot_bytes * slots) {
    pool.reset();  // (operations still using the old pool keep it alive)
    pool = std::make_shared<StagingPool>(device, slot_bytes, slots);
  }
  return pool;
}

// Copies one piece between packed host memory and strided device memory, as few
// cudaMemcpy2DAsync calls as the strides allow (one cudaMemcpyAsync per run where runs repeat
// device bytes: a zero stride, as of a broadcast array, which a 2-D copy refuses).
void copy_piece(const DeviceRegion& region, std::byte* host, std::size_t es, bool to_device, cudaStream_t stream) {
  const auto rank = region.extent.size();
  const auto kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (rank == 0) {
    cuda_check(to_device ? cudaMemcpyAsync(region.ptr, host, es, kind, stream)
                         : cudaMemcpyAsync(host, region.ptr, es, kind, stream),
               "cudaMemcpyAsync");
    return;
  }
  for (std::size_t a = 0; a < rank; ++a) {
    if (region.strides[a] < 0) {
      throw InvalidArgument("device arrays with negative strides are not supported: pass a contiguous copy");
    }
    if (to_device && region.strides[a] == 0 && region.extent[a] > 1) {
      throw InvalidArgument(
          "a device array to read into repeats elements (a zero stride, as of a broadcast array): pass a "
          "contiguous array");
    }
  }
  // A 2-D copy moves `height` runs of `width` contiguous bytes, `dpitch` apart in device
  // memory and packed in host memory; the axes above the height axis are looped over.
  std::uint64_t width = es;
  std::uint64_t height = 1;
  std::size_t dpitch = es;
  std::size_t outer_axes = 0;
  if (region.strides[rank - 1] == static_cast<std::int64_t>(es)) {
    std::size_t k = rank - 1;  // first axis of the contiguous run
    while (k > 0 && region.strides[k - 1] == region.strides[k] * static_cast<std::int64_t>(region.extent[k])) {
      --k;
    }
    for (std::size_t a = k; a < rank; ++a) width *= region.extent[a];
    dpitch = width;
    if (k > 0) {
      height = region.extent[k - 1];
      dpitch = static_cast<std::size_t>(region.strides[k - 1]);
      outer_axes = k - 1;
    }
  } else {  // strided elements: each element is a run
    height = region.extent[rank - 1];
    dpitch = static_cast<std::size_t>(region.strides[rank - 1]);
    outer_axes = rank - 1;
  }
  std::vector<std::uint64_t> idx(outer_axes, 0);
  std::byte* h = host;
  for (;;) {
    std::byte* d = region.ptr;
    for (std::size_t a = 0; a < outer_axes; ++a) d += static_cast<std::int64_t>(idx[a]) * region.strides[a];
    if (height > 1 && dpitch < width) {  // runs that share device bytes
      if (to_device) {
        throw InvalidArgument("a device array to read into has elements that overlap: pass a contiguous array");
      }
      for (std::uint64_t r = 0; r < height; ++r) {
        cuda_check(cudaMemcpyAsync(h + r * width, d + r * dpitch, width, kind, stream), "cudaMemcpyAsync");
      }
    } else {
      cuda_check(to_device ? cudaMemcpy2DAsync(d, dpitch, h, width, width, height, kind, stream)
                           : cudaMemcpy2DAsync(h, width, d, dpitch, width, height, kind, stream),
                 "cudaMemcpy2DAsync");
    }
    h += width * height;
    std::size_t a = outer_axes;
    while (a > 0 && ++idx[a - 1] == region.extent[a - 1]) {
      idx[a - 1] = 0;
      --a;
    }
    if (a == 0) return;
  }
}

}  // namespace

std::uint64_t staging_pinned_bytes() {
  const std::lock_guard lock(pools_mutex);
  std::uint64_t total = 0;
  for (const auto& [device, pool] : pools) total += pool ? pool->pinned_bytes() : 0;
  return total;
}

void stage_to_device(int device, std::size_t count, std::size_t elem_size,
                     const std::function<DeviceRegion(std::size_t)>& region,
                     const std::function<void(std::size_t, std::byte*)>& fill, unsigned threads,
                     const Staging& staging) {
  const auto pool = pool_for(device, staging);
  std::mutex used_mutex;
  std::vector<cudaStream_t> used;
  parallel_for(count, threads, [&](std::size_t i) {
    const DeviceScope scope(device);
    Slot& slot = pool->acquire();
    try {
      fill(i, slot.host);
      copy_piece(region(i), slot.host, elem_size, true, slot.stream);
      cuda_check(cudaEventRecord(slot.done, slot.stream), "cudaEventRecord");
      slot.pending = true;
    } catch (...) {
      (void)cudaStreamSynchronize(slot.stream);
      slot.pending = false;
      pool->release(slot);
      throw;
    }
    {
      const std::lock_guard lock(used_mutex);
      used.push_back(slot.stream);
    }
    pool->release(slot);
  });
  const DeviceScope scope(device);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  for (auto* stream : used) cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  note_path("staging");
}

void stage_from_device(int device, std::size_t count, std::size_t elem_size,
                       const std::function<DeviceRegion(std::size_t)>& region,
                       const std::function<void(std::size_t, const std::byte*)>& drain, unsigned threads,
                       const Staging& staging) {
  const auto pool = pool_for(device, staging);
  parallel_for(count, threads, [&](std::size_t i) {
    const DeviceScope scope(device);
    Slot& slot = pool->acquire();
    try {
      copy_piece(region(i), slot.host, elem_size, false, slot.stream);
      cuda_check(cudaStreamSynchronize(slot.stream), "cudaStreamSynchronize");
      drain(i, slot.host);
    } catch (...) {
      pool->release(slot);
      throw;
    }
    pool->release(slot);
  });
  note_path("staging");
}

}  // namespace h5tile::detail::gpu
