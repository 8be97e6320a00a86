// The GPU's Adler-32 kernel (cuda/adler32.cu), which checks deflate chunks inflated by nvCOMP,
// against zlib's adler32() (unit/adler32_reference.hpp): sizes around zlib's NMAX (5552) and
// the kernel's blocks (64 KiB), 1 MiB + 3, random bytes and all-0xff bytes (the largest sums),
// batches of chunks, and more chunks than a grid's y dimension holds. Skipped without a device or
// without the kernels.
#include <cuda_runtime_api.h>

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/h5tile.hpp>

#include "cuda/kernels.hpp"
#include "unit/adler32_reference.hpp"

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

class Adler32Kernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible: GPU tests run on the GPU machine";
    if (!kernels_built()) GTEST_SKIP() << "h5tile was built without its GPU kernels (H5TILE_WITH_CUDA_KERNELS=OFF)";
  }

  // `count` chunks of `chunk_bytes` each, `stride` bytes apart (the rest of each stride random
  // too: bytes beyond a chunk must not count), checked against the reference.
  static void check(std::size_t chunk_bytes, std::size_t stride, std::size_t count, bool all_ff, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::byte> host(stride * count);
    for (auto& b : host) b = all_ff ? std::byte{0xff} : static_cast<std::byte>(rng());
    if (all_ff) {
      for (std::size_t c = 0; c < count; ++c) {
        for (std::size_t i = chunk_bytes; i < stride; ++i) host[c * stride + i] = static_cast<std::byte>(rng());
      }
    }
    const DeviceBytes data(host.size());
    const DeviceBytes out(count * sizeof(std::uint32_t));
    const DeviceBytes scratch(adler32_scratch_bytes(chunk_bytes, count));
    CUDA_OK(cudaMemcpy(data.get(), host.data(), host.size(), cudaMemcpyHostToDevice));
    // Scratch left dirty: the kernel must not rely on it being zero.
    CUDA_OK(cudaMemset(scratch.get(), 0xab, adler32_scratch_bytes(chunk_bytes, count)));
    adler32_chunks(data.get(), chunk_bytes, stride, count, reinterpret_cast<std::uint32_t*>(out.get()), scratch.get(),
                   nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<std::uint32_t> got(count);
    CUDA_OK(cudaMemcpy(got.data(), out.get(), count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    for (std::size_t c = 0; c < count; ++c) {
      ASSERT_EQ(got[c], reference_adler32(host.data() + c * stride, chunk_bytes))
          << "chunk " << c << " of " << count << ", " << chunk_bytes << " bytes, stride " << stride
          << (all_ff ? ", all 0xff" : ", random");
    }
  }

  static std::size_t stride_for(std::size_t bytes) { return (bytes + 255) / 256 * 256 + 256; }
};

TEST_F(Adler32Kernel, EqualsZlibForEachSize) {
  const std::size_t mib = std::size_t{1} << 20;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{15}, std::size_t{16},
                              std::size_t{17}, std::size_t{5552}, std::size_t{5553}, std::size_t{65535},
                              std::size_t{65536}, std::size_t{65537}, mib + 3, 3 * mib + 7}) {
    for (const bool all_ff : {false, true}) {
      check(n, stride_for(n), 1, all_ff, static_cast<unsigned>(n));
      check(n, stride_for(n), 5, all_ff, static_cast<unsigned>(n) + 1);
    }
  }
}

// Chunks of 64 MiB + 1 get the most blocks (1024), each summing a part of 64 KiB and more.
TEST_F(Adler32Kernel, EqualsZlibForAChunkOfTheMostBlocks) {
  const std::size_t n = (std::size_t{64} << 20) + 1;
  EXPECT_EQ(adler32_blocks(n), 1024U);
  check(n, stride_for(n), 2, false, 7);
  check(n, stride_for(n), 1, true, 8);
}

// More chunks than a grid's y dimension (65535): the blocks go round the chunks again.
TEST_F(Adler32Kernel, EqualsZlibForMoreChunksThanTheGridHolds) { check(5, 16, 70001, false, 9); }

}  // namespace
}  // namespace h5tile::detail::gpu
