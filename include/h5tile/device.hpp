#pragma once
/// @file
/// CUDA devices as seen by h5tile. Device arrays go in through ArrayView (device pointers
/// are detected, or declared with MemoryKind::Device) and come out of reads with
/// `ReadOptions::device`. Everything here works, and says "no devices", without CUDA.

#include <cstdint>
#include <string>

#include <h5tile/read_pattern.hpp>

namespace h5tile {

/// True when this build of h5tile includes the CUDA layer.
[[nodiscard]] bool cuda_built() noexcept;

/// CUDA devices visible to this process (0 without CUDA, a driver or a device).
[[nodiscard]] int cuda_device_count() noexcept;

/// Where the GPU decoder's time went in the last device read that decoded on the GPU (seconds,
/// each summed over the read's batches; batches overlap, so the sums can exceed `wall`). The GPU
/// phases are timed with CUDA events on the batches' streams.
struct DecodePhases {
  double read = 0;       ///< the workers reading stored chunks into pinned memory (wall time of each batch's read)
  double h2d = 0;        ///< the stored bytes and the table of pieces copied to the device
  double decode = 0;     ///< nvCOMP's batched decompression
  double check = 0;      ///< deflate's Adler-32 summed on the GPU
  double unshuffle = 0;  ///< the unshuffle kernel
  double scatter = 0;    ///< the decoded chunks copied into place (clipped)
  double wait = 0;       ///< the host waiting for the GPU to finish a batch
  double wall = 0;       ///< the whole decode, first read to last check
  double setup = 0;      ///< before `wall`: sizing the batches and their buffers, nvCOMP's scratch size
  std::uint64_t batches = 0;
  std::uint64_t chunks = 0;
  std::uint64_t stored_bytes = 0;
};

/// How H5TILE_GPU_DECODE chose the decoder of the last device read's compressed chunks. Under
/// auto, the first compressed device read of 32 MiB or more of a codec on a device decodes its
/// first chunks on the GPU (up to 1 GiB) and as many bytes of its last pieces as the CPU decoder's
/// read stages them, keeps the faster (the GPU only when more than 5% faster) and reuses that choice
/// for the rest of the process.
struct DecoderChoiceReport {
  std::string how;                     ///< "measured" (this read), "cached" (an earlier read's), "on", "off", "" (none)
  std::string codec;                   ///< "deflate", "zstd", "lz4"
  double gpu_rate = 0;                 ///< decoded bytes per second on the GPU in the sample (0: it did not decode it)
  double cpu_rate = 0;                 ///< the same on the CPU workers (the read's thread count)
  std::uint64_t sample_chunks = 0;     ///< the GPU's sample: the read's first chunks, up to 1 GiB decoded
  std::uint64_t sample_bytes = 0;      ///< decoded bytes of the GPU's sample
  std::uint64_t cpu_sample_bytes = 0;  ///< decoded bytes of the CPU's timed sample: the read's last pieces
  std::string gpu_failure;             ///< why the GPU did not decode the sample ("" where it did)
};

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
  /// "nvCOMP is not available: ...", "blosc is not decoded on the GPU", "H5TILE_GPU_DECODE=auto
  /// measured zstd on 128 chunks: CPU ... GB/s, GPU ... GB/s (...)".
  std::string decoder_reason;
  std::uint64_t staging_pinned_bytes = 0;  ///< pinned host memory held for staging, all devices
  DecodePhases decode_phases;              ///< zero where the GPU decoded nothing
  DecoderChoiceReport decoder_choice;      ///< how the decoder was chosen (the first source that decodes)
  /// How the file was read (last_read_pattern() at the time of the report; "" where the last
  /// device read read no local file).
  ReadPatternReport read_pattern;
  /// Wall seconds of the last device read in h5tile's core, from its plan to the last byte in
  /// place (the file's open before it not included), and of its planning alone: the pieces, the
  /// chunks the GPU decodes, the decoder's choice (auto's timed samples included, where it ran
  /// them), GPUDirect Storage's open. 0 before any device read, after a device write (which
  /// starts a report of its own) and after a device read that failed.
  double seconds = 0;
  double plan_seconds = 0;
};
[[nodiscard]] DeviceIoReport last_device_io();

}  // namespace h5tile
