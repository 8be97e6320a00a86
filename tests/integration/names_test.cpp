// File and dataset names that HDF5 reads as patterns ('%' in virtual dataset source names) or
// that h5tile once folded together ('/a%b' and '/a_b'): every byte reads back, through h5tile's
// own reads and through HDF5's (raw I/O off), in the virtual layout and after consolidate.
#include <numeric>

#include <h5tile/settings.hpp>

#include "temp_dir.hpp"

namespace h5tile {
namespace {

struct NameCase {
  std::string label;
  std::string file;
  std::string dataset;
};

class Names : public testing_support::TempDirTest, public ::testing::WithParamInterface<NameCase> {
 protected:
  void TearDown() override {
    settings::set_raw_io(true);
    TempDirTest::TearDown();
  }
};

std::vector<std::int32_t> iota_from(std::int32_t first, std::size_t n) {
  std::vector<std::int32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// The dataset read by h5tile (raw I/O and early reads) and by HDF5 itself (raw I/O off).
void expect_reads(const std::filesystem::path& file, const std::string& dataset, const std::vector<std::int32_t>& v) {
  const auto nbytes = v.size() * sizeof(std::int32_t);
  EXPECT_TRUE(testing_support::equal_bytes(from_file(file, dataset), v.data(), nbytes)) << file << ":" << dataset;
  settings::set_raw_io(false);
  EXPECT_TRUE(testing_support::equal_bytes(from_file(file, dataset), v.data(), nbytes))
      << "HDF5's read of " << file << ":" << dataset;
  settings::set_raw_io(true);
  EXPECT_EQ(verify(file, dataset, true), std::vector<std::string>{}) << file << ":" << dataset;
}

TEST_P(Names, VirtualAndConsolidatedReadBack) {
  const auto& c = GetParam();
  const auto v = iota_from(1, 12 * 5);
  to_file(view(v.data(), {12, 5}), path(c.file), c.dataset, {.layout = Layout::Virtual, .ranks = 3}).wait();
  EXPECT_EQ(describe(path(c.file), c.dataset).layout, "virtual");
  EXPECT_TRUE(std::filesystem::is_directory(path(c.file + ".tiles") / c.dataset.substr(1)));
  expect_reads(path(c.file), c.dataset, v);
  consolidate(path(c.file), c.dataset, path("c " + c.file));
  expect_reads(path("c " + c.file), c.dataset, v);
}

INSTANTIATE_TEST_SUITE_P(Cases, Names,
                         ::testing::Values(NameCase{"percent_space_utf8", "r%sult 50% \xc3\xbc.h5", "/a%b"},
                                           NameCase{"escaped_percent", "a%%b.h5", "/data"},
                                           NameCase{"block_pattern", "t%b.h5", "/g %/x%%y \xc3\xbc"},
                                           NameCase{"trailing_percent", "x%", "/y%"}),
                         [](const auto& param_info) { return param_info.param.label; });

using NameCollisions = testing_support::TempDirTest;

// '/a%b' and '/a_b' once shared the tile folder 'a_b': appending one removed the other's tiles.
TEST_F(NameCollisions, AppendingOneDatasetKeepsTheOthersTiles) {
  const auto a = iota_from(100, 8 * 3);
  const auto b = iota_from(-50, 6 * 4);
  for (const bool keep_previous : {true, false}) {
    const auto file = path(keep_previous ? "keep.h5" : "nokeep.h5");
    for (int round = 0; round < 3; ++round) {  // later rounds replace (and clean up) each
      to_file(view(a.data(), {8, 3}), file, "/a%b",
              {.layout = Layout::Virtual, .mode = Mode::Append, .ranks = 2, .keep_previous = keep_previous})
          .wait();
      to_file(view(b.data(), {6, 4}), file, "/a_b",
              {.layout = Layout::Virtual, .mode = Mode::Append, .ranks = 3, .keep_previous = keep_previous})
          .wait();
      expect_reads(file, "/a%b", a);
      expect_reads(file, "/a_b", b);
    }
  }
}

}  // namespace
}  // namespace h5tile
