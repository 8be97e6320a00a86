#pragma once
// H5TILE_GPU_DECODE=auto decides by measurement (issue 28): the first compressed device read of a
// codec on a device times the GPU decoder (nvCOMP) and the CPU workers on the same first chunks of
// that read and keeps the faster; the choice is kept for the process, per device and codec. This
// is the pure part, the same with and without CUDA: the choice from measured rates, the test
// setting that slows or disables the GPU decoder, and the cache. The measurement itself is in
// layout/device_read.cpp.
//
// On checksums: deflate's Adler-32 is checked on either decoder; zstd and lz4 chunks (as
// hdf5plugin writes them) carry no checksum, so neither decoder checks them, and auto takes the
// GPU for them where it measures faster (both decoders give the same bytes; the tests compare).

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "gpu/decode.hpp"

namespace h5tile::detail::gpu {

enum class Decoder : unsigned char { Gpu, Cpu };

// The GPU must beat the CPU by more than this fraction to be chosen: within it (a tie) the CPU
// decodes, which leaves the GPU's memory and streams to the caller's own work.
inline constexpr double kTieMargin = 0.05;

// What the sample measured: decoded bytes per second of each decoder on the same chunks; `gpu`
// empty where the GPU could not decode them (`gpu_failure` says why).
struct DecoderRates {
  std::optional<double> gpu;
  double cpu = 0;
  std::string gpu_failure;
  std::uint64_t sample_chunks = 0;     // the GPU's sample (the first chunks of the read)
  std::uint64_t sample_bytes = 0;      // decoded bytes of the GPU's sample
  std::uint64_t cpu_sample_bytes = 0;  // decoded bytes of the CPU's sample (the read's last pieces)
};

// The decision and what it came from, as last_device_io() reports it.
struct DecoderChoice {
  Decoder decoder = Decoder::Cpu;
  std::string how;  // "measured", "cached", "small" (not measured), "on", "off"
  DecoderRates rates;
  std::string reason;  // why the CPU decodes ("" where the GPU does)
};

// The choice for `codec` from `rates`: the GPU where it decoded the sample and is faster than the
// CPU by more than `tie` (a fraction), else the CPU, saying why.
[[nodiscard]] DecoderChoice choose_decoder(GpuCodec codec, const DecoderRates& rates, double tie = kTieMargin);

// H5TILE_GPU_DECODE_SLOWDOWN, for tests and for simulating a machine whose GPU is slower than its
// CPUs: a factor >= 1 that the GPU's measured time is multiplied by, or "fail" (the GPU's decode
// of the sample counts as failed). Unset or "": factor 1.
struct GpuSlowdown {
  double factor = 1;
  bool fail = false;
  friend bool operator==(const GpuSlowdown&, const GpuSlowdown&) = default;
};
inline constexpr const char* kGpuSlowdownVariable = "H5TILE_GPU_DECODE_SLOWDOWN";
// Parses the variable's value (null: unset); throws ConfigError naming it for anything else.
[[nodiscard]] GpuSlowdown parse_gpu_slowdown(const char* value);
// The rates as the slowed GPU would have measured them.
[[nodiscard]] DecoderRates slowed(DecoderRates rates, const GpuSlowdown& slowdown);

// A read of fewer decoded bytes than this is not measured (a handful of chunks times launches and
// set-up, not decoding): it takes the choice an earlier read measured, else the CPU, and leaves
// nothing cached.
inline constexpr std::uint64_t kMinSampleBytes = std::uint64_t{32} << 20;

// The decisions of one process, per device and codec.
class DecoderCache {
 public:
  // The decoder for `codec` on `device` under `mode`: On and Off force one (nothing measured);
  // Auto takes the cached choice ("cached") or, for a read of at least kMinSampleBytes decoded
  // (`read_bytes`), calls `measure` once and keeps the choice from its rates ("measured"); a
  // smaller read with nothing cached decodes on the CPU ("small"). Thread-safe; a second caller
  // waits for the first one's measurement.
  DecoderChoice decide(DecodeMode mode, int device, GpuCodec codec, std::uint64_t read_bytes,
                       const std::function<DecoderRates()>& measure);
  // The choice kept for `codec` on `device` ("cached"), if one was measured.
  [[nodiscard]] std::optional<DecoderChoice> cached(int device, GpuCodec codec);
  void clear();

 private:
  std::mutex mutex_;
  std::map<std::pair<int, GpuCodec>, DecoderChoice> choices_;
};

// The process's cache.
[[nodiscard]] DecoderCache& decoder_cache();

}  // namespace h5tile::detail::gpu
