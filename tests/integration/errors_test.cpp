// Errors: each a distinct type whose message names the file, the dataset and the values.
#include <fstream>
#include <functional>

#include "temp_dir.hpp"

namespace h5tile {
namespace {

using Errors = testing_support::TempDirTest;

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception";
  return {};
}

TEST_F(Errors, ReadingNamesWhatIsWrong) {
  EXPECT_NE(message_of<FileNotFound>([&] { (void)from_file(path("no.h5"), "/d"); }).find("no.h5"), std::string::npos);
  std::vector<int> v(10, 1);
  to_file(view(v.data(), {10}), path("f.h5"), "/g/d").wait();
  auto m = message_of<DatasetNotFound>([&] { (void)from_file(path("f.h5"), "/g/e"); });
  EXPECT_NE(m.find("'/g/e'"), std::string::npos) << m;
  EXPECT_NE(m.find("datasets in '/g': d"), std::string::npos) << m;
  m = message_of<NotADataset>([&] { (void)from_file(path("f.h5"), "/g"); });
  EXPECT_NE(m.find("is a group"), std::string::npos) << m;
  EXPECT_THROW((void)from_file(path("f.h5"), ""), InvalidArgument);
  EXPECT_THROW((void)from_file(path("f.h5"), "/g//d"), InvalidArgument);
  m = message_of<InvalidArgument>([&] { (void)read_box(path("f.h5"), "/g/d", Box{{8}, {5}}); });
  EXPECT_NE(m.find("[8:13]"), std::string::npos) << m;
}

TEST_F(Errors, WritingValidatesBeforeAnyByteIsWritten) {
  std::vector<int> v(10, 1);
  std::filesystem::create_directory(path("dir.h5"));
  auto m = message_of<IsADirectory>([&] { (void)to_file(view(v.data(), {10}), path("dir.h5"), "/d"); });
  EXPECT_NE(m.find("dir.h5"), std::string::npos);
  EXPECT_THROW((void)to_file(view(v.data(), {10}), path("x.h5"), "/"), InvalidArgument);
  EXPECT_THROW((void)to_file(ArrayView{nullptr, DType(DTypeKind::Int32), {10}, {}}, path("x.h5"), "/d"),
               InvalidArgument);
  std::ofstream(path("text.h5")) << "not hdf5";
  EXPECT_THROW((void)to_file(view(v.data(), {10}), path("text.h5"), "/d", {.mode = Mode::Append}), NotHdf5File);
  std::ofstream(path("file")) << "a file, not a folder";
  EXPECT_THROW((void)to_file(view(v.data(), {10}), path("file") / "sub" / "x.h5", "/d"), InvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(path("x.h5")));
}

// Per-rank writes: every rank gets the same error when the tiles are wrong.
struct SpmdCase {
  std::string name;
  std::function<std::vector<Tile>(int rank, const std::vector<std::int32_t>& data)> tiles;
  std::string expected;
};

class SpmdErrors : public testing_support::TempDirTest, public ::testing::WithParamInterface<SpmdCase> {};

TEST_P(SpmdErrors, EveryRankThrowsTheSameError) {
  const std::vector<std::int32_t> data(100, 3);
  std::vector<std::string> messages(3);
  run_thread_ranks(3, [&](Communicator& comm) {
    const auto tiles = GetParam().tiles(comm.rank(), data);
    try {
      write_tiles(comm, {12, 5}, tiles, path("t.h5"), "/d");
      messages[static_cast<std::size_t>(comm.rank())] = "no error";
    } catch (const InvalidArgument& e) {
      messages[static_cast<std::size_t>(comm.rank())] = e.what();
    }
  });
  EXPECT_NE(messages[0].find(GetParam().expected), std::string::npos) << messages[0];
  EXPECT_EQ(messages[0], messages[1]);
  EXPECT_EQ(messages[0], messages[2]);
  EXPECT_FALSE(std::filesystem::exists(path("t.h5")));
  EXPECT_FALSE(std::filesystem::exists(path("t.h5.tiles")));
}

ArrayView rows(const std::vector<std::int32_t>& data, std::uint64_t n) {
  return ArrayView{data.data(), DType(DTypeKind::Int32), {n, 5}, {}};
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SpmdErrors,
    ::testing::Values(SpmdCase{"overlap",
                               [](int r, const auto& d) {
                                 return std::vector<Tile>{{Box{{r * 3ULL, 0}, {6, 5}}, rows(d, 6)}};
                               },
                               "overlap"},
                      SpmdCase{"gap",
                               [](int r, const auto& d) {
                                 return std::vector<Tile>{{Box{{r * 4ULL, 0}, {3, 5}}, rows(d, 3)}};
                               },
                               "cover 45 of the 60 elements"},
                      SpmdCase{"outside",
                               [](int r, const auto& d) {
                                 return std::vector<Tile>{{Box{{r * 4ULL + 2, 0}, {4, 5}}, rows(d, 4)}};
                               },
                               "does not fit the dataset of shape [12, 5]"},
                      SpmdCase{"shape",
                               [](int r, const auto& d) {
                                 return std::vector<Tile>{{Box{{r * 4ULL, 0}, {4, 5}}, rows(d, 3)}};
                               },
                               "has data of shape [3, 5], not [4, 5]"},
                      SpmdCase{"dtype",
                               [](int r, const auto& d) {
                                 auto v = rows(d, 4);
                                 if (r == 2) v.dtype = DType(DTypeKind::Float32);
                                 return std::vector<Tile>{{Box{{r * 4ULL, 0}, {4, 5}}, v}};
                               },
                               "rank 0 writes dtype int32 but rank 2 writes float32"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST_F(Errors, RanksThatDisagreeOnThePathAllFail) {
  const std::vector<std::int32_t> data(20, 3);
  std::vector<std::string> messages(2);
  run_thread_ranks(2, [&](Communicator& comm) {
    const Tile tile{Box{{comm.rank() * 2ULL, 0}, {2, 5}}, rows(data, 2)};
    try {
      write_tiles(comm, {4, 5}, {&tile, 1}, path(comm.rank() == 0 ? "a.h5" : "b.h5"), "/d");
    } catch (const InvalidArgument& e) {
      messages[static_cast<std::size_t>(comm.rank())] = e.what();
    }
  });
  EXPECT_NE(messages[0].find("ranks disagree"), std::string::npos) << messages[0];
  EXPECT_EQ(messages[0], messages[1]);
}

}  // namespace
}  // namespace h5tile
