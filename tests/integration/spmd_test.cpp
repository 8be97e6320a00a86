// Per-rank API over the thread communicator, and reading what it wrote tile by tile.
#include <atomic>
#include <mutex>
#include <numeric>

#include "temp_dir.hpp"

namespace h5tile {
namespace {

class Spmd : public testing_support::TempDirTest, public ::testing::WithParamInterface<unsigned> {};
using CompressedSpmdErrors = testing_support::TempDirTest;
using CompressedRounds = testing_support::TempDirTest;

// Rank `rank`'s two tiles of a 20x9 int64 array `global` split among `ranks` ranks: rows in
// `ranks` bands, columns in two halves [0:4] and [4:9].
std::vector<Tile> grid_tiles(const std::vector<std::int64_t>& global, unsigned ranks, int rank) {
  const auto r = static_cast<std::uint64_t>(rank);
  const std::uint64_t lo = 20 * r / ranks;
  const std::uint64_t hi = 20 * (r + 1) / ranks;
  std::vector<Tile> tiles;
  for (const auto& [c0, c1] : {std::pair<std::uint64_t, std::uint64_t>{0, 4}, {4, 9}}) {
    const ArrayView part{global.data() + lo * 9 + c0, DType(DTypeKind::Int64), {hi - lo, c1 - c0}, {72, 8}};
    tiles.push_back({Box{{lo, c0}, {hi - lo, c1 - c0}}, part});
  }
  return tiles;
}

// A 2-D grid of tiles: each of `ranks` ranks owns two tiles of a 20x9 int64 array.
TEST_P(Spmd, TilesOfAGridRoundTripAndEachRankReadsItsOwn) {
  const unsigned ranks = GetParam();
  const Shape shape{20, 9};
  std::vector<std::int64_t> global(180);
  std::iota(global.begin(), global.end(), 0);
  run_thread_ranks(ranks, [&](Communicator& comm) {
    write_tiles(comm, shape, grid_tiles(global, ranks, comm.rank()), path("grid.h5"), "/g");
  });
  const auto whole = from_file(path("grid.h5"), "/g");
  EXPECT_TRUE(testing_support::equal_bytes(whole, global.data(), global.size() * 8));
  EXPECT_EQ(describe(path("grid.h5"), "/g").virtual_sources, 2 * ranks);

  // Read back with twice as many ranks as wrote: each gets a share, together the whole.
  std::vector<std::uint64_t> seen(180, 0);
  std::mutex m;
  run_thread_ranks(2 * ranks, [&](Communicator& comm) {
    const auto tile = read_tile(comm, path("grid.h5"), "/g");
    const auto got = tile.data.as<std::int64_t>();
    const std::lock_guard lock(m);
    std::size_t k = 0;
    for (auto i = tile.box.offset[0]; i < tile.box.offset[0] + tile.box.extent[0]; ++i)
      for (auto j = tile.box.offset[1]; j < tile.box.offset[1] + tile.box.extent[1]; ++j) {
        EXPECT_EQ(got[k++], global[i * 9 + j]);
        ++seen[i * 9 + j];
      }
  });
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](auto n) { return n == 1; }));
}

INSTANTIATE_TEST_SUITE_P(Ranks, Spmd, ::testing::Values(1U, 2U, 3U, 7U));

// Each rank writes its grid_tiles into one compressed chunked dataset, with `chunk`.
void write_compressed_grid(unsigned ranks, const std::vector<std::int64_t>& global, const Shape& chunk,
                           const std::filesystem::path& file) {
  run_thread_ranks(ranks, [&](Communicator& comm) {
    write_tiles(comm, {20, 9}, grid_tiles(global, ranks, comm.rank()), file, "/g",
                {.layout = Layout::Chunked,
                 .chunk = chunk,
                 .compression = {.compressor = Compressor::Gzip, .level = 5, .shuffle = true, .fletcher32 = true}});
  });
}

class CompressedSpmd : public testing_support::TempDirTest, public ::testing::WithParamInterface<unsigned> {};

TEST_P(CompressedSpmd, TilesOfAGridWriteTheirOwnChunks) {
  std::vector<std::int64_t> global(180);
  std::iota(global.begin(), global.end(), -40);
  write_compressed_grid(GetParam(), global, {5, 4}, path("grid.h5"));  // edge chunks along the columns
  const auto whole = from_file(path("grid.h5"), "/g");
  EXPECT_TRUE(testing_support::equal_bytes(whole, global.data(), global.size() * 8));
  const auto info = describe(path("grid.h5"), "/g");
  EXPECT_EQ(info.chunk, (Shape{5, 4}));
  EXPECT_EQ(info.filters, (std::vector<std::string>{"shuffle", "deflate", "fletcher32"}));
  EXPECT_EQ(info.decoder, "h5tile");
}

// Rows split at 20 * r / ranks: multiples of 5 for these counts.
INSTANTIATE_TEST_SUITE_P(Ranks, CompressedSpmd, ::testing::Values(1U, 2U, 4U));

