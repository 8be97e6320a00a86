// DatasetReader: a dataset kept open between reads, opened again where its file was replaced.
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "temp_dir.hpp"

namespace h5tile {
namespace {

using testing_support::equal_bytes;
using testing_support::random_bytes;

class DatasetReaderTest : public testing_support::TempDirTest {
 protected:
  std::vector<std::byte> write(const std::string& name, unsigned seed, Layout layout) {
    auto bytes = random_bytes(DType::from_name("int32"), element_count(shape_), seed);
    to_file(ArrayView{bytes.data(), DType::from_name("int32"), shape_, {}}, path(name), "/x", {.layout = layout})
        .wait();
    return bytes;
  }
  // Left alone for longer than a file must be unchanged to be kept (2 s).
  static void wait_until_quiet() { std::this_thread::sleep_for(std::chrono::milliseconds(2100)); }
  std::vector<std::byte> write_quiet(const std::string& name, unsigned seed, Layout layout) {
    auto bytes = write(name, seed, layout);
    wait_until_quiet();
    return bytes;
  }
  const Shape shape_{40, 10};
};

std::vector<std::byte> rows(const std::vector<std::byte>& all, std::size_t first, std::size_t count) {
  const std::size_t row = 10 * 4;
  return {all.begin() + static_cast<std::ptrdiff_t>(first * row),
          all.begin() + static_cast<std::ptrdiff_t>((first + count) * row)};
}

TEST_F(DatasetReaderTest, KeepsTheDatasetOpenAndReadsAsReadBox) {
  const std::vector<Layout> layouts{Layout::Contiguous, Layout::Chunked, Layout::Virtual};
  std::vector<std::vector<std::byte>> written;
  for (const auto layout : layouts) written.push_back(write(std::string(layout_name(layout)) + ".h5", 3, layout));
  wait_until_quiet();
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const auto name = std::string(layout_name(layouts[i])) + ".h5";
    const auto& bytes = written[i];
    DatasetReader reader(path(name), "/x");
    EXPECT_FALSE(reader.is_open());
    const Box box{{7, 0}, {3, 10}};
    const auto part = reader.read_box(box);
    EXPECT_TRUE(reader.is_open()) << name;
    const auto expected = rows(bytes, 7, 3);
    EXPECT_TRUE(equal_bytes(part, expected.data(), expected.size())) << name;
    EXPECT_TRUE(equal_bytes(read_box(path(name), "/x", box), expected.data(), expected.size()));
    std::vector<std::byte> out(expected.size());
    reader.read_into(ArrayView{out.data(), DType::from_name("int32"), {3, 10}, {}}, {7, 0});
    EXPECT_EQ(out, expected);
    EXPECT_THROW((void)reader.read_box(Box{{39, 0}, {2, 10}}), InvalidArgument);
    reader.close();
    EXPECT_FALSE(reader.is_open());
    EXPECT_EQ(open_hdf5_objects(), 0);
  }
}

TEST_F(DatasetReaderTest, AFileRenamedOverIsOpenedAgain) {
  const auto bytes = write_quiet("a.h5", 5, Layout::Chunked);
  DatasetReader reader(path("a.h5"), "/x");
  const auto first = reader.read_box(Box{{0, 0}, {40, 10}});
  EXPECT_TRUE(equal_bytes(first, bytes.data(), bytes.size()));
  EXPECT_TRUE(reader.is_open());
  const auto newer = random_bytes(DType::from_name("int32"), element_count(shape_), 6);
  to_file(ArrayView{newer.data(), DType::from_name("int32"), shape_, {}}, path("b.h5"), "/x",
          {.layout = Layout::Chunked})
      .wait();
  std::filesystem::rename(path("b.h5"), path("a.h5"));
  const auto second = reader.read_box(Box{{0, 0}, {40, 10}});
  EXPECT_TRUE(equal_bytes(second, newer.data(), newer.size()));
  EXPECT_FALSE(reader.is_open()) << "a file changed less than 2 s ago is not kept";
}

// A reader stands for the dataset it first opened (its shape and type are what callers planned
// their boxes and buffers by): a file renamed over with one of another shape or type fails every
// read, naming both, whether the reader kept the file open or opened it for each read.
TEST_F(DatasetReaderTest, ADatasetOfAnotherShapeOrTypeAfterARenameFailsItsReads) {
  for (const bool kept : {true, false}) {
    const auto bytes = kept ? write_quiet("s.h5", 8, Layout::Chunked) : write("s.h5", 8, Layout::Chunked);
    DatasetReader reader(path("s.h5"), "/x");
    const Box box{{0, 0}, {4, 10}};
    EXPECT_TRUE(equal_bytes(reader.read_box(box), bytes.data(), 4 * 10 * 4));
    EXPECT_EQ(reader.is_open(), kept);
    DatasetReader described(path("s.h5"), "/x");  // told the shape and type, not read before the rename
    described.expect(shape_, DType::from_name("int32"));
    const Shape longer{80, 10};
    const auto other = random_bytes(DType::from_name("int32"), element_count(longer), 9);
    to_file(ArrayView{other.data(), DType::from_name("int32"), longer, {}}, path("o.h5"), "/x",
            {.layout = Layout::Chunked})
        .wait();
    std::filesystem::rename(path("o.h5"), path("s.h5"));
    std::vector<std::byte> out(4 * 10 * 4);
    for (int i = 0; i < 2; ++i) {  // and again: the change is not forgotten
      try {
        (void)reader.read_box(box);
        ADD_FAILURE() << "read_box read a dataset of another shape";
      } catch (const RuntimeError& e) {
        EXPECT_NE(
            std::string(e.what()).find("changed since it was first opened by this reader: it was [40, 10] int32, it "
                                       "is now [80, 10] int32"),
            std::string::npos)
            << e.what();
      }
      EXPECT_THROW(reader.read_into(ArrayView{out.data(), DType::from_name("int32"), {4, 10}, {}}, {0, 0}),
                   RuntimeError);
      try {
        (void)described.read_box(box);
        ADD_FAILURE() << "the first read of a reader told the old shape read the new one";
      } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find("changed since it was described: it was [40, 10] int32"),
                  std::string::npos)
            << e.what();
      }
    }
    const auto same = DatasetReader(path("s.h5"), "/x").read_box(box);  // a new reader: as it is now
    EXPECT_TRUE(equal_bytes(same, other.data(), 4 * 10 * 4));
  }
}

