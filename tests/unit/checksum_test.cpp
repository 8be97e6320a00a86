// Tile identities (engine/checksum.hpp): what shows that a tile file is the one written. Every
// byte outside the data counts, and so do the offset and the sizes; the data does not (its
// checksum is separate, checked on request).
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/checksum.hpp"
#include "engine/posix_file.hpp"

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

}  // namespace
}  // namespace h5tile::detail
