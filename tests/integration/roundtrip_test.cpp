// Whole-array round trips: every dtype, layout and rank count; strided input; async order.
#include <chrono>
#include <complex>
#include <fstream>
#include <set>
#include <thread>

#include "temp_dir.hpp"

namespace h5tile {
namespace {
using testing_support::equal_bytes;
using testing_support::random_bytes;

struct RoundTripCase {
  std::string dtype;
  Layout layout;
  unsigned ranks;
};

class RoundTrip : public testing_support::TempDirTest, public ::testing::WithParamInterface<RoundTripCase> {};

TEST_P(RoundTrip, ReadsBackTheSameBytes) {
  const auto& c = GetParam();
  const DType dtype = DType::from_name(c.dtype);
  const Shape shape{29, 13, 3};
  const auto bytes = random_bytes(dtype, element_count(shape), c.ranks);
  const ArrayView array{bytes.data(), dtype, shape, {}};
  to_file(array, path("out.h5"), "/x", {.layout = c.layout, .ranks = c.ranks}).wait();
  const auto back = from_file(path("out.h5"), "/x");
  EXPECT_EQ(back.dtype(), dtype);
  EXPECT_EQ(back.shape(), shape);
  EXPECT_TRUE(equal_bytes(back, bytes.data(), bytes.size()));
  const auto info = describe(path("out.h5"), "/x");
  EXPECT_EQ(info.layout, layout_name(c.layout));
  if (c.layout == Layout::Virtual) {
    EXPECT_EQ(info.virtual_sources, std::min<std::size_t>(c.ranks, shape[0]));
  }
}

std::vector<RoundTripCase> round_trip_cases() {
  std::vector<RoundTripCase> out;
  for (const char* dtype : {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                            "float32", "float64", "complex64", "complex128", "V5"}) {
    for (const auto layout : {Layout::Virtual, Layout::Contiguous, Layout::Chunked}) {
      for (const unsigned ranks : {1U, 4U, 40U}) {
        out.push_back({dtype, layout, ranks});
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, RoundTrip, ::testing::ValuesIn(round_trip_cases()), [](const auto& param_info) {
  const auto& p = param_info.param;
  return p.dtype + "_" + std::string(layout_name(p.layout)) + "_" + std::to_string(p.ranks);
});

// The typed convenience view<T>() deduces the dtype from the C++ element type.
template <class T>
class TypedRoundTrip : public testing_support::TempDirTest {};
using ElementTypes = ::testing::Types<std::int8_t, std::uint16_t, std::int32_t, std::uint64_t, float, double,
                                      std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(TypedRoundTrip, ElementTypes);

TYPED_TEST(TypedRoundTrip, ViewDeducesTheDType) {
  std::vector<TypeParam> data(6 * 7);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<TypeParam>(static_cast<unsigned char>(i * 3 + 1));
  to_file(view(data.data(), {6, 7}), this->path("t.h5"), "d", {.ranks = 3}).wait();
  const auto back = from_file(this->path("t.h5"), "/d");
  ASSERT_EQ(back.dtype(), dtype_of<TypeParam>());
  const auto got = back.template as<TypeParam>();
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin(), data.end()));
}

class Strided : public testing_support::TempDirTest, public ::testing::WithParamInterface<Layout> {};

TEST_P(Strided, NonContiguousInputIsWrittenAsItsLogicalArray) {
  // A 6x5 int32 array seen three ways: transposed (column-major), reversed rows, and a
  // slice of a wider array.
  std::vector<std::int32_t> wide(6 * 8);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<std::int32_t>(i);
  const auto logical = [&](std::size_t r, std::size_t c) { return wide[r * 8 + c]; };

  const ArrayView slice{wide.data(), DType(DTypeKind::Int32), {6, 5}, {32, 4}};
  std::vector<std::int32_t> column_major(30);
  for (std::size_t r = 0; r < 6; ++r)
    for (std::size_t c = 0; c < 5; ++c) column_major[c * 6 + r] = logical(r, c);
  const ArrayView transposed{column_major.data(), DType(DTypeKind::Int32), {6, 5}, {4, 24}};
  std::vector<std::int32_t> upside_down(30);
  for (std::size_t r = 0; r < 6; ++r)
    for (std::size_t c = 0; c < 5; ++c) upside_down[(5 - r) * 5 + c] = logical(r, c);
  const ArrayView reversed{upside_down.data() + 25, DType(DTypeKind::Int32), {6, 5}, {-20, 4}};

  for (const auto& [name, v] : {std::pair{"slice", slice}, {"transposed", transposed}, {"reversed", reversed}}) {
    to_file(v, path("s.h5"), name, {.layout = GetParam(), .mode = Mode::Append, .ranks = 4}).wait();
    const auto back = from_file(path("s.h5"), name);
    const auto got = back.as<std::int32_t>();
    for (std::size_t r = 0; r < 6; ++r)
      for (std::size_t c = 0; c < 5; ++c) ASSERT_EQ(got[r * 5 + c], logical(r, c)) << name << " " << r << "," << c;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, Strided, ::testing::Values(Layout::Virtual, Layout::Contiguous, Layout::Chunked));

// A virtual write hashes each tile part by part while its parts are written on several threads
// (and, with sync, starts their writeback); what it records must be the checksum of the tile's
// bytes as `verify` reads them back from the finished file.
struct PartsCase {
  unsigned ranks;
  bool sync;
};
class ChecksumWhileWriting : public testing_support::TempDirTest, public ::testing::WithParamInterface<PartsCase> {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    task_size_ = settings::task_size();
    threads_ = settings::threads();
    settings::set_task_size(4096);  // many parts per tile
    settings::set_threads(4);
  }
  void TearDown() override {
    settings::set_task_size(task_size_);
    settings::set_threads(threads_);
    TempDirTest::TearDown();
  }
  std::size_t task_size_ = 0;
  unsigned threads_ = 0;
};

TEST_P(ChecksumWhileWriting, TheRecordedChecksumIsThatOfTheFilesBytes) {
  const auto [ranks, sync] = GetParam();
  // Rows of 3 KiB (parts of whole rows) and of 12 KiB (parts of one row each), packed and strided.
  int written = 0;
  for (const Shape& shape : {Shape{64, 24, 32}, Shape{40, 3000}}) {
    ++written;
    const auto count = element_count(shape);
    const auto bytes = testing_support::random_bytes(DType(DTypeKind::Float32), 2 * count, 3);
    const ArrayView packed{
        .data = bytes.data(), .dtype = DType(DTypeKind::Float32), .shape = shape, .byte_strides = {}};
    auto strides = packed.strides();
    strides.front() *= 2;  // every other block of rows
    const ArrayView strided{bytes.data(), DType(DTypeKind::Float32), shape, strides};
    for (const auto& [name, v] : {std::pair{"packed", packed}, {"strided", strided}}) {
      const auto file = path(std::string(name) + std::to_string(written) + ".h5");
      to_file(v, file, "/data", {.layout = Layout::Virtual, .ranks = ranks, .sync = sync}).wait();
      EXPECT_EQ(verify(file, "/data", true), std::vector<std::string>{}) << name << " " << to_string(shape);
    }
    EXPECT_TRUE(
        equal_bytes(from_file(path("packed" + std::to_string(written) + ".h5"), "/data"), bytes.data(), count * 4));
  }
  // The check is real: a tile whose bytes change afterwards is reported (the middle of a tile file
  // is data: it holds a few KiB of metadata besides).
  std::filesystem::path tile;
  for (const auto& e : std::filesystem::recursive_directory_iterator(path("packed1.h5.tiles"))) {
    if (e.path().filename() == "tile-00000.h5") tile = e.path();
  }
  ASSERT_FALSE(tile.empty());
  std::string contents;
  {
    std::ifstream in(tile, std::ios::binary);
    contents.assign(std::istreambuf_iterator<char>(in), {});
  }
  contents[contents.size() / 2] = static_cast<char>(contents[contents.size() / 2] ^ 1);
  std::ofstream(tile, std::ios::binary | std::ios::trunc) << contents;
  EXPECT_FALSE(verify(path("packed1.h5"), "/data", true).empty());
}

INSTANTIATE_TEST_SUITE_P(RanksAndSync, ChecksumWhileWriting,
                         ::testing::Values(PartsCase{1, true}, PartsCase{1, false}, PartsCase{3, true},
                                           PartsCase{3, false}),
                         [](const auto& param_info) {
                           return std::to_string(param_info.param.ranks) + "_ranks" +
                                  (param_info.param.sync ? "_sync" : "_no_sync");
                         });

using ReadInto = testing_support::TempDirTest;

TEST_F(ReadInto, FillsTheCallersBufferWholeOrABox) {
  const DType dtype(DTypeKind::UInt16);
  const Shape shape{50, 21};
  const auto bytes = random_bytes(dtype, element_count(shape), 8);
  for (const auto layout : {Layout::Virtual, Layout::Contiguous, Layout::Chunked}) {
    to_file(ArrayView{bytes.data(), dtype, shape, {}}, path("r.h5"), "/r", {.layout = layout, .ranks = 3}).wait();
    std::vector<std::byte> out(bytes.size());
    read_into(path("r.h5"), "/r", ArrayView{out.data(), dtype, shape, {}});
    EXPECT_EQ(out, bytes) << layout_name(layout);
    // A box [10:30, 5:12] into a buffer of its shape.
    std::vector<std::uint16_t> box(20 * 7);
    read_into(path("r.h5"), "/r", view(box.data(), {20, 7}), {10, 5});
    const auto* all = reinterpret_cast<const std::uint16_t*>(bytes.data());
    for (std::size_t r = 0; r < 20; ++r)
      for (std::size_t c = 0; c < 7; ++c) ASSERT_EQ(box[r * 7 + c], all[(r + 10) * 21 + c + 5]);
  }
  std::vector<std::uint32_t> wrong(50 * 21);
  EXPECT_THROW(read_into(path("r.h5"), "/r", view(wrong.data(), {50, 21})), InvalidArgument);  // dtype
  std::vector<std::uint16_t> big(51 * 21);
  EXPECT_THROW(read_into(path("r.h5"), "/r", view(big.data(), {51, 21})), InvalidArgument);  // does not fit
  const ArrayView strided{big.data(), dtype, {25, 21}, {84, 2}};
  EXPECT_THROW(read_into(path("r.h5"), "/r", strided), InvalidArgument);  // not contiguous
}

using Chunked = testing_support::TempDirTest;

// Chunks that tiles share (write_tiles with a chunk that does not match the tiles), chunks that
// reach past the dataset's edge, and the default chunk of to_file (whole tiles, aligned).
TEST_F(Chunked, TilesSharingChunksAndEdgeChunksReadBackTheSameBytes) {
  const DType dtype(DTypeKind::Int32);
  const Shape shape{37, 23};
  const auto bytes = random_bytes(dtype, element_count(shape), 5);
  // 5 uneven row bands written by 5 thread ranks; chunks of 8x10 cross every band boundary.
  const std::vector<std::uint64_t> starts{0, 3, 11, 12, 30, 37};
  run_thread_ranks(5, [&](Communicator& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    const Box box{{starts[r], 0}, {starts[r + 1] - starts[r], shape[1]}};
    const ArrayView tile{bytes.data() + starts[r] * shape[1] * 4, dtype, box.extent, {}};
    const Tile t{box, tile};
    write_tiles(comm, shape, {&t, 1}, path("c.h5"), "/c", {.layout = Layout::Chunked, .chunk = {8, 10}});
  });
  const auto info = describe(path("c.h5"), "/c");
  EXPECT_EQ(info.layout, "chunked");
  EXPECT_EQ(info.chunk, (Shape{8, 10}));
  EXPECT_TRUE(equal_bytes(from_file(path("c.h5"), "/c"), bytes.data(), bytes.size()));
  settings::set_raw_io(false);  // the same file through HDF5's own chunk reads
  EXPECT_TRUE(equal_bytes(from_file(path("c.h5"), "/c"), bytes.data(), bytes.size()));
  settings::set_raw_io(true);

  to_file(ArrayView{bytes.data(), dtype, shape, {}}, path("d.h5"), "/d", {.layout = Layout::Chunked, .ranks = 4})
      .wait();
  EXPECT_EQ(describe(path("d.h5"), "/d").chunk, (Shape{10, 23}));  // ceil(37 / 4) rows, whole rows
  EXPECT_FALSE(std::filesystem::exists(path("d.h5.tiles")));
  EXPECT_TRUE(equal_bytes(from_file(path("d.h5"), "/d"), bytes.data(), bytes.size()));
}

TEST_F(Chunked, BadChunkShapesAreClearErrors) {
  std::vector<float> data(12 * 5);
  const auto v = view(data.data(), {12, 5});
  const auto fails = [&](Shape chunk, const std::string& needle) {
    try {
      to_file(v, path("bad.h5"), "/b", {.layout = Layout::Chunked, .chunk = std::move(chunk)}).wait();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails({4}, "has 1 axes but the dataset has 2");
  fails({0, 5}, "must be positive");
  fails({4, 6}, "at most the shape");
  EXPECT_FALSE(std::filesystem::exists(path("bad.h5")));
  EXPECT_THROW((void)layout_from_name("tiled"), InvalidArgument);
}

using Async = testing_support::TempDirTest;

TEST_F(Async, ReadsAfterWritesSeeTheDataWithoutAFence) {
  std::vector<std::int64_t> a(100000, 1);
  std::vector<std::int64_t> b(100000, 2);
  auto h1 = to_file(view(a.data(), {a.size()}), path("x.h5"), "/d");
  auto h2 = to_file(view(b.data(), {b.size()}), path("x.h5"), "/d");  // ordered after the first
  const auto back = from_file(path("x.h5"), "/d");
  EXPECT_TRUE(equal_bytes(back, b.data(), b.size() * 8));
  EXPECT_TRUE(h1.done());
  EXPECT_TRUE(h2.done());
  h1.wait();
  h2.wait();
}

TEST_F(Async, FenceWaitsForEveryWriteAndReportsFailures) {
  std::vector<float> a(1000, 1.5F);
  std::vector<WriteHandle> handles;
  for (int i = 0; i < 5; ++i) {
    handles.push_back(to_file(view(a.data(), {a.size()}), path("f" + std::to_string(i) + ".h5"), "/d"));
  }
  fence();
  for (const auto& h : handles) EXPECT_TRUE(h.done());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(from_file(path("f" + std::to_string(i) + ".h5"), "/d").size(), 1000U);

  // A failure that only shows while writing: the sidecar name is taken by a plain file.
  std::ofstream(path("bad.h5.tiles")) << "in the way";
  auto h = to_file(view(a.data(), {a.size()}), path("bad.h5"), "/d", {.layout = Layout::Virtual});
  EXPECT_THROW(fence(), Error);
  EXPECT_THROW(h.wait(), Error);
  EXPECT_FALSE(std::filesystem::exists(path("bad.h5")));
}

TEST_F(Async, WaitForReturnsWhenTheWriteEndsAndNeverThrows) {
  std::vector<std::int32_t> a(1000, 3);
  const auto h = to_file(view(a.data(), {a.size()}), path("w.h5"), "/d");
  while (!h.wait_for(std::chrono::milliseconds(10))) {
  }
  EXPECT_TRUE(h.done());
  h.wait();
  std::ofstream(path("bad.h5.tiles")) << "in the way";
  const auto failed = to_file(view(a.data(), {a.size()}), path("bad.h5"), "/d", {.layout = Layout::Virtual});
  bool ended = false;
  EXPECT_NO_THROW(ended = failed.wait_for(std::chrono::seconds(60)));  // the error is wait()'s to throw
  EXPECT_TRUE(ended);
  EXPECT_THROW(failed.wait(), Error);
  EXPECT_FALSE(WriteHandle().wait_for(std::chrono::milliseconds(1)));  // no write: never "ended"
}

TEST_F(Async, AFailedWriteLeavesThePreviousFileIntact) {
  std::vector<std::int32_t> old_data(500, 7);
  to_file(view(old_data.data(), {500}), path("keep.h5"), "/d", {.layout = Layout::Contiguous}).wait();
  std::ofstream(path("keep.h5.tiles")) << "in the way";
  std::vector<std::int32_t> new_data(500, 9);
  EXPECT_THROW(to_file(view(new_data.data(), {500}), path("keep.h5"), "/d", {.layout = Layout::Virtual}).wait(), Error);
  const auto back = from_file(path("keep.h5"), "/d");
  EXPECT_TRUE(equal_bytes(back, old_data.data(), 2000));
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) names.insert(entry.path().filename());
  // No temporary file left, and no lock file (the commit locks the folder).
  EXPECT_EQ(names, (std::set<std::string>{"keep.h5", "keep.h5.tiles"}));
}

}  // namespace
}  // namespace h5tile