TEST_F(DatasetReaderTest, ADatasetOfAnotherTypeFailsAndAMatchingExpectationKeepsReading) {
  const auto bytes = write_quiet("t.h5", 10, Layout::Contiguous);
  DatasetReader reader(path("t.h5"), "/x");
  reader.expect(shape_, DType::from_name("int32"));
  const Box box{{2, 0}, {3, 10}};
  const auto expected = rows(bytes, 2, 3);
  EXPECT_TRUE(equal_bytes(reader.read_box(box), expected.data(), expected.size()));
  EXPECT_TRUE(reader.is_open()) << "an expectation that holds keeps the file open as before";
  const auto floats = random_bytes(DType::from_name("float32"), element_count(shape_), 11);
  to_file(ArrayView{floats.data(), DType::from_name("float32"), shape_, {}}, path("u.h5"), "/x").wait();
  std::filesystem::rename(path("u.h5"), path("t.h5"));
  std::vector<std::byte> out(expected.size());
  try {
    reader.read_into(ArrayView{out.data(), DType::from_name("int32"), {3, 10}, {}}, {2, 0});
    ADD_FAILURE() << "read_into read float32 elements as a dataset of int32";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("changed since it was described: it was [40, 10] int32, it is now [40, 10] "
                                         "float32"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(reader.is_open());
  EXPECT_EQ(reader.opens(), 1U);
}

TEST_F(DatasetReaderTest, ReadsFromManyThreadsAtOnce) {
  const auto bytes = write_quiet("t.h5", 7, Layout::Virtual);
  const DatasetReader reader(path("t.h5"), "/x");
  std::vector<std::thread> threads;
  std::vector<int> good(8, 0);
  for (unsigned t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < 50; ++i) {
        const std::size_t row = (t * 50 + i) % 38;
        const auto expected = rows(bytes, row, 2);
        good[t] += equal_bytes(reader.read_box(Box{{row, 0}, {2, 10}}), expected.data(), expected.size()) ? 1 : 0;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(good, std::vector<int>(8, 50));
  EXPECT_TRUE(reader.is_open());
}

TEST_F(DatasetReaderTest, RowsOfACompressedDatasetAreReadThroughDecodedChunks) {
  const auto dtype = DType::from_name("int32");
  const auto bytes = random_bytes(dtype, element_count(shape_), 11);
  const WriteOptions gzip{.layout = Layout::Chunked, .chunk = {8, 10}, .compression = {Compressor::Gzip, 1, true}};
  to_file(ArrayView{bytes.data(), dtype, shape_, {}}, path("z.h5"), "/x", gzip).wait();
  wait_until_quiet();
  DatasetReader reader(path("z.h5"), "/x");
  for (std::size_t row = 0; row < 40; ++row) {
    const auto expected = rows(bytes, row, 1);
    EXPECT_TRUE(equal_bytes(reader.read_box(Box{{row, 0}, {1, 10}}), expected.data(), expected.size())) << row;
  }
  EXPECT_EQ(reader.cached_chunks(), 5U);
  // A whole chunk is read where it goes, and across chunks as ever.
  const auto expected = rows(bytes, 3, 30);
  EXPECT_TRUE(equal_bytes(reader.read_box(Box{{3, 0}, {30, 10}}), expected.data(), expected.size()));
  // h5tile's write of the path drops the chunks with the open dataset; the next row is the new one.
  const auto newer = random_bytes(dtype, element_count(shape_), 12);
  to_file(ArrayView{newer.data(), dtype, shape_, {}}, path("z.h5"), "/x", gzip).wait();
  EXPECT_EQ(reader.cached_chunks(), 0U);
  const auto new_row = rows(newer, 2, 1);
  EXPECT_TRUE(equal_bytes(reader.read_box(Box{{2, 0}, {1, 10}}), new_row.data(), new_row.size()));
  // Kept again once quiet: its chunks are decoded from the new file, none kept from the old one.
  wait_until_quiet();
  for (const std::size_t row : {3, 4}) {
    const auto expected_row = rows(newer, row, 1);
    EXPECT_TRUE(equal_bytes(reader.read_box(Box{{row, 0}, {1, 10}}), expected_row.data(), expected_row.size()));
  }
  EXPECT_TRUE(reader.is_open());
  EXPECT_EQ(reader.cached_chunks(), 1U);
  reader.close();
  EXPECT_EQ(reader.cached_chunks(), 0U);
}

TEST_F(DatasetReaderTest, ProgressOfRowsReadThroughDecodedChunksCountsEachRowOnce) {
  // Each row's read reports its own bytes as the total, never more done than that, and ends at
  // it: the row whose read decodes the chunk (counting the chunk's bytes) and the rows copied
  // from it alike. A callback that says stop cancels a read of either kind, and keeps nothing.
  const auto dtype = DType::from_name("int32");
  const auto bytes = random_bytes(dtype, element_count(shape_), 13);
  const WriteOptions gzip{.layout = Layout::Chunked, .chunk = {8, 10}, .compression = {Compressor::Gzip, 1, true}};
  to_file(ArrayView{bytes.data(), dtype, shape_, {}}, path("p.h5"), "/x", gzip).wait();
  wait_until_quiet();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  bool cancel = false;
  DatasetReader reader(path("p.h5"), "/x", {.progress = [&](std::uint64_t done, std::uint64_t total) {
                         calls.emplace_back(done, total);
                         return !cancel;
                       }});
  for (const std::size_t row : {9, 10, 11}) {  // the first decodes chunk 1, the others copy from it
    calls.clear();
    const auto expected = rows(bytes, row, 1);
    EXPECT_TRUE(equal_bytes(reader.read_box(Box{{row, 0}, {1, 10}}), expected.data(), expected.size())) << row;
    ASSERT_FALSE(calls.empty()) << row;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].second, 40U) << row;
      EXPECT_LE(calls[i].first, 40U) << row;
      if (i > 0) {
        EXPECT_GE(calls[i].first, calls[i - 1].first) << row;
      }
    }
    EXPECT_EQ(calls.back().first, 40U) << row;
  }
  EXPECT_EQ(reader.cached_chunks(), 1U);
  cancel = true;
  EXPECT_THROW((void)reader.read_box(Box{{12, 0}, {1, 10}}), Cancelled) << "from the kept chunk";
  EXPECT_THROW((void)reader.read_box(Box{{20, 0}, {1, 10}}), Cancelled) << "decoding chunk 2";
  EXPECT_EQ(reader.cached_chunks(), 1U) << "a cancelled read keeps no chunk";
  cancel = false;
  const auto expected = rows(bytes, 21, 1);
  EXPECT_TRUE(equal_bytes(reader.read_box(Box{{21, 0}, {1, 10}}), expected.data(), expected.size()));
  EXPECT_EQ(reader.cached_chunks(), 2U);
  // Boxes of no elements, inside a kept chunk and not: empty, nothing decoded or kept.
  EXPECT_EQ(reader.read_box(Box{{22, 3}, {0, 4}}).nbytes(), 0U);
  EXPECT_EQ(reader.read_box(Box{{30, 0}, {3, 0}}).nbytes(), 0U);
  reader.read_into(ArrayView{nullptr, dtype, {0, 10}, {}}, {35, 0});
  EXPECT_EQ(reader.cached_chunks(), 2U);
}

