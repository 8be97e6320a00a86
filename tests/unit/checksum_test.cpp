// Tile identities (engine/checksum.hpp): what shows that a tile file is the one written. Every
// byte outside the data counts, and so do the offset and the sizes; the data does not (its
// checksum is separate, checked on request).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <h5tile/error.hpp>

#include <gtest/gtest.h>

#include "engine/checksum.hpp"
#include "io/posix/posix_file.hpp"

namespace h5tile::detail {
namespace {
namespace fs = std::filesystem;

class TileIdentity : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kOffset = 4096;
  static constexpr std::uint64_t kData = 10000;
  static constexpr std::uint64_t kSize = kOffset + kData + 300;  // metadata before and after the data

  void SetUp() override {
    path_ = fs::temp_directory_path() / ("h5tile_identity_" + std::to_string(::getpid()) + ".bin");
    bytes_.resize(kSize);
    std::mt19937_64 rng(5);
    for (auto& b : bytes_) b = static_cast<std::byte>(rng());
    write();
  }
  void TearDown() override { fs::remove(path_); }

  void write() const {
    const PosixFile out(path_, O_WRONLY | O_CREAT | O_TRUNC);
    out.write_at(bytes_.data(), bytes_.size(), 0);
  }
  [[nodiscard]] std::optional<std::uint64_t> identity(std::uint64_t offset = kOffset, std::uint64_t data = kData,
                                                      std::uint64_t size = kSize) const {
    return tile_identity(PosixFile(path_, O_RDONLY), offset, data, size);
  }

  fs::path path_;
  std::vector<std::byte> bytes_;
};

TEST_F(TileIdentity, IsStableAndIgnoresTheData) {
  const auto first = identity();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(identity(), first);
  bytes_[kOffset] ^= std::byte{1};
  bytes_[kOffset + kData - 1] ^= std::byte{1};
  write();
  EXPECT_EQ(identity(), first);  // the data's own checksum covers it
}

TEST_F(TileIdentity, ChangesWithAnyByteOutsideTheData) {
  const auto first = identity();
  for (const std::uint64_t at : {std::uint64_t{0}, kOffset - 1, kOffset + kData, kSize - 1}) {
    bytes_[at] ^= std::byte{0x80};
    write();
    EXPECT_NE(identity(), first) << "byte " << at;
    bytes_[at] ^= std::byte{0x80};
  }
  write();
  EXPECT_EQ(identity(), first);
}

TEST_F(TileIdentity, ChangesWithTheOffsetAndTheSizes) {
  const auto first = identity();
  EXPECT_NE(identity(kOffset + 8, kData - 8), first);
  EXPECT_NE(identity(kOffset, kData - 8), first);
  EXPECT_NE(identity(kOffset - 8, kData), first);
}

TEST_F(TileIdentity, NoneForDataThatDoesNotLieInTheFile) {
  EXPECT_FALSE(identity(kSize, 1).has_value());
  EXPECT_FALSE(identity(kSize - kData + 1, kData).has_value());
  EXPECT_FALSE(identity(0, kSize + 1).has_value());
  EXPECT_FALSE(identity(~std::uint64_t{0} - 5, 10).has_value());  // no wrap-around
}

// RegionChecksum: the checksum a virtual write records, computed part by part while the tile is
// written, must be the checksum of the file's bytes as read back once the write is done.
class RegionChecksumTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kOffset = 4096;
  static constexpr std::uint64_t kData = (std::uint64_t{3} << 20) + 777;  // several read-back blocks
  static constexpr std::uint64_t kSize = kOffset + kData + 500;

  void SetUp() override {
    path_ = fs::temp_directory_path() / ("h5tile_region_checksum_" + std::to_string(::getpid()) + ".bin");
    bytes_.resize(kSize);
    std::mt19937_64 rng(7);
    for (auto& b : bytes_) b = static_cast<std::byte>(rng());
    // The file as HDF5 leaves it before the tile is written: metadata, and zeros where the data goes.
    const PosixFile out(path_, O_WRONLY | O_CREAT | O_TRUNC);
    const std::vector<std::byte> zeros(kSize);
    out.write_at(zeros.data(), kSize, 0);
    out.write_at(bytes_.data(), kOffset, 0);
  }
  void TearDown() override { fs::remove(path_); }

