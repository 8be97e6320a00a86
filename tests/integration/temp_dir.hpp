#pragma once
// A per-test temporary folder, removed afterwards.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/h5tile.hpp>

namespace h5tile::testing_support {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = std::filesystem::temp_directory_path() / ("h5tile_it_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  [[nodiscard]] std::filesystem::path path(const std::string& name) const { return dir_ / name; }
  std::filesystem::path dir_;
};

// Random bytes valid for `dtype` (bool as 0/1).
inline std::vector<std::byte> random_bytes(DType dtype, std::uint64_t count, unsigned seed = 1) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(count * dtype.size());
  for (auto& b : out) {
    b = static_cast<std::byte>(dtype.kind() == DTypeKind::Bool ? rng() % 2 : rng());
  }
  return out;
}

inline bool equal_bytes(const Array& a, const void* data, std::uint64_t nbytes) {
  return a.nbytes() == nbytes && std::memcmp(a.data(), data, nbytes) == 0;
}

}  // namespace h5tile::testing_support