TEST_F(DatasetReaderTest, RowsReadFromDecodedChunksWhileThePathIsWrittenAndClosedAreNeverOlder) {
  // Four threads read rows of a kept gzip dataset (through its decoded chunks) while this thread
  // writes the path anew, closes the reader and writes again: every row is one version's, and a
  // read begun after a write returned gives that version or a later one.
  const auto dtype = DType::from_name("int32");
  const WriteOptions gzip{.layout = Layout::Chunked, .chunk = {8, 10}, .compression = {Compressor::Gzip, 1, true}};
  const auto write_version = [&](std::int32_t v, Mode mode) {
    const std::vector<std::int32_t> all(element_count(shape_), v);
    auto options = gzip;
    options.mode = mode;
    to_file(ArrayView{all.data(), dtype, shape_, {}}, path("v.h5"), "/x", options).wait();
  };
  write_version(1, Mode::Overwrite);
  wait_until_quiet();
  DatasetReader reader(path("v.h5"), "/x");
  (void)reader.read_box(Box{{0, 0}, {1, 10}});
  ASSERT_EQ(reader.cached_chunks(), 1U);
  std::atomic<std::int32_t> written{1};
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t n = 0; !stop; ++n) {
        const auto at_least = written.load();
        const auto row = reader.read_box(Box{{(n * 7 + t) % 40, 0}, {1, 10}});
        std::vector<std::int32_t> values(10);
        std::memcpy(values.data(), row.data(), 40);
        for (const auto v : values) {
          if (v != values[0] || v < at_least) ++wrong;
        }
        ++reads;
      }
    });
  }
  const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(200)); };
  pause();
  write_version(2, Mode::Overwrite);
  written = 2;
  wait_until_quiet();  // kept again: the threads fill chunks of the new file
  reader.close();      // as a File's close: reads in progress finish first
  pause();
  write_version(3, Mode::Append);  // mode a: the file's copy with the dataset replaced
  written = 3;
  pause();
  stop = true;
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(reads.load(), 40);
}

}  // namespace
}  // namespace h5tile