// Ranks of 68, 68 and 67 one-row chunks, at most 32 a round with a task size of 4 KiB: rank 0
// has HDF5 allocate every rank's chunks in 3 rounds, the last one short on rank 2.
TEST_F(CompressedRounds, ManyRoundsOfChunksOnRanksWithDifferentCounts) {
  constexpr std::uint64_t kRows = 203;
  constexpr std::uint64_t kCols = 1024;
  std::vector<std::int32_t> global(kRows * kCols);
  for (std::size_t i = 0; i < global.size(); ++i) global[i] = static_cast<std::int32_t>((i * 7) % 1000);
  const auto task_size = settings::task_size();
  settings::set_task_size(4096);
  try {
    run_thread_ranks(3, [&](Communicator& comm) {
      const auto r = static_cast<std::uint64_t>(comm.rank());
      const std::uint64_t lo = r == 0 ? 0 : (r == 1 ? 68 : 136);
      const std::uint64_t hi = r == 0 ? 68 : (r == 1 ? 136 : kRows);
      const ArrayView part{global.data() + lo * kCols, DType(DTypeKind::Int32), {hi - lo, kCols}, {4 * kCols, 4}};
      const std::vector<Tile> tiles{{Box{{lo, 0}, {hi - lo, kCols}}, part}};
      write_tiles(comm, {kRows, kCols}, tiles, path("rounds.h5"), "/r",
                  {.layout = Layout::Chunked,
                   .chunk = {1, kCols},
                   .compression = {.compressor = Compressor::Gzip, .shuffle = true}});
    });
  } catch (...) {
    settings::set_task_size(task_size);
    throw;
  }
  settings::set_task_size(task_size);
  const auto whole = from_file(path("rounds.h5"), "/r");
  EXPECT_TRUE(testing_support::equal_bytes(whole, global.data(), global.size() * 4));
  const auto info = describe(path("rounds.h5"), "/r");
  EXPECT_EQ(info.chunk, (Shape{1, kCols}));
  EXPECT_EQ(info.filters, (std::vector<std::string>{"shuffle", "deflate"}));
  EXPECT_LT(info.stored_bytes, global.size() * 4 / 2);  // compressed, not zeros or raw bytes
}

TEST_F(CompressedSpmdErrors, CompressedChunksAcrossTilesAreRefusedOnEveryRank) {
  std::vector<std::int64_t> global(180, 7);
  try {
    write_compressed_grid(2, global, {3, 4}, path("grid.h5"));  // rows 0:10 and 10:20 in chunks of 3
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("tile [0:10, 0:4]"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path("grid.h5")));
}

using Batched = testing_support::TempDirTest;

TEST_F(Batched, BlocksComeInRowMajorOrderClippedAtTheEdges) {
  std::vector<std::uint16_t> a(7 * 5);
  std::iota(a.begin(), a.end(), 0);
  to_file(view(a.data(), {7, 5}), path("b.h5"), "/a", {.ranks = 3}).wait();
  auto reader = from_file_batched(path("b.h5"), "/a", {3, 2});
  EXPECT_EQ(reader.block_count(), 9U);
  std::vector<Shape> offsets;
  std::vector<Shape> shapes;
  for (Block& b : reader) {
    offsets.push_back(b.offset);
    shapes.push_back(b.data.shape());
    const auto got = b.data.as<std::uint16_t>();
    for (std::uint64_t i = 0; i < b.data.shape()[0]; ++i)
      for (std::uint64_t j = 0; j < b.data.shape()[1]; ++j)
        ASSERT_EQ(got[i * b.data.shape()[1] + j], a[(b.offset[0] + i) * 5 + b.offset[1] + j]);
  }
  EXPECT_EQ(offsets, (std::vector<Shape>{{0, 0}, {0, 2}, {0, 4}, {3, 0}, {3, 2}, {3, 4}, {6, 0}, {6, 2}, {6, 4}}));
  EXPECT_EQ(shapes[2], (Shape{3, 1}));
  EXPECT_EQ(shapes[8], (Shape{1, 1}));
}

TEST_F(Batched, ProgressCountsTheBlocksReadAndCancelsTheBlockBeingRead) {
  std::vector<std::int64_t> a(1000);
  std::iota(a.begin(), a.end(), 0);
  to_file(view(a.data(), {1000}), path("b.h5"), "/a").wait();
  std::atomic<std::uint64_t> last{0};
  std::atomic<std::uint64_t> total{0};
  {
    auto reader = from_file_batched(path("b.h5"), "/a", {300}, {.progress = [&](std::uint64_t d, std::uint64_t t) {
                                      last = d;
                                      total = t;
                                      return true;
                                    }});
    std::uint64_t blocks = 0;
    for (Block& b : reader) blocks += b.data.size() > 0 ? 1 : 0;
    EXPECT_EQ(blocks, 4U);
  }
  EXPECT_EQ(total.load(), 8000U);
  EXPECT_EQ(last.load(), 8000U);
  // A false answer: the block being read throws Cancelled from next().
  auto reader =
      from_file_batched(path("b.h5"), "/a", {300}, {.progress = [](std::uint64_t, std::uint64_t) { return false; }});
  EXPECT_THROW((void)reader.next(), Cancelled);
}

TEST_F(Batched, StoppingEarlyAndBadChunkSizes) {
  std::vector<double> a(1000, 2.0);
  to_file(view(a.data(), {1000}), path("b.h5"), "/a").wait();
  {
    auto reader = from_file_batched(path("b.h5"), "/a", {10});
    auto first = reader.next();
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->data.size(), 10U);
  }  // destroyed with blocks still to come: must not hang
  EXPECT_THROW((void)from_file_batched(path("b.h5"), "/a", {0}), InvalidArgument);
  EXPECT_THROW((void)from_file_batched(path("b.h5"), "/a", {1, 1}), InvalidArgument);
  double scalar = 4.5;
  to_file(view(&scalar, {}), path("s.h5"), "/s").wait();
  auto reader = from_file_batched(path("s.h5"), "/s", {});
  auto block = reader.next();
  ASSERT_TRUE(block.has_value());
  EXPECT_EQ(block->data.shape(), Shape{});
  EXPECT_EQ(block->data.as<double>()[0], 4.5);
  EXPECT_FALSE(reader.next().has_value());
}

}  // namespace
}  // namespace h5tile
