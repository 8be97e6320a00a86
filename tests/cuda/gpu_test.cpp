// The GPU path on a real device: device arrays in and out for every dtype, byte-identical to
// the CPU path; odd sizes; an 8 GiB array; batched reads into device memory; the cuFile
// fallback; the staging bound. Skipped (and reported as skipped) without a CUDA device.
#include <cuda_runtime_api.h>

#include <cstring>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include <h5tile/h5tile.hpp>

namespace h5tile {
namespace {
namespace fs = std::filesystem;

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device visible: GPU tests run on the GPU machine";
    }
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    const char* base = std::getenv("H5TILE_GPU_TEST_DIR");
    dir_ = fs::path(base != nullptr ? base : fs::temp_directory_path().string()) / ("h5tile_gpu_" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Device memory holding `bytes`, freed at the end of the test.
  std::byte* device_copy(const std::vector<std::byte>& bytes) {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, std::max<std::size_t>(bytes.size(), 1)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
    allocations_.emplace_back(p, [](void* q) { cudaFree(q); });
    return static_cast<std::byte*>(p);
  }

  static std::vector<std::byte> to_host(const Array& a) {
    std::vector<std::byte> out(a.nbytes());
    EXPECT_EQ(a.device(), 0);
    EXPECT_EQ(cudaMemcpy(out.data(), a.data(), out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

  static std::vector<std::byte> random_bytes(DType dtype, std::uint64_t count, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::byte> out(count * dtype.size());
    for (auto& b : out) b = static_cast<std::byte>(dtype.kind() == DTypeKind::Bool ? rng() % 2 : rng());
    return out;
  }

  fs::path dir_;
  std::vector<std::unique_ptr<void, void (*)(void*)>> allocations_;
};

// Parameter: "<dtype>_<layout>", e.g. "float32_virtual".
class GpuDTypes : public Gpu, public ::testing::WithParamInterface<std::string> {};

TEST_P(GpuDTypes, DeviceRoundTripEqualsTheCpuPathByteForByte) {
  const auto cut = GetParam().find('_');
  const auto name = GetParam().substr(0, cut);
  const auto layout = layout_from_name(GetParam().substr(cut + 1));
  const DType dtype = DType::from_name(name);
  const Shape shape{1009, 7, 3};  // primes
  const auto bytes = random_bytes(dtype, element_count(shape), 11);
  const ArrayView on_device{device_copy(bytes), dtype, shape, {}};
  to_file(on_device, dir_ / "d.h5", "/x", {.layout = layout, .ranks = 5}).wait();
  const auto host = from_file(dir_ / "d.h5", "/x");  // the CPU path
  ASSERT_EQ(host.nbytes(), bytes.size());
  EXPECT_EQ(std::memcmp(host.data(), bytes.data(), bytes.size()), 0);
  const auto dev = from_file(dir_ / "d.h5", "/x", {.device = 0});
  EXPECT_EQ(dev.device(), 0);
  EXPECT_EQ(dev.shape(), shape);
  EXPECT_TRUE(to_host(dev) == bytes);
  EXPECT_NE(last_device_io().path, "");
  EXPECT_GT(last_device_io().seconds, 0.0);
  EXPECT_LE(last_device_io().plan_seconds, last_device_io().seconds);
  // Into a device buffer the caller owns.
  const ArrayView into{device_copy(std::vector<std::byte>(bytes.size())), dtype, shape, {}};
  read_into(dir_ / "d.h5", "/x", into);
  std::vector<std::byte> back(bytes.size());
  ASSERT_EQ(cudaMemcpy(back.data(), into.data, back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_TRUE(back == bytes);
}

std::vector<std::string> gpu_cases() {
  std::vector<std::string> out;
  for (const char* dtype : {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                            "float32", "float64", "complex64", "complex128", "V5"}) {
    for (const char* layout : {"virtual", "contiguous", "chunked"}) out.push_back(std::string(dtype) + "_" + layout);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, GpuDTypes, ::testing::ValuesIn(gpu_cases()), [](const auto& p) { return p.param; });

TEST_F(Gpu, StridedDeviceViewsAndBoxesIntoDevice) {
  // A column-major (transposed) 61x37 float64 device array is written as its logical array.
  std::vector<double> col_major(61 * 37);
  for (std::size_t i = 0; i < col_major.size(); ++i) col_major[i] = static_cast<double>(i) * 0.5;
  std::vector<std::byte> raw(col_major.size() * 8);
  std::memcpy(raw.data(), col_major.data(), raw.size());
  const ArrayView transposed{device_copy(raw), DType(DTypeKind::Float64), {61, 37}, {8, 61 * 8}};
  to_file(transposed, dir_ / "t.h5", "/t", {.ranks = 3}).wait();
  const auto host = from_file(dir_ / "t.h5", "/t");
  const auto got = host.as<double>();
  for (std::size_t r = 0; r < 61; ++r)
    for (std::size_t c = 0; c < 37; ++c) ASSERT_EQ(got[r * 37 + c], col_major[c * 61 + r]);
  // A box into device memory equals the same box on the host.
  const Box box{{5, 3}, {50, 20}};
  const auto dev_box = read_box(dir_ / "t.h5", "/t", box, {.device = 0});
  const auto host_box = read_box(dir_ / "t.h5", "/t", box);
  const auto dev_bytes = to_host(dev_box);
  EXPECT_EQ(std::memcmp(dev_bytes.data(), host_box.data(), host_box.nbytes()), 0);
}

TEST_F(Gpu, BatchedReadsIntoDeviceMemory) {
  const DType dtype(DTypeKind::Int32);
  const auto bytes = random_bytes(dtype, 1013 * 17, 3);
  to_file(ArrayView{bytes.data(), dtype, {1013, 17}, {}}, dir_ / "b.h5", "/b", {.ranks = 4}).wait();
  std::vector<std::byte> assembled(bytes.size());
  std::uint64_t blocks = 0;
  for (Block& b : from_file_batched(dir_ / "b.h5", "/b", {100, 10}, {.device = 0})) {
    ASSERT_EQ(b.data.device(), 0);
    const auto part = to_host(b.data);
    const auto h = b.data.shape()[0];
    const auto w = b.data.shape()[1];
    for (std::uint64_t i = 0; i < h; ++i)
      std::memcpy(assembled.data() + ((b.offset[0] + i) * 17 + b.offset[1]) * 4, part.data() + i * w * 4, w * 4);
    ++blocks;
  }
  EXPECT_EQ(blocks, 11U * 2U);
  EXPECT_TRUE(assembled == bytes);
}

TEST_F(Gpu, CuFileFallsBackCleanlyOrFailsWhenRequired) {
  const DType dtype(DTypeKind::Float32);
  const auto bytes = random_bytes(dtype, 1 << 20, 5);
  to_file(ArrayView{bytes.data(), dtype, {1 << 20}, {}}, dir_ / "g.h5", "/g", {.layout = Layout::Contiguous}).wait();
  settings::set_gds(settings::Gds::Auto);
  const auto dev = from_file(dir_ / "g.h5", "/g", {.device = 0});
  EXPECT_TRUE(to_host(dev) == bytes);
  const auto report = last_device_io();
  std::printf("[ INFO     ] GDS auto: path '%s', reason '%s'\n", report.path.c_str(), report.gds_reason.c_str());
  if (report.path == "staging") {
    EXPECT_FALSE(report.gds_reason.empty());  // says why cuFile was not used
    settings::set_gds(settings::Gds::On);
    EXPECT_THROW((void)from_file(dir_ / "g.h5", "/g", {.device = 0}), RuntimeError);
  }
  settings::set_gds(settings::Gds::Off);
  EXPECT_TRUE(to_host(from_file(dir_ / "g.h5", "/g", {.device = 0})) == bytes);
  EXPECT_EQ(last_device_io().path, "staging");
  settings::set_gds(settings::Gds::Auto);
}

TEST_F(Gpu, LastDeviceIoDescribesTheLastCallNotAnEarlierOne) {
  const DType dtype(DTypeKind::Float32);
  const auto bytes = random_bytes(dtype, 1 << 18, 6);
  const ArrayView view{bytes.data(), dtype, {1 << 18}, {}};
  to_file(view, dir_ / "first.h5", "/a", {.layout = Layout::Contiguous}).wait();
  to_file(view, dir_ / "second.h5", "/a", {.layout = Layout::Contiguous}).wait();
  to_file(view, dir_ / "tiles.h5", "/a", {.layout = Layout::Virtual, .ranks = 2}).wait();
  settings::set_gds(settings::Gds::Auto);
  (void)from_file(dir_ / "first.h5", "/a", {.device = 0});
  const auto first = last_device_io();
  (void)from_file(dir_ / "second.h5", "/a", {.device = 0});
  const auto second = last_device_io();
  std::printf("[ INFO     ] first: '%s' '%s'; second: '%s' '%s'\n", first.path.c_str(), first.gds_reason.c_str(),
              second.path.c_str(), second.gds_reason.c_str());
  EXPECT_EQ(second.gds_reason.find("first.h5"), std::string::npos) << second.gds_reason;
  if (second.path == "staging") {
    EXPECT_NE(second.gds_reason.find("second.h5"), std::string::npos) << second.gds_reason;
  }
  (void)from_file(dir_ / "tiles.h5", "/a", {.device = 0});  // tiles read by their tile table
  const auto tiles = last_device_io();
  EXPECT_EQ(tiles.path, "staging");
  EXPECT_NE(tiles.gds_reason.find("tile table"), std::string::npos) << tiles.gds_reason;
  settings::set_gds(settings::Gds::Off);
  (void)from_file(dir_ / "second.h5", "/a", {.device = 0});
  EXPECT_EQ(last_device_io().gds_reason, "H5TILE_GDS=off");
  settings::set_gds(settings::Gds::Auto);
  to_file(ArrayView{device_copy(bytes), dtype, {1 << 18}, {}}, dir_ / "w.h5", "/a").wait();
  EXPECT_EQ(last_device_io().path, "staging");
  EXPECT_EQ(last_device_io().gds_reason, "") << "writes do not try GPUDirect Storage";
}

TEST_F(Gpu, StagingMemoryStaysWithinTheSetting) {
  const auto old_staging = settings::staging_bytes();
  const auto old_task = settings::task_size();
  settings::set_staging_bytes(16 << 20);
  settings::set_task_size(4 << 20);
  const DType dtype(DTypeKind::UInt8);
  const std::uint64_t n = 1ULL << 30;  // 1 GiB through 16 MiB of staging
  std::vector<std::byte> bytes(n);
  for (std::uint64_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>((i * 7) >> 3);
  to_file(ArrayView{device_copy(bytes), dtype, {n}, {}}, dir_ / "s.h5", "/s", {.ranks = 4, .sync = false}).wait();
  const auto dev = from_file(dir_ / "s.h5", "/s", {.device = 0});
  EXPECT_TRUE(to_host(dev) == bytes);
  const auto pinned = last_device_io().staging_pinned_bytes;
  std::printf("[ INFO     ] pinned staging memory after 1 GiB each way: %llu bytes\n",
              static_cast<unsigned long long>(pinned));
  EXPECT_LE(pinned, 16U << 20);
  EXPECT_GT(pinned, 0U);
  settings::set_staging_bytes(old_staging);
  settings::set_task_size(old_task);
}

TEST_F(Gpu, EightGiBArrayRoundTrip) {
  const std::uint64_t n = (8ULL << 30) / 4;  // 8 GiB of float32
  const DType dtype(DTypeKind::Float32);
  std::vector<std::uint32_t> pattern(n);
  for (std::uint64_t i = 0; i < n; ++i) pattern[i] = static_cast<std::uint32_t>(i * 2654435761ULL + 12345ULL);
  void* d = nullptr;
  CUDA_OK(cudaMalloc(&d, n * 4));
  allocations_.emplace_back(d, [](void* q) { cudaFree(q); });
  CUDA_OK(cudaMemcpy(d, pattern.data(), n * 4, cudaMemcpyHostToDevice));
  const Shape shape{n / 4096, 4096};
  to_file(ArrayView{d, dtype, shape, {}}, dir_ / "big.h5", "/big", {.ranks = 8, .sync = false}).wait();
  const auto dev = from_file(dir_ / "big.h5", "/big", {.device = 0});
  ASSERT_EQ(dev.nbytes(), n * 4);
  std::vector<std::uint32_t> back(n);
  CUDA_OK(cudaMemcpy(back.data(), dev.data(), n * 4, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(back == pattern);
}

TEST_F(Gpu, DeviceArraysAreOwned) {
  const Array a(DType(DTypeKind::Float64), {3, 4}, 0);
  EXPECT_EQ(a.device(), 0);
  EXPECT_EQ(a.view().memory, MemoryKind::Device);
  EXPECT_THROW(Array(DType(DTypeKind::Float64), {3}, 99), RuntimeError);
}

}  // namespace
}  // namespace h5tile
