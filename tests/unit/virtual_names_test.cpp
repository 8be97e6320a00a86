// Names in virtual dataset mappings ('%' is HDF5's pattern character) and the tile folders that
// dataset names give.
#include <set>

#include <gtest/gtest.h>

#include "layout/virtual/sidecar.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {
namespace {

TEST(SourceNames, EscapingIsReadBackAsTheName) {
  for (const std::string name : {"", "plain.h5", "%", "%%", "%b", "r%sult 50% \xc3\xbc.h5", "a%%b%", "/abs/%b/x"}) {
    const auto stored = escape_source_name(name);
    EXPECT_EQ(unescape_source_name(stored), name) << name;
  }
  EXPECT_EQ(escape_source_name("a%b"), "a%%b");
  EXPECT_EQ(unescape_source_name("a%%b"), "a%b");
}

TEST(SourceNames, PatternsAndInvalidSpecifiersAreLeftToHdf5) {
  EXPECT_EQ(unescape_source_name("blk-%b.h5"), std::nullopt);  // one file per block
  EXPECT_EQ(unescape_source_name("a%%%b"), std::nullopt);      // '%' then a block number
  EXPECT_EQ(unescape_source_name("50%"), std::nullopt);        // HDF5 refuses these
  EXPECT_EQ(unescape_source_name("r%sult"), std::nullopt);
}

TEST(TileFolders, DistinctDatasetsNeverShareOne) {
  const std::vector<std::string> names = {"/a%b", "/a_b", "/a b", "/a%%b", "/a%25b", "/a/b", "/a_b/c", "/\xc3\xbc"};
  std::set<std::string> folders;
  for (const auto& name : names) folders.insert(dataset_dir(name).string());
  EXPECT_EQ(folders.size(), names.size());
  EXPECT_EQ(dataset_dir("/grp/x"), std::filesystem::path("grp/x"));
  EXPECT_EQ(dataset_dir("/a%b"), std::filesystem::path("a%b"));
  EXPECT_EQ(legacy_dataset_dir("/a%b"), std::filesystem::path("a_b"));
}

}  // namespace
}  // namespace h5tile::detail
