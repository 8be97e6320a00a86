#pragma once
/// @file
/// CUDA devices as seen by h5tile. Device arrays go in through ArrayView (device pointers
/// are detected, or declared with MemoryKind::Device) and come out of reads with
/// `ReadOptions::device`. Everything here works, and says "no devices", without CUDA.

#include <cstdint>
#include <string>

namespace h5tile {

/// True when this build of h5tile includes the CUDA layer.
[[nodiscard]] bool cuda_built() noexcept;

/// CUDA devices visible to this process (0 without CUDA, a driver or a device).
[[nodiscard]] int cuda_device_count() noexcept;

/// How the last device read or write of this process moved its bytes.
struct DeviceIoReport {
  /// "cufile" (GPUDirect Storage moved every byte), "cufile+staging" (some pieces were not one
  /// contiguous run in the file and went through pinned staging), "staging", "nvcomp" (compressed
  /// chunks through the GPU decoder's own pinned buffers), "nvcomp+staging", or "" before any
  /// device I/O.
  std::string path;
  std::string gds_reason;  ///< why cuFile was not used ("" when it was, or was not tried)
  /// Who decoded the compressed chunks of the last device read: "nvcomp" (on the GPU: only the
  /// compressed bytes crossed PCIe), "cpu" (on the host, then staged), "nvcomp+cpu" (a virtual
  /// dataset whose sources went each way), or "" (nothing to decode).
  std::string decoder;
  /// Where `decoder` has "cpu": why the GPU did not decode, e.g. "H5TILE_GPU_DECODE=off",
  /// "nvCOMP is not available: ...", "fletcher32 is not checked on the GPU", "H5TILE_GPU_DECODE=auto
  /// decodes zstd on the CPU (...)".
  std::string decoder_reason;
  std::uint64_t staging_pinned_bytes = 0;  ///< pinned host memory held for staging, all devices
};
[[nodiscard]] DeviceIoReport last_device_io();

}  // namespace h5tile