  // Parts of the data, of about `part` bytes, as [begin, end) file offsets.
  [[nodiscard]] static std::vector<std::pair<std::uint64_t, std::uint64_t>> parts(std::uint64_t part) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (std::uint64_t at = kOffset; at < kOffset + kData; at += part) {
      out.emplace_back(at, std::min(at + part, kOffset + kData));
    }
    return out;
  }

  // The checksum of the data as read back from the finished file.
  [[nodiscard]] std::uint64_t read_back() const { return checksum_region(PosixFile(path_, O_RDONLY), kOffset, kData); }

  fs::path path_;
  std::vector<std::byte> bytes_;
};

TEST_F(RegionChecksumTest, PartsWrittenInAnyOrderOnManyThreadsGiveTheChecksumOfTheFile) {
  for (const std::uint64_t part : {std::uint64_t{4096}, std::uint64_t{100000}, std::uint64_t{1} << 20}) {
    auto order = parts(part);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(part));
    const PosixFile out(path_, O_WRONLY);
    const PosixFile back(path_, O_RDONLY);
    RegionChecksum checksum(back, kOffset, kData);
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t) {
      writers.emplace_back([&] {
        for (std::size_t i = next++; i < order.size(); i = next++) {
          const auto [begin, end] = order[i];
          out.write_at(bytes_.data() + begin, end - begin, begin);
          checksum.written(begin, end);
        }
      });
    }
    for (auto& w : writers) w.join();
    EXPECT_EQ(checksum.finish(), read_back()) << "parts of " << part << " bytes";
  }
}

TEST_F(RegionChecksumTest, BytesNeverReportedAreReadBackAtTheEnd) {
  const PosixFile out(path_, O_WRONLY);
  out.write_at(bytes_.data() + kOffset, kData, kOffset);
  const PosixFile back(path_, O_RDONLY);
  {
    RegionChecksum none(back, kOffset, kData);
    EXPECT_EQ(none.finish(), read_back());
  }
  RegionChecksum some(back, kOffset, kData);
  some.written(kOffset + 8192, kOffset + 16384);  // not where the hash stands: kept for later
  some.written(0, kOffset + 100);                 // begins before the region: its part inside counts
  some.written(kOffset + kData - 10, kSize);      // ends after it
  EXPECT_EQ(some.finish(), read_back());
}

TEST_F(RegionChecksumTest, IsOfTheFileNotOfTheMemoryWrittenFrom) {
  const PosixFile out(path_, O_WRONLY);
  const PosixFile back(path_, O_RDONLY);
  RegionChecksum checksum(back, kOffset, kData);
  auto memory = bytes_;
  out.write_at(memory.data() + kOffset, kData, kOffset);
  checksum.written(kOffset, kOffset + kData);
  memory[kOffset + 5] ^= std::byte{1};  // the memory changes after the write: the file does not
  const auto copy = path_.string() + ".memory";
  {
    const PosixFile other(copy, O_WRONLY | O_CREAT | O_TRUNC);
    other.write_at(memory.data(), kSize, 0);
  }
  const auto of_memory = checksum_region(PosixFile(copy, O_RDONLY), kOffset, kData);
  fs::remove(copy);
  EXPECT_EQ(checksum.finish(), read_back());
  EXPECT_NE(checksum_region(back, kOffset, kData), of_memory);
}

TEST_F(RegionChecksumTest, AFailedReadBackIsAnErrorNotAChecksum) {
  const PosixFile back(path_, O_RDONLY);
  RegionChecksum checksum(back, kOffset, kSize);  // runs past the end of the file
  EXPECT_THROW(checksum.written(kOffset, kOffset + kSize), IoError);
  EXPECT_THROW((void)checksum.finish(), RuntimeError);
}

}  // namespace
}  // namespace h5tile::detail
