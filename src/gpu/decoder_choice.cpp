// H5TILE_GPU_DECODE=auto's choice from measured rates (gpu/decoder_choice.hpp). Pure logic.
#include "gpu/decoder_choice.hpp"

#include <charconv>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail::gpu {

DecoderChoice choose_decoder(GpuCodec codec, const DecoderRates& rates, double tie) {
  DecoderChoice choice{Decoder::Cpu, "measured", rates, ""};
  const auto gb = [](double rate) { return rate / 1e9; };
  if (!rates.gpu) {
    choice.reason = fmt::format("H5TILE_GPU_DECODE=auto: the GPU did not decode {}'s first {} chunks ({}); on the CPU",
                                codec_name(codec), rates.sample_chunks, rates.gpu_failure);
    return choice;
  }
  if (*rates.gpu > rates.cpu * (1 + tie)) {
    choice.decoder = Decoder::Gpu;
    return choice;
  }
  choice.reason = fmt::format(
      "H5TILE_GPU_DECODE=auto measured {} on {} chunks: CPU {:.2f} GB/s, GPU {:.2f} GB/s (the GPU is "
      "chosen only when more than {:.0f}% faster)",
      codec_name(codec), rates.sample_chunks, gb(rates.cpu), gb(*rates.gpu), tie * 100);
  return choice;
}

GpuSlowdown parse_gpu_slowdown(const char* value) {
  if (value == nullptr || *value == '\0') return {};
  const std::string_view text(value);
  if (text == "fail") return {1, true};
  double factor = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), factor);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(factor) || factor < 1) {
    throw InvalidArgument(fmt::format("{}='{}': expected a factor >= 1 or 'fail'", kGpuSlowdownVariable, text));
  }
  return {factor, false};
}

DecoderRates slowed(DecoderRates rates, const GpuSlowdown& slowdown) {
  if (!rates.gpu) return rates;
  if (slowdown.fail) {
    rates.gpu.reset();
    rates.gpu_failure = fmt::format("{}=fail", kGpuSlowdownVariable);
  } else {
    *rates.gpu /= slowdown.factor;
  }
  return rates;
}

DecoderChoice DecoderCache::decide(DecodeMode mode, int device, GpuCodec codec, std::uint64_t read_bytes,
                                   const std::function<DecoderRates()>& measure) {
  if (mode == DecodeMode::On) return {Decoder::Gpu, "on", {}, ""};
  if (mode == DecodeMode::Off) return {Decoder::Cpu, "off", {}, "H5TILE_GPU_DECODE=off"};
  const std::lock_guard lock(mutex_);
  const auto key = std::pair{device, codec};
  if (const auto it = choices_.find(key); it != choices_.end()) {
    auto choice = it->second;
    choice.how = "cached";
    return choice;
  }
  if (read_bytes < kMinSampleBytes) {
    return {Decoder::Cpu,
            "small",
            {},
            fmt::format("H5TILE_GPU_DECODE=auto: a read of {} decoded bytes is too small to time the decoders on "
                        "(under {} MiB); {} is decoded on the CPU until a larger read measures",
                        read_bytes, kMinSampleBytes >> 20, codec_name(codec))};
  }
  auto choice = choose_decoder(codec, measure());
  choices_.emplace(key, choice);
  return choice;
}

std::optional<DecoderChoice> DecoderCache::cached(int device, GpuCodec codec) {
  const std::lock_guard lock(mutex_);
  const auto it = choices_.find(std::pair{device, codec});
  if (it == choices_.end()) return std::nullopt;
  auto choice = it->second;
  choice.how = "cached";
  return choice;
}

void DecoderCache::clear() {
  const std::lock_guard lock(mutex_);
  choices_.clear();
}

DecoderCache& decoder_cache() {
  static DecoderCache cache;
  return cache;
}

}  // namespace h5tile::detail::gpu
