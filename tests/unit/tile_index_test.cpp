// Early reads from the tile index: they stand when HDF5's mapping agrees with the index, are
// redone when it does not (a forged or stale index), and never change what a read returns.
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/h5tile.hpp>

#include "../integration/temp_dir.hpp"
#include "hdf5/file.hpp"
#include "layout/virtual/early_open.hpp"
#include "layout/virtual/tile_index.hpp"

namespace h5tile::detail {
namespace {
namespace fs = std::filesystem;

class EarlyReads : public testing_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    for (std::size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<std::int32_t>(i * 7 + 3);
    file_ = path("t.h5");
    to_file(view(data_.data(), kShape), file_, "/data", {.layout = Layout::Virtual, .ranks = kTiles, .sync = false})
        .wait();
  }
  void TearDown() override {
    settings::set_early_reads(true);
    TempDirTest::TearDown();
  }

  // Reads /data whole twice (from_file, read_into); `kept` and `redone`: how many early reads
  // ended each way (neither: none was tried).
  void expect_read(std::uint64_t kept, std::uint64_t redone, const ReadOptions& options = {}) {
    const auto kept_before = early_read_counts().kept.load();
    const auto redone_before = early_read_counts().redone.load();
    const auto got = from_file(file_, "/data", options);
    ASSERT_EQ(got.shape(), kShape);
    EXPECT_EQ(0, std::memcmp(got.data(), data_.data(), data_.size() * sizeof(std::int32_t)));
    std::vector<std::int32_t> into(data_.size(), -1);
    read_into(file_, "/data", view(into.data(), kShape), {}, options);
    EXPECT_EQ(into, data_);
    EXPECT_EQ(early_read_counts().kept.load() - kept_before, kept);
    EXPECT_EQ(early_read_counts().redone.load() - redone_before, redone);
  }

  // Rewrites the tile index of /data after `edit` (the mapping itself stays as written).
  void forge(const std::function<void(TileIndex&)>& edit) const {
    const auto file = open_local_file(file_, true);
    auto index = read_tile_index(file.get(), "/data");
    ASSERT_TRUE(index.has_value());
    edit(*index);
    const DatasetHandle dataset(H5Dopen2(file.get(), "/data", H5P_DEFAULT));
    for (const char* name : {kTileTableAttribute, kTileFilesAttribute, kShapeAttribute, kDtypeAttribute}) {
      ASSERT_GE(H5Adelete(dataset.get(), name), 0) << name;
    }
    const TypeHandle type(H5Dget_type(dataset.get()));
    write_tile_index(dataset.get(), type.get(), index->shape, index->tiles);
  }

  [[nodiscard]] fs::path tile_file(std::size_t i) const {
    const auto file = open_local_file(file_);
    return file_.parent_path() / read_tile_index(file.get(), "/data")->tiles.at(i).file;
  }

