// H5TILE_GPU_DECODE=auto's choice from measured rates, without a GPU (gpu/decoder_choice.hpp):
// the faster decoder, the CPU within the tie margin, the CPU where the GPU could not decode the
// sample, the test setting that slows or disables the GPU, the cache, and on/off forcing one.
#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "gpu/decoder_choice.hpp"

namespace h5tile::detail::gpu {
namespace {

constexpr std::uint64_t kBig = std::uint64_t{1} << 30;  // a read large enough to measure

DecoderRates rates(std::optional<double> gpu, double cpu) {
  return {gpu, cpu, gpu ? "" : "nvCOMP failed", 128, 1 << 27};
}

TEST(DecoderChoice, TheGpuWhereItIsFaster) {
  const auto c = choose_decoder(GpuCodec::Zstd, rates(27.2e9, 13.3e9));
  EXPECT_EQ(c.decoder, Decoder::Gpu);
  EXPECT_EQ(c.how, "measured");
  EXPECT_EQ(c.reason, "");
  EXPECT_DOUBLE_EQ(*c.rates.gpu, 27.2e9);
  EXPECT_DOUBLE_EQ(c.rates.cpu, 13.3e9);
}

TEST(DecoderChoice, TheCpuWhereItIsFaster) {
  const auto c = choose_decoder(GpuCodec::Lz4, rates(24.9e9, 27.2e9));
  EXPECT_EQ(c.decoder, Decoder::Cpu);
  EXPECT_EQ(c.reason,
            "H5TILE_GPU_DECODE=auto measured lz4 on 128 chunks: CPU 27.20 GB/s, GPU 24.90 GB/s (the GPU is chosen "
            "only when more than 5% faster)");
}

TEST(DecoderChoice, WithinTheTieMarginTheCpu) {
  EXPECT_EQ(choose_decoder(GpuCodec::Deflate, rates(10.4e9, 10e9)).decoder, Decoder::Cpu);   // 4% faster
  EXPECT_EQ(choose_decoder(GpuCodec::Deflate, rates(10.5e9, 10e9)).decoder, Decoder::Cpu);   // exactly 5%
  EXPECT_EQ(choose_decoder(GpuCodec::Deflate, rates(10.51e9, 10e9)).decoder, Decoder::Gpu);  // more than 5%
  EXPECT_EQ(choose_decoder(GpuCodec::Deflate, rates(10e9, 10e9), 0).decoder, Decoder::Cpu);  // equal, no margin
  EXPECT_EQ(choose_decoder(GpuCodec::Deflate, rates(10.1e9, 10e9), 0).decoder, Decoder::Gpu);
}

TEST(DecoderChoice, TheCpuWhereTheGpuDidNotDecodeTheSample) {
  const auto c = choose_decoder(GpuCodec::Zstd, rates(std::nullopt, 1e9));
  EXPECT_EQ(c.decoder, Decoder::Cpu);
  EXPECT_EQ(c.reason,
            "H5TILE_GPU_DECODE=auto: the GPU did not decode zstd's first 128 chunks (nvCOMP failed); on the CPU");
}

TEST(GpuSlowdown, ParsesAFactorOrFail) {
  EXPECT_EQ(parse_gpu_slowdown(nullptr), (GpuSlowdown{1, false}));
  EXPECT_EQ(parse_gpu_slowdown(""), (GpuSlowdown{1, false}));
  EXPECT_EQ(parse_gpu_slowdown("4"), (GpuSlowdown{4, false}));
  EXPECT_EQ(parse_gpu_slowdown("2.5"), (GpuSlowdown{2.5, false}));
  EXPECT_EQ(parse_gpu_slowdown("fail"), (GpuSlowdown{1, true}));
  for (const char* bad : {"0.5", "0", "-2", "x", "2x", "inf", "nan"}) {
    try {
      (void)parse_gpu_slowdown(bad);
      ADD_FAILURE() << bad << " was taken";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("H5TILE_GPU_DECODE_SLOWDOWN='") + bad + "': expected a factor >= 1 or 'fail'");
    }
  }
}

TEST(GpuSlowdown, ASlowedGpuLosesToTheCpuAndAFailingOneIsNotChosen) {
  // The H200's zstd: the GPU twice as fast; slowed 4x it is half the CPU's rate.
  const auto measured = rates(27.2e9, 13.3e9);
  const auto slow = slowed(measured, {4, false});
  EXPECT_DOUBLE_EQ(*slow.gpu, 6.8e9);
  EXPECT_DOUBLE_EQ(slow.cpu, 13.3e9);
  EXPECT_EQ(choose_decoder(GpuCodec::Zstd, slow).decoder, Decoder::Cpu);
  EXPECT_EQ(choose_decoder(GpuCodec::Zstd, slowed(measured, {1, false})).decoder, Decoder::Gpu);
  const auto failed = slowed(measured, {1, true});
  EXPECT_FALSE(failed.gpu.has_value());
  EXPECT_EQ(failed.gpu_failure, "H5TILE_GPU_DECODE_SLOWDOWN=fail");
  const auto c = choose_decoder(GpuCodec::Deflate, failed);
  EXPECT_EQ(c.decoder, Decoder::Cpu);
  EXPECT_NE(c.reason.find("H5TILE_GPU_DECODE_SLOWDOWN=fail"), std::string::npos) << c.reason;
}

TEST(DecoderCache, MeasuresOncePerDeviceAndCodecThenReusesTheChoice) {
  DecoderCache cache;
  int calls = 0;
  const auto measure = [&](DecoderRates r) {
    return [&calls, r] {
      ++calls;
      return r;
    };
  };
  auto c = cache.decide(DecodeMode::Auto, 0, GpuCodec::Zstd, kBig, measure(rates(27e9, 13e9)));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(c.decoder, Decoder::Gpu);
  EXPECT_EQ(c.how, "measured");
  // The same device and codec: the choice and its rates again, not measured (the CPU would win now).
  c = cache.decide(DecodeMode::Auto, 0, GpuCodec::Zstd, kBig, measure(rates(1e9, 13e9)));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(c.decoder, Decoder::Gpu);
  EXPECT_EQ(c.how, "cached");
  EXPECT_DOUBLE_EQ(*c.rates.gpu, 27e9);
  // Another codec, another device: measured each.
  c = cache.decide(DecodeMode::Auto, 0, GpuCodec::Lz4, kBig, measure(rates(24.9e9, 27.2e9)));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(c.decoder, Decoder::Cpu);
  c = cache.decide(DecodeMode::Auto, 1, GpuCodec::Zstd, kBig, measure(rates(1e9, 13e9)));
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(c.decoder, Decoder::Cpu);
  EXPECT_EQ(cache.decide(DecodeMode::Auto, 1, GpuCodec::Zstd, kBig, measure(rates(27e9, 13e9))).how, "cached");
  EXPECT_EQ(calls, 3);
  cache.clear();
  EXPECT_EQ(cache.decide(DecodeMode::Auto, 1, GpuCodec::Zstd, kBig, measure(rates(27e9, 13e9))).decoder, Decoder::Gpu);
  EXPECT_EQ(calls, 4);
}

TEST(DecoderCache, CachedAnswersOnlyWhatWasMeasured) {
  DecoderCache cache;
  EXPECT_FALSE(cache.cached(0, GpuCodec::Lz4).has_value());
  // A small read is not measured: nothing is kept.
  (void)cache.decide(DecodeMode::Auto, 0, GpuCodec::Lz4, kMinSampleBytes - 1, [] { return rates(1e9, 2e9); });
  EXPECT_FALSE(cache.cached(0, GpuCodec::Lz4).has_value());
  (void)cache.decide(DecodeMode::Auto, 0, GpuCodec::Lz4, kBig, [] { return rates(24.9e9, 27.2e9); });
  const auto kept = cache.cached(0, GpuCodec::Lz4);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->decoder, Decoder::Cpu);
  EXPECT_EQ(kept->how, "cached");
  EXPECT_FALSE(kept->reason.empty());
  EXPECT_FALSE(cache.cached(1, GpuCodec::Lz4).has_value());
  EXPECT_FALSE(cache.cached(0, GpuCodec::Zstd).has_value());
}

