// What a write may create: nothing outside the folder of its file and the file's `.tiles` folder,
// whatever the dataset name; and paths that are symbolic-link loops, reported as loops (ELOOP),
// never as missing files.
#include <unistd.h>

#include <cerrno>
#include <set>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace h5tile {
namespace {
namespace fs = std::filesystem;

// Names that once led the tile folder out of `<file>.tiles/` (write_tiles, and through it MPI,
// the Python module's write_tile and h5tile.legate, skipped the check that to_file made).
// ('a/../../x' once became '/../../x': a folder at the root of the file system.) The escaped
// folder's name is unique to the process, so that the check at the root sees this test's only.
const std::string kEscaped = "h5tile-escaped-" + std::to_string(::getpid());
const std::vector<std::string> kEscapes = {
    "/a/../../../" + kEscaped,
    "/../" + kEscaped,
    "a/../../" + kEscaped,
    "/a/./b",
    "/a//b",
    "/..",
    "/a/..",
    "/.",
    "",
    std::string("/a\0/../../", 10) + kEscaped,
};

// Every path under `root`, relative to it.
std::set<std::string> tree(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    out.insert(fs::relative(entry.path(), root).string());
  }
  return out;
}

class Confinement : public testing_support::TempDirTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // The written file lies three folders down, so that each escape above would land inside the
  // test's own folder, where the listing sees it (and a long chain of '..' at the root, checked
  // by name).
  [[nodiscard]] fs::path target() const { return path("p/q/r/out.h5"); }
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_directories(target().parent_path());
    before_ = tree(dir_);
  }
  void expect_nothing_created() const {
    EXPECT_EQ(tree(dir_), before_) << "dataset name '" << GetParam() << "'";
    EXPECT_FALSE(fs::exists(fs::path("/") / kEscaped));
  }
  std::set<std::string> before_;
};

TEST_P(Confinement, ToFileRefusesTheName) {
  std::vector<int> v(12, 7);
  EXPECT_THROW((void)to_file(view(v.data(), {12}), target(), GetParam(), {.ranks = 2}), InvalidArgument);
  fence();
  expect_nothing_created();
}

TEST_P(Confinement, WriteTilesRefusesTheNameOnEveryRank) {
  std::vector<int> v(12, 7);
  std::vector<std::string> errors(3);
  run_thread_ranks(3, [&](Communicator& comm) {
    const auto r = static_cast<std::uint64_t>(comm.rank());
    const Tile tile{Box{{4 * r}, {4}}, view(v.data() + 4 * r, {4})};
    try {
      write_tiles(comm, {12}, std::span<const Tile>(&tile, 1), target(), GetParam());
    } catch (const InvalidArgument& e) {
      errors[r] = e.what();
    }
  });
  for (const auto& e : errors) {
    EXPECT_EQ(e, errors[0]);  // every rank throws, the same error
    EXPECT_NE(e.find("dataset name"), std::string::npos) << e;
    EXPECT_NE(e.find("out.h5"), std::string::npos) << e;  // names the file
  }
  expect_nothing_created();
}

TEST_P(Confinement, ConsolidateRefusesTheName) {
  std::vector<int> v(12, 7);
  to_file(view(v.data(), {12}), path("in.h5"), "/d").wait();
  before_ = tree(dir_);
  EXPECT_THROW(consolidate(path("in.h5"), GetParam(), target()), InvalidArgument);
  expect_nothing_created();
}

INSTANTIATE_TEST_SUITE_P(Names, Confinement, ::testing::ValuesIn(kEscapes),
                         [](const auto& param) { return "name" + std::to_string(param.index); });

TEST(CheckDatasetName, NormalisesOrRefuses) {
  EXPECT_EQ(check_dataset_name("a/b"), "/a/b");
  EXPECT_EQ(check_dataset_name("/a%b/ c"), "/a%b/ c");
  for (const auto& bad : kEscapes) {
    EXPECT_THROW((void)check_dataset_name(bad), InvalidArgument) << bad;
  }
}

// A symbolic-link loop: a -> b -> a.
class LinkLoop : public testing_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_symlink("b.h5", path("a.h5"));
    fs::create_symlink("a.h5", path("b.h5"));
  }
  template <class F>
  static void expect_loop(F&& f, const std::string& name) {
    try {
      f();
      ADD_FAILURE() << "no exception";
    } catch (const IoError& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.error_number(), ELOOP) << m;
      EXPECT_NE(m.find("symbolic-link loop"), std::string::npos) << m;
      EXPECT_NE(m.find(name), std::string::npos) << m;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "wrong exception: " << e.what();
    }
  }
};

TEST_F(LinkLoop, ReadsSayItIsALoop) {
  expect_loop([&] { (void)from_file(path("a.h5"), "/d"); }, "a.h5");
  expect_loop([&] { (void)describe(path("a.h5"), "/d"); }, "a.h5");
  expect_loop([&] { (void)list_datasets(path("a.h5")); }, "a.h5");
  expect_loop([&] { (void)from_file(path("a.h5/x.h5"), "/d"); }, "x.h5");  // a loop on the way
}

TEST_F(LinkLoop, WritesSayItIsALoopAndLeaveTheLinks) {
  std::vector<int> v(12, 7);
  expect_loop([&] { (void)to_file(view(v.data(), {12}), path("a.h5"), "/d"); }, "a.h5");
  expect_loop([&] { (void)to_file(view(v.data(), {12}), path("a.h5"), "/d", {.mode = Mode::Append}); }, "a.h5");
  to_file(view(v.data(), {12}), path("in.h5"), "/d").wait();
  expect_loop([&] { consolidate(path("in.h5"), "/d", path("b.h5")); }, "b.h5");
  fence();
  EXPECT_TRUE(fs::is_symlink(path("a.h5")));
  EXPECT_TRUE(fs::is_symlink(path("b.h5")));
  EXPECT_FALSE(fs::exists(path("a.h5.tiles")));
}

}  // namespace
}  // namespace h5tile
