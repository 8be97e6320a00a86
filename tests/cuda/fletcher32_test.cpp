// The GPU's Fletcher-32 kernel (cuda/fletcher32.cu), which checks the stored chunks of a dataset
// whose last filter is fletcher32, against the CPU codec (engine/codecs/fletcher32.cpp): chunks of
// different sizes in one launch, odd sizes, sizes around the kernel's 64 KiB parts and the codec's
// 360-word blocks, chunks at odd addresses, empty chunks, random and all-0xff bytes (sums that are
// multiples of 65535), and more chunks than a grid's y dimension holds. Skipped without a device or
// without the kernels.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/h5tile.hpp>

#include "cuda/kernels.hpp"
#include "engine/codecs/codec.hpp"

namespace h5tile::detail::gpu {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

// Device memory freed at the end of the scope.
class DeviceBytes {
 public:
  explicit DeviceBytes(std::size_t bytes) { (void)cudaMalloc(&p_, bytes < 1 ? 1 : bytes); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  ~DeviceBytes() { (void)cudaFree(p_); }
  [[nodiscard]] std::byte* get() const noexcept { return static_cast<std::byte*>(p_); }

 private:
  void* p_ = nullptr;
};

class Fletcher32Kernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible: GPU tests run on the GPU machine";
    if (!kernels_built()) GTEST_SKIP() << "h5tile was built without its GPU kernels (H5TILE_WITH_CUDA_KERNELS=OFF)";
  }

  // Chunks of `sizes` bytes, one after another at `shift` bytes past a 256-byte boundary each
  // (the bytes between them random: they must not count), summed in one launch and checked
  // against the CPU codec.
  static void check(const std::vector<std::uint64_t>& sizes, std::size_t shift, bool all_ff, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> at(sizes.size());
    std::size_t total = 0;
    for (std::size_t c = 0; c < sizes.size(); ++c) {
      at[c] = total + shift;
      total = (at[c] + sizes[c] + 255) / 256 * 256 + 256;
    }
    std::vector<std::byte> host(total);
    for (auto& b : host) b = static_cast<std::byte>(rng());
    if (all_ff) {
      for (std::size_t c = 0; c < sizes.size(); ++c) std::fill_n(host.begin() + at[c], sizes[c], std::byte{0xff});
    }
    const std::size_t count = sizes.size();
    const std::uint64_t most = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
    const DeviceBytes data(total);
    const DeviceBytes table(16 * count);
    const DeviceBytes out(count * sizeof(std::uint32_t));
    const DeviceBytes scratch(fletcher32_scratch_bytes(most, count));
    std::vector<const std::byte*> pointers(count);
    for (std::size_t c = 0; c < count; ++c) pointers[c] = data.get() + at[c];
    CUDA_OK(cudaMemcpy(data.get(), host.data(), total, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(table.get(), pointers.data(), 8 * count, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(table.get() + 8 * count, sizes.data(), 8 * count, cudaMemcpyHostToDevice));
    // Scratch left dirty: the kernel must not rely on it being zero.
    CUDA_OK(cudaMemset(scratch.get(), 0xab, fletcher32_scratch_bytes(most, count)));
    fletcher32_listed(reinterpret_cast<const std::byte* const*>(table.get()),
                      reinterpret_cast<const std::uint64_t*>(table.get() + 8 * count), most, count,
                      reinterpret_cast<std::uint32_t*>(out.get()), scratch.get(), nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<std::uint32_t> got(count);
    CUDA_OK(cudaMemcpy(got.data(), out.get(), count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    for (std::size_t c = 0; c < count; ++c) {
      ASSERT_EQ(got[c], fletcher32(host.data() + at[c], sizes[c]))
          << "chunk " << c << " of " << count << ", " << sizes[c] << " bytes at +" << shift
          << (all_ff ? ", all 0xff" : ", random");
    }
  }
};

TEST_F(Fletcher32Kernel, EqualsTheCpuCodecForEachSize) {
  const std::uint64_t kib = 1024;
  for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3},
                                std::uint64_t{719}, std::uint64_t{720}, std::uint64_t{721}, 64 * kib - 1, 64 * kib,
                                64 * kib + 1, 64 * kib + 2, 1024 * kib + 3, 3 * 1024 * kib + 7, 70 * 1024 * kib + 1}) {
    for (const bool all_ff : {false, true}) {
      for (const std::size_t shift : {std::size_t{0}, std::size_t{1}, std::size_t{14}}) {
        check({n}, shift, all_ff, static_cast<unsigned>(n));
      }
    }
  }
}

TEST_F(Fletcher32Kernel, ChunksOfDifferentSizesInOneLaunch) {
  // Compressed chunks differ in size: the blocks past a short chunk's end sum nothing.
  std::mt19937_64 rng(5);
  std::vector<std::uint64_t> sizes;
  for (int i = 0; i < 300; ++i) sizes.push_back(rng() % (300 * 1024));
  sizes.push_back(0);
  sizes.push_back(2 * 1024 * 1024 + 1);
  sizes.push_back(1);
  for (const bool all_ff : {false, true}) check(sizes, 6, all_ff, 17);
}

TEST_F(Fletcher32Kernel, MoreChunksThanTheGridHoldsInY) {
  std::vector<std::uint64_t> sizes(70000);
  for (std::size_t c = 0; c < sizes.size(); ++c) sizes[c] = c % 97;
  check(sizes, 2, false, 23);
}

}  // namespace
}  // namespace h5tile::detail::gpu