  static constexpr unsigned kTiles = 8;
  const Shape kShape{64, 16};
  std::vector<std::int32_t> data_ = std::vector<std::int32_t>(64 * 16);
  fs::path file_;
};

TEST_F(EarlyReads, StandWhenTheMappingAgrees) { expect_read(2, 0); }

TEST_F(EarlyReads, IndexHoldsTheMappingOfEveryTile) {
  const auto file = open_local_file(file_);
  const auto index = read_tile_index(file.get(), "/data");
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(index->dtype, dtype_of<std::int32_t>());
  EXPECT_EQ(index->shape, kShape);
  ASSERT_EQ(index->tiles.size(), kTiles);
  for (std::size_t i = 0; i < kTiles; ++i) {
    EXPECT_EQ(index->tiles[i].dst, (Box{{i * 8, 0}, {8, 16}})) << i;
    EXPECT_TRUE(fs::is_regular_file(file_.parent_path() / index->tiles[i].file)) << index->tiles[i].file;
  }
}

TEST_F(EarlyReads, AreRedoneWhenTheIndexNamesOtherFiles) {
  forge([](TileIndex& index) { std::swap(index.tiles[0].file, index.tiles[1].file); });
  expect_read(0, 2);
}

TEST_F(EarlyReads, VerifyReportsAnIndexThatDisagreesWithTheMapping) {
  EXPECT_EQ(verify(file_, "/data"), std::vector<std::string>{});
  forge([](TileIndex& index) { std::swap(index.tiles[0].file, index.tiles[1].file); });
  const auto problems = verify(file_, "/data");
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_NE(problems[0].find("tile index"), std::string::npos) << problems[0];
}

TEST_F(EarlyReads, AreRedoneWhenTheIndexHasOtherBoxes) {
  forge([](TileIndex& index) { std::swap(index.tiles[2].dst, index.tiles[5].dst); });
  expect_read(0, 2);
}

TEST_F(EarlyReads, AreNotTriedWhenIndexedTilesOverlap) {
  // Tasks of an early read must never write the same memory: an index whose tiles overlap is
  // not used at all, even when their sizes add up to the dataset's.
  forge([](TileIndex& index) { index.tiles[3].dst = index.tiles[4].dst; });  // covers 4 twice, 3 never
  expect_read(0, 0);
}

TEST_F(EarlyReads, AreNotTriedForTilesOutsideTheFolder) {
  fs::copy_file(tile_file(1), dir_.parent_path() / ("outside-" + dir_.filename().string() + ".h5"));
  forge([&](TileIndex& index) { index.tiles[1].file = "../outside-" + dir_.filename().string() + ".h5"; });
  expect_read(0, 0);
  fs::remove(dir_.parent_path() / ("outside-" + dir_.filename().string() + ".h5"));
}

// Reads /data with from_file_batched in blocks of `rows` full rows, assembled in one array.
std::vector<std::int32_t> read_in_blocks(BatchedReader& reader, std::size_t elements, std::uint64_t columns) {
  std::vector<std::int32_t> got(elements, -1);
  for (auto& block : reader) {
    std::memcpy(got.data() + block.offset[0] * columns, block.data.data(), block.data.nbytes());
  }
  return got;
}

TEST_F(EarlyReads, BatchedReadsStartFromTheIndexAndFollowTheMapping) {
  for (const bool forged : {false, true}) {
    if (forged) forge([](TileIndex& index) { std::swap(index.tiles[0].file, index.tiles[1].file); });
    const auto kept = early_read_counts().kept.load();
    const auto redone = early_read_counts().redone.load();
    auto reader = from_file_batched(file_, "/data", {5, 16});
    EXPECT_EQ(reader.info().shape, kShape);
    EXPECT_EQ(read_in_blocks(reader, data_.size(), 16), data_) << forged;
    EXPECT_EQ(early_read_counts().kept.load() - kept, forged ? 0U : 1U);
    EXPECT_EQ(early_read_counts().redone.load() - redone, forged ? 1U : 0U);
  }
}

TEST_F(EarlyReads, BatchedReadsFollowATileThatChangesMidway) {
  // 16 blocks, at most 2 read ahead: the last tile's blocks are read after it became a link
  // to a copy, which the early read refuses; they come through HDF5's mapping instead.
  auto reader = from_file_batched(file_, "/data", {4, 16});
  const auto tile = tile_file(7);
  fs::copy_file(tile, path("copy.h5"));
  fs::remove(tile);
  fs::create_symlink(path("copy.h5"), tile);
  EXPECT_EQ(read_in_blocks(reader, data_.size(), 16), data_);
}

TEST_F(EarlyReads, BatchedReadsCheckTheChunkSizeAgainstTheDataset) {
  EXPECT_THROW((void)from_file_batched(file_, "/data", {4}), InvalidArgument);
  EXPECT_THROW((void)from_file_batched(file_, "/data", {4, 0}), InvalidArgument);
  try {
    (void)from_file_batched(file_, "/data", {4, 16, 1});
    ADD_FAILURE() << "a chunk_size of the wrong length was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("has 2 axes (shape [64, 16])"), std::string::npos) << e.what();
  }
}

TEST(DisjointOnAGrid, DecidesGridsAndRefusesOverlapsAndBricks) {
  const std::vector<Box> rows{{{0, 0}, {4, 8}}, {{4, 0}, {4, 8}}, {{8, 0}, {2, 8}}};
  const std::vector<Box> grid{{{0, 0}, {2, 3}}, {{0, 3}, {2, 5}}, {{2, 0}, {2, 3}}, {{2, 3}, {2, 5}}};
  EXPECT_TRUE(disjoint_on_a_grid(rows));
  EXPECT_TRUE(disjoint_on_a_grid(grid));
  EXPECT_TRUE(disjoint_on_a_grid({}));
  auto twice = grid;
  twice[3] = twice[0];
  EXPECT_FALSE(disjoint_on_a_grid(twice));  // the same cell twice
  const std::vector<Box> inside{{{0, 0}, {4, 4}}, {{1, 1}, {2, 2}}};
  EXPECT_FALSE(disjoint_on_a_grid(inside));  // one box spans several cells
  const std::vector<Box> crossing{{{0, 0}, {3, 3}}, {{2, 2}, {3, 3}}};
  EXPECT_FALSE(disjoint_on_a_grid(crossing));
  const std::vector<Box> bricks{{{0, 0}, {1, 4}}, {{0, 4}, {1, 4}}, {{1, 2}, {1, 4}}, {{1, 0}, {1, 2}}};
  EXPECT_FALSE(disjoint_on_a_grid(bricks));  // disjoint, but not one grid: not decided here
}

TEST_F(EarlyReads, AreRedoneWhenTheIndexHasAnotherDtype) {
  const auto file = open_local_file(file_, true);
  const DatasetHandle dataset(H5Dopen2(file.get(), "/data", H5P_DEFAULT));
  ASSERT_GE(H5Adelete(dataset.get(), kDtypeAttribute), 0);
  const SpaceHandle none(H5Screate(H5S_NULL));
  const AttributeHandle forged(
      H5Acreate2(dataset.get(), kDtypeAttribute, H5T_IEEE_F32LE, none.get(), H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_TRUE(forged);
  // from_file reads into a float32 array first, then again into int32; read_into's int32 array
  // does not match the index, so it waits for the open.
  expect_read(0, 1);
}

TEST_F(EarlyReads, AreRedoneWhenATileIsALinkToACopy) {
  // The same bytes behind a symbolic link: HDF5 follows it, the early read does not.
  const auto tile = tile_file(6);
  fs::copy_file(tile, path("copy.h5"));
  fs::remove(tile);
  fs::create_symlink(path("copy.h5"), tile);
  expect_read(0, 2);
}

TEST_F(EarlyReads, AreRedoneWhenATileChangedSize) {
  // A tile rewritten by another program (here: grown) is read through HDF5 after the open.
  const auto tile = tile_file(2);
  fs::resize_file(tile, fs::file_size(tile) + 4096);
  expect_read(0, 2);
}

TEST_F(EarlyReads, AreNotTriedWithoutAnIndexOrWhenOff) {
  settings::set_early_reads(false);
  expect_read(0, 0);
  settings::set_early_reads(true);
  expect_read(0, 0, {.verify_checksums = true});  // checksums are checked before reading
  fs::create_directory(path("prefix"));
  ::setenv("HDF5_VDS_PREFIX", path("prefix").c_str(), 1);  // HDF5 looks for sources there first
  expect_read(0, 0);
  ::unsetenv("HDF5_VDS_PREFIX");
  {
    const auto file = open_local_file(file_, true);
    ASSERT_GE(H5Adelete_by_name(file.get(), "/data", kShapeAttribute, H5P_DEFAULT), 0);
  }
  expect_read(0, 0);  // as in files of earlier versions
}

TEST_F(EarlyReads, ReportTheErrorsOfTheOpen) {
  fs::remove(tile_file(4));
  for (const bool early : {true, false}) {
    settings::set_early_reads(early);
    EXPECT_THROW((void)from_file(file_, "/data"), VirtualSourceError) << early;
  }
}

TEST_F(EarlyReads, CheckTheCallersArrayAgainstTheDataset) {
  // Wrong dtype or shape: the same error as without early reads, and nothing read.
  std::vector<float> wrong_dtype(data_.size());
  EXPECT_THROW(read_into(file_, "/data", view(wrong_dtype.data(), kShape)), InvalidArgument);
  std::vector<std::int32_t> wrong_shape(32 * 16);
  EXPECT_THROW(read_into(file_, "/data", view(wrong_shape.data(), Shape{32, 16})), InvalidArgument);
  EXPECT_NO_THROW(read_into(file_, "/data", view(wrong_shape.data(), Shape{32, 16}), Shape{16, 0}));
  EXPECT_EQ(0, std::memcmp(wrong_shape.data(), data_.data() + 16 * 16, wrong_shape.size() * sizeof(std::int32_t)));
}

TEST_F(EarlyReads, ProgressEndsAtTheTotal) {
  const auto bytes = data_.size() * sizeof(std::int32_t);
  auto last_report = [&] {
    std::pair<std::uint64_t, std::uint64_t> last;
    (void)from_file(file_, "/data", {.progress = [&](std::uint64_t done, std::uint64_t total) {
                      last = {done, total};
                      return true;
                    }});
    return last;
  };
  EXPECT_EQ(last_report(), std::make_pair(bytes, bytes));
  forge([](TileIndex& index) { std::swap(index.tiles[0].file, index.tiles[7].file); });
  EXPECT_EQ(last_report(), std::make_pair(bytes, bytes));  // the read again counts from zero
}

}  // namespace
}  // namespace h5tile::detail
