// How a read of a chunked dataset is cut into tasks (OpenDataset::plan): every chunk in one task
// only (each task decodes its own chunks), and enough tasks for the threads where a row of chunks
// is larger than a task.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/io.hpp>

#include "api/resolve.hpp"
#include "layout/boxes.hpp"
#include "layout/open_dataset.hpp"

namespace h5tile {
namespace {

namespace fs = std::filesystem;

class ReadPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A 64 x 64 float32 dataset in gzip chunks of 8 x 8.
  detail::OpenDataset open_chunked() {
    std::vector<float> data(64 * 64, 1.0F);
    to_file(ArrayView{data.data(), DType(DTypeKind::Float32), {64, 64}, {}}, dir_ / "c.h5", "/x",
            {.layout = Layout::Chunked, .chunk = {8, 8}, .compression = {.compressor = Compressor::Gzip}})
        .wait();
    return {detail::Location::local(dir_ / "c.h5"), "/x", detail::open_options(ReadOptions{})};
  }
  const fs::path dir_ = fs::temp_directory_path() / ("h5tile_read_plan_" + std::to_string(::getpid()));
};

// Each chunk of `region` is in exactly one task, and the tasks cover the region once.
void expect_every_chunk_once(const std::vector<detail::ReadTask>& tasks, const Box& region) {
  std::map<Shape, int> chunks;  // by origin
  std::uint64_t covered = 0;
  for (const auto& task : tasks) {
    covered += task.src.count();
    for (const auto& chunk : detail::chunks_touching(task.src, {8, 8})) ++chunks[chunk.offset];
  }
  EXPECT_EQ(covered, region.count());
  EXPECT_EQ(chunks.size(), detail::chunks_touching(region, {8, 8}).size());
  for (const auto& [origin, count] : chunks) EXPECT_EQ(count, 1) << to_string(origin);
}

TEST_F(ReadPlanTest, ARowOfChunksLargerThanATaskIsCutBetweenChunkColumns) {
  const auto opened = open_chunked();
  const Box whole{{0, 0}, {64, 64}};
  // A row of chunks is 8 x 64 x 4 = 2 KiB; tasks of 1 KiB hold 4 chunk columns: 2 tasks a row.
  const auto tasks = opened.plan(whole, 1024);
  EXPECT_EQ(tasks.size(), 16U);
  expect_every_chunk_once(tasks, whole);
  for (const auto& task : tasks) {
    EXPECT_EQ(task.src.extent, (Shape{8, 32}));
    EXPECT_EQ(task.src.offset[1] % 32, 0U);
  }
  // Tasks of whole rows where rows fit: 4 rows of chunks to a task of 8 KiB.
  const auto rows = opened.plan(whole, 8192);
  EXPECT_EQ(rows.size(), 2U);
  expect_every_chunk_once(rows, whole);
}

TEST_F(ReadPlanTest, AnUnalignedRegionStillReadsEachChunkOnce) {
  const auto opened = open_chunked();
  for (const std::uint64_t task_bytes : {64U, 256U, 1000U, 4096U, 1U << 20}) {
    const Box region{{3, 5}, {50, 57}};
    expect_every_chunk_once(opened.plan(region, task_bytes), region);
  }
}

}  // namespace
}  // namespace h5tile
