#pragma once
// The GPU layer as the rest of h5tile sees it: device memory, the bounded staging pipeline
// between packed host buffers and (strided) device memory, and GPUDirect Storage. Built
// from src/cuda/ when CUDA is enabled, from src/gpu/without_cuda.cpp otherwise (where every
// device request is a clear error).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <h5tile/array.hpp>
#include <h5tile/device.hpp>

#include "core/device_memory.hpp"
#include "io/posix/posix_file.hpp"

namespace h5tile::detail::gpu {

[[nodiscard]] bool built_with_cuda() noexcept;
[[nodiscard]] int device_count() noexcept;

// The CUDA device holding `ptr`, or -1 for host memory (always -1 without CUDA).
[[nodiscard]] int device_of(const void* ptr);
// Resolves a view's memory kind: the device of its data, or -1 for host memory.
[[nodiscard]] int device_of(const ArrayView& view);

// allocate / release: core/device_memory.hpp.
// Copies `bytes` from device memory to host memory (small amounts: scalars).
void copy_to_host(void* dst, const void* src, std::size_t bytes);

// One piece of device memory: its first element, byte strides (non-negative) and extent.
struct DeviceRegion {
  std::byte* ptr = nullptr;
  std::vector<std::int64_t> strides;
  Shape extent;
};

// The pinned host memory through which device reads and writes are staged, per device, and the
// largest piece one of its buffers holds.
struct Staging {
  std::size_t bytes = std::size_t{128} << 20;
  std::size_t piece_bytes = std::size_t{1} << 20;
  // Which of a device's pools: 0, that of reads and writes; 1, that of cold reads streamed in
  // large requests (H5TILE_COLD_READS), kept beside it so that neither rebuilds the other.
  unsigned pool = 0;
};

// Staging of `bytes` cut into pieces of at most one task (`task_size`), small enough that each
// of `threads` threads has two (one being filled while the other's copy runs), and at least
// 1 MiB where `bytes` and `task_size` allow. api/resolve.cpp resolves it from the process-wide
// staging size, task size and thread count (the buffers are shared by every call on a device, so
// they follow the process-wide thread count, not a call's).
[[nodiscard]] Staging staging_for(std::size_t bytes, std::size_t task_size, unsigned threads);

// For each piece i < count: fill(i, host) writes it packed (row-major) into a pinned
// buffer, which is then copied to region(i) asynchronously. Returns when every copy is done.
// Pieces are at most staging.piece_bytes.
void stage_to_device(int device, std::size_t count, std::size_t elem_size,
                     const std::function<DeviceRegion(std::size_t)>& region,
                     const std::function<void(std::size_t, std::byte*)>& fill, unsigned threads,
                     const Staging& staging);

// For each piece i < count: region(i) is copied packed into a pinned buffer, then
// drain(i, host) consumes it. Returns when every piece is drained. Pieces are at most
// staging.piece_bytes.
void stage_from_device(int device, std::size_t count, std::size_t elem_size,
                       const std::function<DeviceRegion(std::size_t)>& region,
                       const std::function<void(std::size_t, const std::byte*)>& drain, unsigned threads,
                       const Staging& staging);

// GPUDirect Storage (cuFile) for device reads: Auto uses it where it works and falls back to
// staging; On fails where it cannot be used; Off never tries. api/resolve.cpp resolves it from
// H5TILE_GDS's process-wide default.
enum class GdsMode : unsigned char { Auto, On, Off };

// A file opened for GPUDirect Storage.
class GdsFile {
 public:
  GdsFile() = default;
  GdsFile(const GdsFile&) = delete;
  GdsFile& operator=(const GdsFile&) = delete;
  virtual ~GdsFile() = default;
  // Reads `bytes` at `offset` of the file into device memory at `dst`.
  virtual void read(void* dst, std::size_t bytes, std::uint64_t offset) = 0;
};

// Opens `file` again (the same inode, with O_DIRECT) for cuFile reads, or returns nullptr (and
// records why) when GPUDirect Storage cannot be used: `mode` Off, no libcufile, no driver,
// registration refused. With `mode` On, a failure throws RuntimeError naming the file and the
// reason.
[[nodiscard]] std::unique_ptr<GdsFile> gds_open(const PosixFile& file, GdsMode mode);

// Records which path moved the last device read or write.
void note_path(const char* path);
// Starts the report of a new device read or write: no path, no reason yet (last_device_io
// describes the last call, not an earlier one).
void begin_device_io();
// Work queued on `device`'s legacy default stream (where CuPy, and kernels launched without a
// stream, run) finishes before h5tile touches caller memory there: h5tile's own streams are
// non-blocking, so nothing else orders its copies after a kernel that writes or reads that memory.
void wait_for_default_stream(int device);
// Records why GPUDirect Storage was not used for the current call ("" when it was).
void note_gds_reason(const std::string& reason);
// Records where the GPU decoder's time went in the current call.
void note_decode_phases(const DecodePhases& phases);
// The last device read's wall seconds: its planning, and the whole (DeviceIoReport::seconds).
void note_device_io_seconds(double plan, double total);
// Records how the current device read chose its decoder (the first call of a read wins).
void note_decoder_choice(const DecoderChoiceReport& choice);
[[nodiscard]] DeviceIoReport report();

}  // namespace h5tile::detail::gpu
