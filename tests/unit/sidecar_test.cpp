// The sidecar's pure rules on real folders: which generations a commit's clean-up removes
// (stale ones, a dead writer's), which it keeps (the one it commits, a live writer's, the one it
// replaces until the next commit, a dead writer's that the replaced file maps, another dataset's), and the folder check
// that keeps virtual sources inside the folder of their file.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "layout/virtual/sidecar.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {
namespace {
namespace fs = std::filesystem;

class Sidecar : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("h5tile_sidecar_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    target_ = root_ / "out.h5";
  }
  void TearDown() override { fs::remove_all(root_); }

  // A generation of `dataset` with one tile, as a finished write leaves it.
  std::string written(const std::string& dataset, std::string generation = new_generation()) const {
    mark_in_progress(target_, dataset, generation);
    std::ofstream(folder(dataset, generation) / "tile-00000.h5") << "tile";
    clear_in_progress(target_, dataset, generation);
    return generation;
  }
  [[nodiscard]] fs::path folder(const std::string& dataset, const std::string& generation) const {
    return sidecar_dir(target_) / dataset_dir(dataset) / generation;
  }
  [[nodiscard]] bool present(const std::string& dataset, const std::string& generation) const {
    return fs::exists(folder(dataset, generation) / "tile-00000.h5");
  }
  // A generation name of a writer that ran on this host and is gone (pid 0 is never a process's).
  [[nodiscard]] static std::string dead_writer() {
    auto live = new_generation();
    const auto first = live.find('-');
    const auto second = live.find('-', first + 1);
    return live.substr(0, first) + "-" + std::to_string(std::numeric_limits<int>::max() - 1) + live.substr(second);
  }

  fs::path root_;
  fs::path target_;
};

TEST_F(Sidecar, GenerationNamesSayWhetherTheirWriterLives) {
  EXPECT_TRUE(writer_alive(new_generation()));
  EXPECT_FALSE(writer_alive(dead_writer()));
  EXPECT_TRUE(writer_alive("not-a-generation"));  // not ours to judge: assume alive
}

// The tile folder is derived from the dataset name's components, each checked there, so that it
// cannot leave the sidecar whatever name reaches it (the API refuses such names first).
TEST_F(Sidecar, TileFoldersStayInsideTheSidecarWhateverTheName) {
  EXPECT_EQ(dataset_dir("/grp/x"), fs::path("grp/x"));
  EXPECT_EQ(legacy_dataset_dir("/a%b/c"), fs::path("a_b/c"));
  const auto before = std::distance(fs::recursive_directory_iterator(root_), fs::recursive_directory_iterator());
  for (const std::string name : {"/a/../../../escaped", "/../escaped", "/a/./b", "/a//b", "/..", "/a/..", "/", ""}) {
    EXPECT_THROW((void)dataset_dir(name), InvalidArgument) << name;
    EXPECT_THROW((void)legacy_dataset_dir(name), InvalidArgument) << name;
    EXPECT_THROW(mark_in_progress(target_, name, new_generation()), InvalidArgument) << name;
    EXPECT_THROW((void)tile_relative(target_, name, new_generation(), 0), InvalidArgument) << name;
  }
  EXPECT_THROW(make_generation_folder(target_, "/x", ".."), InvalidArgument);
  EXPECT_THROW(make_generation_folder(target_, "/x", "../../escaped"), InvalidArgument);
  EXPECT_EQ(std::distance(fs::recursive_directory_iterator(root_), fs::recursive_directory_iterator()), before);
  EXPECT_FALSE(fs::exists(root_.parent_path() / "escaped"));
}

TEST_F(Sidecar, ACommitKeepsItsGenerationAndTheOneItReplacesUntilTheNext) {
  const auto first = written("/d");
  const auto second = written("/d");
  remove_stale(target_, "/d", second, true, true, "");
  EXPECT_TRUE(present("/d", second));
  EXPECT_TRUE(present("/d", first)) << "readers of the old file still need it";
  const auto third = written("/d");
  remove_stale(target_, "/d", third, true, true, "");
  EXPECT_TRUE(present("/d", third));
  EXPECT_TRUE(present("/d", second));
  EXPECT_FALSE(present("/d", first)) << "superseded twice: stale";
  remove_stale(target_, "/d", third, true, false, "");  // keep_previous off
  EXPECT_FALSE(present("/d", second));
  EXPECT_TRUE(present("/d", third));
}

TEST_F(Sidecar, ALiveWritersGenerationStaysAndADeadWritersGoes) {
  const auto live = new_generation();
  mark_in_progress(target_, "/d", live);
  const auto dead = dead_writer();
  mark_in_progress(target_, "/d", dead);
  const auto kept = written("/d");
  remove_stale(target_, "/d", kept, true, true, "");
  EXPECT_TRUE(fs::exists(folder("/d", live)));
  EXPECT_FALSE(fs::exists(folder("/d", dead)));
}

