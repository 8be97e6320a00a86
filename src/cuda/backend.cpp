// Device memory, pointer detection and the I/O report of the CUDA build.
#include <atomic>
#include <mutex>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "cuda/check.hpp"
#include "gpu/backend.hpp"
#include "gpu/decode.hpp"

namespace h5tile::detail::gpu {

void cuda_check(cudaError_t status, std::string_view what) {
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error state
    throw RuntimeError(
        fmt::format("{}: CUDA error {} ({})", what, cudaGetErrorName(status), cudaGetErrorString(status)));
  }
}

DeviceScope::DeviceScope(int device) {
  cuda_check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) {
    cuda_check(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  }
}

DeviceScope::~DeviceScope() { (void)cudaSetDevice(previous_); }

bool built_with_cuda() noexcept { return true; }

int device_count() noexcept {
  // Asked once: without a driver, every cudaGetDeviceCount retries loading it (measured
  // 0.4 s per call on a machine with no GPU), and the visible devices do not change.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

int device_of(const void* ptr) {
  if (ptr == nullptr || device_count() == 0) {
    return -1;
  }
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged ? attributes.device : -1;
}

int device_of(const ArrayView& view) {
  switch (view.memory) {
    case MemoryKind::Host: return -1;
    case MemoryKind::Device: {
      const int device = device_of(view.data);
      if (device < 0) {
        throw InvalidArgument("an ArrayView declared as device memory does not point to CUDA device memory");
      }
      return device;
    }
    case MemoryKind::Auto:
    default: return device_of(view.data);
  }
}

std::byte* allocate(std::uint64_t bytes, int device) {
  if (device >= device_count()) {
    throw RuntimeError(fmt::format("CUDA device {} does not exist ({} visible)", device, device_count()));
  }
  const DeviceScope scope(device);
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, std::max<std::uint64_t>(bytes, 1)),
             fmt::format("cudaMalloc of {} bytes on device {}", bytes, device));
  return static_cast<std::byte*>(p);
}

void release(std::byte* p) noexcept { (void)cudaFree(p); }

void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy to host");
}

namespace {
std::mutex report_mutex;
DeviceIoReport last_report;
}  // namespace

void note_path(const char* path) {
  const std::lock_guard lock(report_mutex);
  last_report.path = path;
}

void wait_for_default_stream(int device) {
  const DeviceScope scope(device);
  cuda_check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize of the default stream");
}

void begin_device_io() {
  const std::lock_guard lock(report_mutex);
  last_report.path.clear();
  last_report.gds_reason.clear();
  last_report.decoder.clear();
  last_report.decoder_reason.clear();
  last_report.decode_phases = {};
  last_report.decoder_choice = {};
  last_report.seconds = 0;
  last_report.plan_seconds = 0;
}

void note_decoder(const std::string& decoder, const std::string& reason) {
  const std::lock_guard lock(report_mutex);
  last_report.decoder = decoder;
  last_report.decoder_reason = reason;
}

void note_decode_phases(const DecodePhases& phases) {
  const std::lock_guard lock(report_mutex);
  last_report.decode_phases = phases;
}

void note_device_io_seconds(double plan, double total) {
  const std::lock_guard lock(report_mutex);
  last_report.plan_seconds = plan;
  last_report.seconds = total;
}

void note_decoder_choice(const DecoderChoiceReport& choice) {
  const std::lock_guard lock(report_mutex);
  if (last_report.decoder_choice.how.empty()) last_report.decoder_choice = choice;
}

void note_gds_reason(const std::string& reason) {
  const std::lock_guard lock(report_mutex);
  last_report.gds_reason = reason;
}

std::uint64_t staging_pinned_bytes();
std::uint64_t decoder_pinned_bytes();

DeviceIoReport report() {
  DeviceIoReport r;
  {
    const std::lock_guard lock(report_mutex);
    r = last_report;
  }
  r.staging_pinned_bytes = staging_pinned_bytes() + decoder_pinned_bytes();
  r.read_pattern = last_read_pattern();
  return r;
}

}  // namespace h5tile::detail::gpu

namespace h5tile {
bool cuda_built() noexcept { return true; }
int cuda_device_count() noexcept { return detail::gpu::device_count(); }
DeviceIoReport last_device_io() { return detail::gpu::report(); }
}  // namespace h5tile
