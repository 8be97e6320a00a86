// Compressed chunks read into device memory and decoded on the GPU with nvCOMP (issue 19):
// gzip, zstd and lz4, with and without shuffle, 2- and 3-D with edge chunks, sub-regions, many
// batches, virtual datasets of compressed tiles, fletcher32 after each codec (checked on the GPU):
// byte for byte what the CPU decoder gives; the fallbacks (H5TILE_GPU_DECODE=off, small reads under
// auto, fletcher32 with no compressor, no nvCOMP) with their reasons, and the errors of
// H5TILE_GPU_DECODE=on; damaged deflate chunks that nvCOMP inflates without complaint fail the read
// on their Adler-32, and damaged fletcher32 chunks on their Fletcher-32, as on the CPU. nvCOMP comes from
// H5TILE_NVCOMP_LIBRARY (or dlopen's search); without a device, or without nvCOMP, the device tests are skipped and say
// why.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>

#include <h5tile/h5tile.hpp>

#include "cuda/nvcomp.hpp"
#include "gpu/decode.hpp"
#include "unit/adler32_reference.hpp"

namespace h5tile {
namespace {
namespace fs = std::filesystem;

TEST(NvcompLoader, AnAbsentLibraryIsAReasonNotACrash) {
  const auto& absent = detail::gpu::nvcomp("/nonexistent/libnvcomp.so.6");
  EXPECT_NE(absent.failure.find("dlopen('/nonexistent/libnvcomp.so.6') failed"), std::string::npos) << absent.failure;
  const auto& not_nvcomp = detail::gpu::nvcomp("libc.so.6");
  EXPECT_NE(not_nvcomp.failure.find("is not nvCOMP"), std::string::npos) << not_nvcomp.failure;
}

TEST(NvcompLoader, TheLibraryNamedLoads) {
  const char* library = std::getenv("H5TILE_NVCOMP_LIBRARY");
  if (library == nullptr || *library == '\0') GTEST_SKIP() << "H5TILE_NVCOMP_LIBRARY is not set";
  const auto& n = detail::gpu::nvcomp(library);
  ASSERT_EQ(n.failure, "");
  EXPECT_EQ(n.version / 1000, 6U);
  std::printf("[ INFO     ] nvCOMP %u; input alignment deflate %zu, zstd %zu, lz4 %zu\n", n.version,
              n.codec(detail::gpu::GpuCodec::Deflate).align.input, n.codec(detail::gpu::GpuCodec::Zstd).align.input,
              n.codec(detail::gpu::GpuCodec::Lz4).align.input);
}

// Skips the test where nvCOMP does not load, saying why (GpuDecode::nvcomp_missing).
#define REQUIRE_NVCOMP()                                  \
  if (const auto why = nvcomp_missing(); !why.empty()) {  \
    GTEST_SKIP() << "nvCOMP does not load here: " << why; \
  }                                                       \
  static_assert(true)

// Restores the settings the tests change.
class GpuDecode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible: GPU tests run on the GPU machine";
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    const char* base = std::getenv("H5TILE_GPU_TEST_DIR");
    dir_ = fs::path(base != nullptr ? base : fs::temp_directory_path().string()) / ("h5tile_gpu_decode_" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    settings::set_gpu_decode(mode_);
    settings::set_nvcomp_library(library_);
    settings::set_staging_bytes(staging_);
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  static bool built(Compressor c) {
    const auto all = built_compressors();
    return std::find(all.begin(), all.end(), c) != all.end();
  }

  // Values that compress, with some noise, of `dtype`.
  static std::vector<std::byte> smooth(DType dtype, std::uint64_t count, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::byte> out(count * dtype.size());
    for (std::uint64_t i = 0; i < count; ++i) {
      for (std::size_t b = 0; b < dtype.size(); ++b) {
        out[i * dtype.size() + b] = static_cast<std::byte>(b == 0 ? (i % 97) + rng() % 3 : (b == 1 ? i / 256 : 0));
      }
    }
    return out;
  }

  static std::vector<std::byte> to_host(const Array& a) {
    std::vector<std::byte> out(a.nbytes());
    EXPECT_EQ(a.device(), 0);
    EXPECT_EQ(cudaMemcpy(out.data(), a.data(), out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

  static bool same(const Array& device, const Array& host) {
    const auto bytes = to_host(device);
    return device.shape() == host.shape() && bytes.size() == host.nbytes() &&
           std::memcmp(bytes.data(), host.data(), bytes.size()) == 0;
  }

  // Why nvCOMP does not load here ("" where it does): a test that turns GPU decoding on
  // (H5TILE_GPU_DECODE=on refuses a read nvCOMP cannot decode) then skips (REQUIRE_NVCOMP);
  // scripts/gpu_machine.sh nvcomp (or gpu-check) carries the library.
  static std::string nvcomp_missing() { return detail::gpu::nvcomp(settings::nvcomp_library()).failure; }

  // Skips the test, saying why, where nvCOMP did not decode for want of the library.
  void skip_without_nvcomp() {
    const auto r = last_device_io();
    if (r.decoder == "cpu" && r.decoder_reason.find("nvCOMP") != std::string::npos) {
      GTEST_SKIP() << r.decoder_reason;
    }
  }

  fs::path dir_;
  settings::GpuDecode mode_ = settings::gpu_decode();
  std::string library_ = settings::nvcomp_library();
  std::size_t staging_ = settings::staging_bytes();
};

// Parameter: "<compressor>_<shuffle or plain>_<dtype>".
class GpuDecodeCases : public GpuDecode, public ::testing::WithParamInterface<std::string> {};

TEST_P(GpuDecodeCases, DeviceReadsEqualTheCpuDecodeByteForByte) {
  const auto& p = GetParam();
  const auto first = p.find('_');
  const auto second = p.find('_', first + 1);
  const auto compressor = compressor_from_name(p.substr(0, first));
  const bool shuffle = p.substr(first + 1, second - first - 1) == "shuffle";
  const DType dtype = DType::from_name(p.substr(second + 1));
  if (!built(compressor)) GTEST_SKIP() << "h5tile was built without " << compressor_name(compressor);
  REQUIRE_NVCOMP();
  for (const auto& [shape, chunk, box] : {std::tuple{Shape{203, 67, 9}, Shape{32, 16, 9}, Box{{5, 3, 1}, {150, 50, 7}}},
                                          std::tuple{Shape{1001, 333}, Shape{64, 100}, Box{{17, 250}, {900, 83}}},
                                          std::tuple{Shape{100003}, Shape{4099}, Box{{4000}, {50000}}},
                                          // Chunks of whole rows: decoded (or unshuffled) straight into place.
                                          std::tuple{Shape{1000, 256}, Shape{32, 256}, Box{{40, 0}, {500, 256}}}}) {
    const auto bytes = smooth(dtype, element_count(shape), 3);
    const auto path = dir_ / "c.h5";
    to_file(ArrayView{bytes.data(), dtype, shape, {}}, path, "/x",
            {.layout = Layout::Chunked, .ranks = 3, .chunk = chunk, .compression = {compressor, -1, shuffle}})
        .wait();
    settings::set_gpu_decode(settings::GpuDecode::On);
    const auto host = from_file(path, "/x");
    ASSERT_EQ(std::memcmp(host.data(), bytes.data(), bytes.size()), 0);
    const auto dev = from_file(path, "/x", {.device = 0});
    skip_without_nvcomp();
    const auto report = last_device_io();
    EXPECT_EQ(report.decoder, "nvcomp") << report.decoder_reason;
    EXPECT_EQ(report.path, "nvcomp");
    EXPECT_TRUE(same(dev, host)) << to_string(shape);
    const auto dev_box = read_box(path, "/x", box, {.device = 0});
    EXPECT_EQ(last_device_io().decoder, "nvcomp");
    EXPECT_TRUE(same(dev_box, read_box(path, "/x", box))) << to_string(box);
    // Auto (the default): reads this small are not timed: an earlier read's choice, else the CPU
    // (gpu/decoder_choice.hpp; measured in tests/python/test_gpu_decode.py).
    settings::set_gpu_decode(settings::GpuDecode::Auto);
    EXPECT_TRUE(same(from_file(path, "/x", {.device = 0}), host));
    const auto how = last_device_io().decoder_choice.how;
    EXPECT_TRUE(how == "small" || how == "cached") << how;
    if (how == "small") {
      EXPECT_EQ(last_device_io().decoder, "cpu");
    }
    settings::set_gpu_decode(settings::GpuDecode::Off);
    EXPECT_TRUE(same(from_file(path, "/x", {.device = 0}), host));
    EXPECT_EQ(last_device_io().decoder, "cpu");
    EXPECT_EQ(last_device_io().decoder_reason, "H5TILE_GPU_DECODE=off");
  }
}

std::vector<std::string> decode_cases() {
  std::vector<std::string> out;
  for (const char* compressor : {"gzip", "zstd", "lz4"}) {
    for (const char* shuffle : {"shuffle", "plain"}) {
      for (const char* dtype : {"float32", "int16", "float64", "uint8", "complex128"}) {
        out.push_back(std::string(compressor) + "_" + shuffle + "_" + dtype);
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, GpuDecodeCases, ::testing::ValuesIn(decode_cases()),
                         [](const auto& p) { return p.param; });

TEST_F(GpuDecode, ManyBatchesThroughASmallStagingAndVirtualTiles) {
  REQUIRE_NVCOMP();
  const DType dtype(DTypeKind::Float32);
  const Shape shape{4099, 1024};  // 16 MiB in chunks of 64 KiB, through 1 MiB of staging
  const auto bytes = smooth(dtype, element_count(shape), 5);
  settings::set_staging_bytes(1 << 20);
  settings::set_gpu_decode(settings::GpuDecode::On);
  for (const auto layout : {Layout::Chunked, Layout::Virtual}) {
    const auto path = dir_ / "b.h5";
    to_file(ArrayView{bytes.data(), dtype, shape, {}}, path, "/x",
            {.layout = layout, .ranks = 4, .chunk = {16, 1024}, .compression = {Compressor::Gzip, 1, true}})
        .wait();
    const auto host = from_file(path, "/x");
    const auto dev = from_file(path, "/x", {.device = 0});
    skip_without_nvcomp();
    EXPECT_EQ(last_device_io().decoder, "nvcomp") << last_device_io().decoder_reason;
    EXPECT_TRUE(same(dev, host)) << layout_name(layout);
    const auto& phases = last_device_io().decode_phases;
    if (layout == Layout::Chunked) {
      // A device window of 32 x 1 MiB: batches on both streams, the first's buffers used again.
      EXPECT_GE(phases.batches, 3U);
      EXPECT_EQ(phases.chunks, 257U);
    }
    EXPECT_GT(phases.wall, 0.0);
    EXPECT_GT(phases.setup, 0.0);
    // The core's wall time holds its planning (where auto's timed sample, if it ran, decoded) and
    // the decoder's setup and decode.
    const auto r = last_device_io();
    EXPECT_GT(r.plan_seconds, 0.0);
    EXPECT_GE(r.seconds, std::max(r.plan_seconds, phases.setup + phases.wall));
    std::printf("[ INFO     ] %s: pinned memory %llu bytes, %llu batches\n", std::string(layout_name(layout)).c_str(),
                static_cast<unsigned long long>(last_device_io().staging_pinned_bytes),
                static_cast<unsigned long long>(phases.batches));
  }
}

std::vector<char> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Damage that nvCOMP does not see: deflate at level 0 stores each chunk's bytes as they are (a
// stored block) with the Adler-32 of the chunk after them; flipping trailer bits, or changing a
// byte of the chunk, leaves a stream that inflates to the chunk's size. HDF5's reader and the CPU
// decoder fail on it; so must the GPU decoder, under auto and on, naming the chunk and the file.
TEST_F(GpuDecode, ADamagedDeflateChunkFailsTheReadAsOnTheCpu) {
  REQUIRE_NVCOMP();
  const DType dtype(DTypeKind::Float32);
  const Shape shape{16384};
  std::mt19937_64 rng(11);
  std::vector<std::byte> bytes(element_count(shape) * dtype.size());
  for (auto& b : bytes) b = static_cast<std::byte>(rng());  // random: each chunk's bytes lie once in the file
  const auto good = dir_ / "good.h5";
  to_file(ArrayView{bytes.data(), dtype, shape, {}}, good, "/x",
          {.layout = Layout::Chunked, .chunk = {4096}, .compression = {Compressor::Gzip, 0}})
      .wait();
  settings::set_gpu_decode(settings::GpuDecode::On);
  EXPECT_TRUE(same(from_file(good, "/x", {.device = 0}), from_file(good, "/x")));
  skip_without_nvcomp();
  ASSERT_EQ(last_device_io().decoder, "nvcomp") << last_device_io().decoder_reason;

  // Chunk [4096:8192]: its first and last KiB in the file (one stored block, or a few whose
  // headers lie between), and its Adler-32 (big-endian) just after the last.
  const std::size_t chunk_bytes = 4096 * dtype.size();
  const std::size_t kib = 1024;
  const auto* chunk = reinterpret_cast<const char*>(bytes.data()) + chunk_bytes;
  const auto file = file_bytes(good);
  const auto head = std::search(file.begin(), file.end(), chunk, chunk + kib);
  ASSERT_NE(head, file.end()) << "chunk [4096:8192] is not stored as it is: not a stored block?";
  const auto tail = std::search(head, file.end(), chunk + chunk_bytes - kib, chunk + chunk_bytes);
  ASSERT_NE(tail, file.end());
  const auto adler = detail::gpu::reference_adler32(bytes.data() + chunk_bytes, chunk_bytes);
  const std::array<char, 4> trailer_bytes{static_cast<char>(adler >> 24), static_cast<char>(adler >> 16),
                                          static_cast<char>(adler >> 8), static_cast<char>(adler)};
  const auto after = tail + kib;
  const auto limit = file.end() - after < 16 ? file.end() : after + 16;
  const auto trailer_at = std::search(after, limit, trailer_bytes.begin(), trailer_bytes.end());
  ASSERT_NE(trailer_at, limit) << "no Adler-32 after the chunk's bytes";
  const auto payload = static_cast<std::size_t>(head - file.begin());
  const auto last = static_cast<std::size_t>(tail - file.begin()) + kib - 1;
  const auto trailer = static_cast<std::size_t>(trailer_at - file.begin());

  const auto bad = dir_ / "bad.h5";
  for (const auto& [what, offset, mask] : {std::tuple{"all trailer bits flipped", trailer, 0xffU},
                                           std::tuple{"one trailer bit flipped", trailer + 3, 0x01U},
                                           std::tuple{"a payload byte changed", payload + 1000, 0x01U},
                                           std::tuple{"the last payload byte changed", last, 0x80U}}) {
    SCOPED_TRACE(what);
    auto damaged = file;
    damaged[offset] = static_cast<char>(static_cast<unsigned char>(damaged[offset]) ^ mask);
    write_bytes(bad, damaged);
    EXPECT_THROW((void)from_file(bad, "/x"), RuntimeError);  // the CPU decoder's verdict
    for (const auto mode : {settings::GpuDecode::Auto, settings::GpuDecode::On, settings::GpuDecode::Off}) {
      settings::set_gpu_decode(mode);
      try {
        (void)from_file(bad, "/x", {.device = 0});
        ADD_FAILURE() << "a damaged chunk was read without an error (gpu_decode " << static_cast<int>(mode) << ")";
      } catch (const RuntimeError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("chunk [4096:8192] of dataset '/x'"), std::string::npos) << m;
        EXPECT_NE(m.find("cannot be decoded"), std::string::npos) << m;
        EXPECT_NE(m.find(bad.string()), std::string::npos) << m;
        // The GPU's Adler-32 disagrees; the CPU's decoder then gives its verdict, whatever the mode.
        EXPECT_NE(m.find("cannot be decoded: deflate: deflate stream of"), std::string::npos) << m;
        EXPECT_NE(m.find("is corrupt"), std::string::npos) << m;
        if (mode == settings::GpuDecode::On) {
          EXPECT_EQ(last_device_io().decoder, "nvcomp");
        }
      }
    }
    // The undamaged chunks of the damaged file still read on the GPU.
    settings::set_gpu_decode(settings::GpuDecode::On);
    const Box other{{8192}, {8192}};
    EXPECT_TRUE(same(read_box(bad, "/x", other, {.device = 0}), read_box(good, "/x", other)));
  }
}

// fletcher32 after each codec, with and without shuffle, as h5tile writes it (h5py's files:
// tests/python/test_gpu_decode.py): the stored chunks' checksums are checked on the GPU, which
// decodes them, byte for byte as the CPU does.
TEST_F(GpuDecode, Fletcher32AfterEachCodecIsCheckedAndDecodedOnTheGpu) {
  REQUIRE_NVCOMP();
  const DType dtype(DTypeKind::Float32);
  const Shape shape{1001, 333};
  const auto bytes = smooth(dtype, element_count(shape), 5);
  for (const auto compressor : {Compressor::Gzip, Compressor::Zstd, Compressor::Lz4}) {
    if (!built(compressor)) continue;
    for (const bool shuffle : {false, true}) {
      SCOPED_TRACE(std::string(compressor_name(compressor)) + (shuffle ? " + shuffle" : ""));
      const auto path = dir_ / "f.h5";
      to_file(ArrayView{bytes.data(), dtype, shape, {}}, path, "/x",
              {.layout = Layout::Chunked, .chunk = {64, 100}, .compression = {compressor, -1, shuffle, true}})
          .wait();
      settings::set_gpu_decode(settings::GpuDecode::On);
      const auto host = from_file(path, "/x");
      ASSERT_EQ(std::memcmp(host.data(), bytes.data(), bytes.size()), 0);
      const auto dev = from_file(path, "/x", {.device = 0});
      skip_without_nvcomp();
      EXPECT_EQ(last_device_io().decoder, "nvcomp") << last_device_io().decoder_reason;
      EXPECT_GT(last_device_io().decode_phases.chunks, 0U);
      EXPECT_TRUE(same(dev, host));
      const Box box{{17, 250}, {900, 83}};
      EXPECT_TRUE(same(read_box(path, "/x", box, {.device = 0}), read_box(path, "/x", box)));
      EXPECT_EQ(last_device_io().decoder, "nvcomp") << last_device_io().decoder_reason;
    }
  }
}

// fletcher32 through many batches on both streams (each region's buffers used again): random
// bytes, so that lz4 stores every block as it is (no piece for nvCOMP: the Fletcher-32s are the
// only results) and gzip at level 0 stores the chunks as they are; a changed byte of the stored
// Fletcher-32 of a chunk in a late batch fails the read with the CPU path's error.
TEST_F(GpuDecode, Fletcher32ThroughManyBatches) {
  REQUIRE_NVCOMP();
  const DType dtype(DTypeKind::Float32);
  const Shape shape{4099, 1024};  // 16 MiB in chunks of 64 KiB, through 1 MiB of staging
  std::mt19937_64 rng(17);
  std::vector<std::byte> bytes(element_count(shape) * dtype.size());
  for (auto& b : bytes) b = static_cast<std::byte>(rng());
  settings::set_staging_bytes(1 << 20);
  settings::set_gpu_decode(settings::GpuDecode::On);
  for (const auto compressor : {Compressor::Gzip, Compressor::Zstd, Compressor::Lz4}) {
    if (!built(compressor)) continue;
    SCOPED_TRACE(std::string(compressor_name(compressor)));
    const auto path = dir_ / "m.h5";
    const int level = compressor == Compressor::Gzip ? 0 : -1;
    to_file(ArrayView{bytes.data(), dtype, shape, {}}, path, "/x",
            {.layout = Layout::Chunked, .chunk = {16, 1024}, .compression = {compressor, level, false, true}})
        .wait();
    const auto host = from_file(path, "/x");
    ASSERT_EQ(std::memcmp(host.data(), bytes.data(), bytes.size()), 0);
    const auto dev = from_file(path, "/x", {.device = 0});
    skip_without_nvcomp();
    EXPECT_EQ(last_device_io().decoder, "nvcomp") << last_device_io().decoder_reason;
    EXPECT_TRUE(same(dev, host));
    EXPECT_GE(last_device_io().decode_phases.batches, 3U);
    EXPECT_EQ(last_device_io().decode_phases.chunks, 257U);
    if (compressor != Compressor::Gzip) continue;

    // Chunk [3200:3216, 0:1024]: its first KiB in the file, then (65536 bytes are two stored
    // blocks, of 65535 and 1, the second's 5-byte header between them) its Adler-32 (big-endian)
    // a few bytes past its bytes, then its Fletcher-32.
    const std::size_t chunk_bytes = 16 * 1024 * dtype.size();
    const std::size_t kib = 1024;
    const auto* chunk = reinterpret_cast<const char*>(bytes.data()) + 200 * chunk_bytes;
    const auto file = file_bytes(path);
    const auto head = std::search(file.begin(), file.end(), chunk, chunk + kib);
    ASSERT_NE(head, file.end()) << "chunk 200 is not stored as it is: not stored blocks?";
    ASSERT_GE(file.end() - head, static_cast<std::ptrdiff_t>(chunk_bytes));
    const auto adler = detail::gpu::reference_adler32(bytes.data() + 200 * chunk_bytes, chunk_bytes);
    const std::array<char, 4> adler_bytes{static_cast<char>(adler >> 24), static_cast<char>(adler >> 16),
                                          static_cast<char>(adler >> 8), static_cast<char>(adler)};
    const auto after = head + static_cast<std::ptrdiff_t>(chunk_bytes);
    const auto limit = file.end() - after < 64 ? file.end() : after + 64;
    const auto adler_at = std::search(after, limit, adler_bytes.begin(), adler_bytes.end());
    ASSERT_NE(adler_at, limit) << "no Adler-32 after the chunk's bytes";
    const auto fletcher = static_cast<std::size_t>(adler_at - file.begin()) + 4;
    auto damaged = file;
    damaged[fletcher + 2] = static_cast<char>(static_cast<unsigned char>(damaged[fletcher + 2]) ^ 0x04U);
    const auto bad = dir_ / "bad.h5";
    write_bytes(bad, damaged);
    std::string cpu_error;
    try {
      (void)from_file(bad, "/x");
      ADD_FAILURE() << "the CPU read a damaged chunk without an error";
    } catch (const RuntimeError& e) {
      cpu_error = e.what();
    }
    EXPECT_NE(cpu_error.find("chunk [3200:3216, 0:1024] of dataset '/x'"), std::string::npos) << cpu_error;
    EXPECT_NE(cpu_error.find("cannot be decoded: fletcher32: Fletcher-32 checksum mismatch (stored 0x"),
              std::string::npos)
        << cpu_error;
    try {
      (void)from_file(bad, "/x", {.device = 0});
      ADD_FAILURE() << "a damaged chunk was read on the GPU without an error";
    } catch (const RuntimeError& e) {
      EXPECT_EQ(std::string(e.what()), cpu_error);
      EXPECT_EQ(last_device_io().decoder, "nvcomp");
    }
    // After the failed read, the decoder's buffers serve the next one.
    EXPECT_TRUE(same(from_file(path, "/x", {.device = 0}), host));
  }
}

// A changed byte of a gzip chunk stored as it is (level 0) with fletcher32 after it: the GPU's
// Fletcher-32 disagrees and the read fails with the CPU path's error, word for word, under on and
// auto (and off, the CPU's own); the chunks around it still read on the GPU. A changed byte of the
// stored Fletcher-32 itself leaves a zlib stream that nvCOMP inflates and whose Adler-32 agrees:
// only the GPU's Fletcher-32 check can fail that read (a changed payload byte also fails the
// Adler-32, and the CPU's decoder, which the GPU path then asks, names the Fletcher-32 first). The
// checksum with the bytes of each 16-bit half swapped (HDF5 before 1.6.3) is accepted.
TEST_F(GpuDecode, ADamagedFletcher32ChunkFailsTheReadWithTheCpuPathsError) {
  REQUIRE_NVCOMP();
  const DType dtype(DTypeKind::Float32);
  const Shape shape{16384};
  std::mt19937_64 rng(13);
  std::vector<std::byte> bytes(element_count(shape) * dtype.size());
  for (auto& b : bytes) b = static_cast<std::byte>(rng());  // random: each chunk's bytes lie once in the file
  const auto good = dir_ / "good.h5";
  to_file(ArrayView{bytes.data(), dtype, shape, {}}, good, "/x",
          {.layout = Layout::Chunked, .chunk = {4096}, .compression = {Compressor::Gzip, 0, false, true}})
      .wait();
  settings::set_gpu_decode(settings::GpuDecode::On);
  const auto expected = from_file(good, "/x");
  EXPECT_TRUE(same(from_file(good, "/x", {.device = 0}), expected));
  skip_without_nvcomp();
  ASSERT_EQ(last_device_io().decoder, "nvcomp") << last_device_io().decoder_reason;

  // Chunk [4096:8192]: its first and last KiB in the file (one stored block, or a few whose
  // headers lie between), its Adler-32 (big-endian) just after the last, then its Fletcher-32.
  const std::size_t chunk_bytes = 4096 * dtype.size();
  const std::size_t kib = 1024;
  const auto* chunk = reinterpret_cast<const char*>(bytes.data()) + chunk_bytes;
  const auto file = file_bytes(good);
  const auto head = std::search(file.begin(), file.end(), chunk, chunk + kib);
  ASSERT_NE(head, file.end()) << "chunk [4096:8192] is not stored as it is: not a stored block?";
  const auto tail = std::search(head, file.end(), chunk + chunk_bytes - kib, chunk + chunk_bytes);
  ASSERT_NE(tail, file.end());
  const auto adler = detail::gpu::reference_adler32(bytes.data() + chunk_bytes, chunk_bytes);
  const std::array<char, 4> adler_bytes{static_cast<char>(adler >> 24), static_cast<char>(adler >> 16),
                                        static_cast<char>(adler >> 8), static_cast<char>(adler)};
  const auto after = tail + static_cast<std::ptrdiff_t>(kib);
  const auto limit = file.end() - after < 16 ? file.end() : after + 16;
  const auto adler_at = std::search(after, limit, adler_bytes.begin(), adler_bytes.end());
  ASSERT_NE(adler_at, limit) << "no Adler-32 after the chunk's bytes";
  const auto fletcher = static_cast<std::size_t>(adler_at - file.begin()) + 4;
  ASSERT_LE(fletcher + 4, file.size());
  const auto payload = static_cast<std::size_t>(head - file.begin());

  const auto bad = dir_ / "bad.h5";
  for (const auto& [what, offset, mask] :
       {std::tuple{"a payload byte changed", payload + 1000, 0x01U},
        std::tuple{"a byte of the stored Fletcher-32 changed", fletcher + 1, 0x01U},
        std::tuple{"the stored Fletcher-32's last byte changed", fletcher + 3, 0x80U}}) {
    SCOPED_TRACE(what);
    auto damaged = file;
    damaged[offset] = static_cast<char>(static_cast<unsigned char>(damaged[offset]) ^ mask);
    write_bytes(bad, damaged);
    std::string cpu_error;
    try {
      (void)from_file(bad, "/x");
      ADD_FAILURE() << "the CPU read a damaged chunk without an error";
    } catch (const RuntimeError& e) {
      cpu_error = e.what();
    }
    EXPECT_NE(cpu_error.find("chunk [4096:8192] of dataset '/x'"), std::string::npos) << cpu_error;
    EXPECT_NE(cpu_error.find("cannot be decoded: fletcher32: Fletcher-32 checksum mismatch (stored 0x"),
              std::string::npos)
        << cpu_error;
    EXPECT_NE(cpu_error.find(bad.string()), std::string::npos) << cpu_error;
    for (const auto mode : {settings::GpuDecode::On, settings::GpuDecode::Auto, settings::GpuDecode::Off}) {
      settings::set_gpu_decode(mode);
      try {
        (void)from_file(bad, "/x", {.device = 0});
        ADD_FAILURE() << "a damaged chunk was read without an error (gpu_decode " << static_cast<int>(mode) << ")";
      } catch (const RuntimeError& e) {
        EXPECT_EQ(std::string(e.what()), cpu_error) << "gpu_decode " << static_cast<int>(mode);
        if (mode == settings::GpuDecode::On) {
          EXPECT_EQ(last_device_io().decoder, "nvcomp");
        }
      }
    }
    settings::set_gpu_decode(settings::GpuDecode::On);
    const Box other{{8192}, {8192}};
    EXPECT_TRUE(same(read_box(bad, "/x", other, {.device = 0}), read_box(good, "/x", other)));
    EXPECT_EQ(last_device_io().decoder, "nvcomp");
  }

  // HDF5 before 1.6.3 stored the bytes of each 16-bit half of the checksum swapped; both decoders
  // accept that form, as HDF5 does.
  auto swapped = file;
  std::swap(swapped[fletcher], swapped[fletcher + 1]);
  std::swap(swapped[fletcher + 2], swapped[fletcher + 3]);
  const auto old = dir_ / "old.h5";
  write_bytes(old, swapped);
  EXPECT_EQ(std::memcmp(from_file(old, "/x").data(), expected.data(), expected.nbytes()), 0);
  settings::set_gpu_decode(settings::GpuDecode::On);
  EXPECT_TRUE(same(from_file(old, "/x", {.device = 0}), expected));
  EXPECT_EQ(last_device_io().decoder, "nvcomp");
}

// A build without the kernels (H5TILE_WITH_CUDA_KERNELS=OFF) cannot check deflate's Adler-32 on
// the GPU: deflate is decoded on the CPU, and the report says why (an error under on).
TEST_F(GpuDecode, WithoutTheKernelsDeflateIsDecodedOnTheCpuAndSaysWhy) {
  if (detail::gpu::kernels_built()) GTEST_SKIP() << "h5tile was built with its GPU kernels";
  const DType dtype(DTypeKind::Float32);
  const Shape shape{300, 200};
  const auto bytes = smooth(dtype, element_count(shape), 13);
  to_file(ArrayView{bytes.data(), dtype, shape, {}}, dir_ / "g.h5", "/x",
          {.layout = Layout::Chunked, .chunk = {64, 64}, .compression = {Compressor::Gzip}})
      .wait();
  settings::set_gpu_decode(settings::GpuDecode::Auto);
  EXPECT_TRUE(same(from_file(dir_ / "g.h5", "/x", {.device = 0}), from_file(dir_ / "g.h5", "/x")));
  EXPECT_EQ(last_device_io().decoder, "cpu");
  EXPECT_NE(last_device_io().decoder_reason.find("H5TILE_WITH_CUDA_KERNELS=OFF"), std::string::npos)
      << last_device_io().decoder_reason;
  settings::set_gpu_decode(settings::GpuDecode::On);
  EXPECT_THROW((void)from_file(dir_ / "g.h5", "/x", {.device = 0}), RuntimeError);
}

TEST_F(GpuDecode, FallsBackWithAReasonOrFailsWhenRequired) {
  const DType dtype(DTypeKind::Float32);
  const Shape shape{300, 200};
  const auto bytes = smooth(dtype, element_count(shape), 7);
  const ArrayView view{bytes.data(), dtype, shape, {}};
  to_file(view, dir_ / "f.h5", "/x",
          {.layout = Layout::Chunked, .chunk = {64, 64}, .compression = {Compressor::Gzip, 4, true, true}})
      .wait();
  to_file(view, dir_ / "g.h5", "/x", {.layout = Layout::Chunked, .chunk = {64, 64}, .compression = {Compressor::Gzip}})
      .wait();
  to_file(view, dir_ / "u.h5", "/x", {.layout = Layout::Chunked, .chunk = {64, 64}}).wait();
  const auto host = from_file(dir_ / "f.h5", "/x");
  // fletcher32 with no compressor: decoded on the CPU, and said so.
  to_file(view, dir_ / "n.h5", "/x",
          {.layout = Layout::Chunked, .chunk = {64, 64}, .compression = {Compressor::None, -1, true, true}})
      .wait();
  settings::set_gpu_decode(settings::GpuDecode::Auto);
  EXPECT_TRUE(same(from_file(dir_ / "n.h5", "/x", {.device = 0}), host));
  EXPECT_EQ(last_device_io().decoder, "cpu");
  EXPECT_EQ(last_device_io().decoder_reason, "fletcher32 with no compression filter is checked on the CPU");
  // Nothing to decode: no decoder, and On does not mind.
  settings::set_gpu_decode(settings::GpuDecode::On);
  EXPECT_TRUE(same(from_file(dir_ / "u.h5", "/x", {.device = 0}), host));
  EXPECT_EQ(last_device_io().decoder, "");
  try {
    (void)from_file(dir_ / "n.h5", "/x", {.device = 0});
    ADD_FAILURE() << "H5TILE_GPU_DECODE=on decoded fletcher32 on the CPU";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("H5TILE_GPU_DECODE=on but the GPU cannot decode dataset '/x'"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("fletcher32"), std::string::npos) << e.what();
  }
  // No nvCOMP where the setting points: the CPU under auto, an error naming it under on.
  settings::set_nvcomp_library("/nonexistent/libnvcomp.so.6");
  settings::set_gpu_decode(settings::GpuDecode::Auto);
  EXPECT_TRUE(same(from_file(dir_ / "g.h5", "/x", {.device = 0}), host));
  EXPECT_EQ(last_device_io().decoder, "cpu");
  EXPECT_NE(last_device_io().decoder_reason.find("dlopen('/nonexistent/libnvcomp.so.6') failed"), std::string::npos)
      << last_device_io().decoder_reason;
  settings::set_gpu_decode(settings::GpuDecode::On);
  try {
    (void)from_file(dir_ / "g.h5", "/x", {.device = 0});
    ADD_FAILURE() << "H5TILE_GPU_DECODE=on read without nvCOMP";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libnvcomp.so.6"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace h5tile