TEST_F(Sidecar, ADeadWritersGenerationThatTheReplacedFileMapsIsSupersededNotRemoved) {
  // Its writer died after its rename, before it cleared its mark: the replaced file maps it.
  const auto published = dead_writer();
  mark_in_progress(target_, "/d", published);
  std::ofstream(folder("/d", published) / "tile-00000.h5") << "tile";
  const auto unpublished = dead_writer();  // died before its rename
  mark_in_progress(target_, "/d", unpublished);
  std::ofstream(folder("/d", unpublished) / "tile-00000.h5") << "tile";
  const auto kept = written("/d");
  remove_stale(target_, "/d", kept, true, true, "", {published});
  EXPECT_TRUE(present("/d", published)) << "readers of the replaced file still need it";
  EXPECT_TRUE(fs::exists(folder("/d", published) / ".superseded"));
  EXPECT_FALSE(fs::exists(folder("/d", published) / ".in-progress"));
  EXPECT_FALSE(fs::exists(folder("/d", unpublished)));
  const auto next = written("/d");
  remove_stale(target_, "/d", next, true, true, "");
  EXPECT_FALSE(fs::exists(folder("/d", published))) << "superseded twice: stale";
  // keep_previous off: removed at once, as any replaced generation.
  const auto again = dead_writer();
  mark_in_progress(target_, "/d", again);
  remove_stale(target_, "/d", written("/d"), false, false, "", {again});
  EXPECT_FALSE(fs::exists(folder("/d", again)));
}

TEST_F(Sidecar, WhatTheTargetMapsIsReadOnlyWhereADeadWritersMarkRemains) {
  const auto dead = dead_writer();
  mark_in_progress(target_, "/d", dead);
  EXPECT_TRUE(dead_writers_mapped_by(target_, "").empty()) << "no target: nothing maps it";
  std::ofstream(target_) << "not an HDF5 file";
  EXPECT_EQ(dead_writers_mapped_by(target_, ""), std::set<std::string>{dead}) << "unknown: kept one commit longer";
  clear_in_progress(target_, "/d", dead);
  EXPECT_TRUE(dead_writers_mapped_by(target_, "").empty()) << "no mark: the target is not read";
  const auto live = new_generation();
  mark_in_progress(target_, "/d", live);
  EXPECT_TRUE(dead_writers_mapped_by(target_, "").empty()) << "a live writer's mark is its own business";
}

TEST_F(Sidecar, APerDatasetCleanUpLeavesOtherDatasetsAlone) {
  const auto a = written("/a");
  const auto b_old = written("/a_b");
  const auto b = written("/a_b");
  const auto percent = written("/a%b");
  remove_stale(target_, "/a_b", b, false, false, "");  // Append mode: this dataset only
  EXPECT_TRUE(present("/a", a));
  EXPECT_TRUE(present("/a%b", percent));
  EXPECT_TRUE(present("/a_b", b));
  EXPECT_FALSE(present("/a_b", b_old));
  remove_stale(target_, "/a_b", b, true, false, "");  // Overwrite: the whole file is new
  EXPECT_FALSE(present("/a", a));
  EXPECT_FALSE(present("/a%b", percent));
  EXPECT_TRUE(present("/a_b", b));
}

TEST_F(Sidecar, FolderCheckKeepsSourcesInsideTheFolderOfTheFile) {
  fs::create_directories(root_ / "inside" / "tiles");
  fs::create_directories(root_ / "elsewhere");
  std::ofstream(root_ / "inside" / "tiles" / "t.h5") << "t";
  std::ofstream(root_ / "elsewhere" / "secret.h5") << "s";
  fs::create_symlink(root_ / "elsewhere" / "secret.h5", root_ / "inside" / "link.h5");
  fs::create_directory_symlink(root_ / "elsewhere", root_ / "inside" / "dir");
  fs::create_directory_symlink(root_ / "inside" / "tiles", root_ / "inside" / "tiles2");
  FolderCheck check(root_ / "inside" / "v.h5");
  EXPECT_TRUE(check.inside(root_ / "inside" / "tiles" / "t.h5"));
  EXPECT_TRUE(check.inside(root_ / "inside" / "tiles2" / "t.h5"));  // a link that stays inside
  EXPECT_FALSE(check.inside(root_ / "elsewhere" / "secret.h5"));
  EXPECT_FALSE(check.inside(root_ / "inside" / "tiles" / ".." / ".." / "elsewhere" / "secret.h5"));
  EXPECT_FALSE(check.inside(root_ / "inside" / "link.h5"));
  EXPECT_FALSE(check.inside(root_ / "inside" / "dir" / "secret.h5"));
  // '..' after a link climbs from where the link points (elsewhere/.. is the root, outside).
  EXPECT_FALSE(check.inside(root_ / "inside" / "dir" / ".." / "elsewhere" / "secret.h5"));
  EXPECT_TRUE(check.inside(root_ / "inside" / "dir" / ".." / "inside" / "tiles" / "t.h5"));
}

}  // namespace
}  // namespace h5tile::detail