TEST(DecoderCache, ASmallReadIsNotMeasuredItTakesTheCachedChoiceElseTheCpu) {
  DecoderCache cache;
  int calls = 0;
  const auto measure = [&] {
    ++calls;
    return rates(27e9, 13e9);
  };
  auto c = cache.decide(DecodeMode::Auto, 0, GpuCodec::Zstd, kMinSampleBytes - 1, measure);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(c.decoder, Decoder::Cpu);
  EXPECT_EQ(c.how, "small");
  EXPECT_EQ(c.reason,
            "H5TILE_GPU_DECODE=auto: a read of 33554431 decoded bytes is too small to time the decoders on (under 32 "
            "MiB); zstd is decoded on the CPU until a larger read measures");
  c = cache.decide(DecodeMode::Auto, 0, GpuCodec::Zstd, kMinSampleBytes, measure);  // nothing was cached
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(c.how, "measured");
  c = cache.decide(DecodeMode::Auto, 0, GpuCodec::Zstd, 4096, measure);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(c.how, "cached");
  EXPECT_EQ(c.decoder, Decoder::Gpu);
}

TEST(DecoderCache, OnAndOffForceOneAndMeasureNothing) {
  DecoderCache cache;
  int calls = 0;
  const auto measure = [&] {
    ++calls;
    return rates(1e9, 13e9);
  };
  const auto on = cache.decide(DecodeMode::On, 0, GpuCodec::Lz4, kBig, measure);
  EXPECT_EQ(on.decoder, Decoder::Gpu);
  EXPECT_EQ(on.how, "on");
  const auto off = cache.decide(DecodeMode::Off, 0, GpuCodec::Deflate, kBig, measure);
  EXPECT_EQ(off.decoder, Decoder::Cpu);
  EXPECT_EQ(off.how, "off");
  EXPECT_EQ(off.reason, "H5TILE_GPU_DECODE=off");
  EXPECT_EQ(calls, 0);
  // A choice measured under auto does not bind on/off, and on/off leave nothing cached.
  EXPECT_EQ(cache.decide(DecodeMode::Auto, 0, GpuCodec::Lz4, kBig, measure).how, "measured");
  EXPECT_EQ(cache.decide(DecodeMode::On, 0, GpuCodec::Lz4, kBig, measure).decoder, Decoder::Gpu);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace h5tile::detail::gpu
