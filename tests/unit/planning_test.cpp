// The pure logic of planning a write or a read: splitting a shape among ranks, checking that
// tiles cover a shape once, listing the chunks a box touches, and choosing chunk shapes.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "api/write_checks.hpp"
#include "layout/boxes.hpp"

namespace h5tile::detail {
namespace {

// The element counts per cell of a small shape, each box adding one to the cells it covers.
std::map<std::vector<std::uint64_t>, int> cover(const std::vector<Box>& boxes) {
  std::map<std::vector<std::uint64_t>, int> cells;
  for (const auto& b : boxes) {
    std::vector<std::uint64_t> at(b.offset);
    for (std::uint64_t n = 0; n < b.count(); ++n) {
      ++cells[at];
      for (std::size_t a = b.rank(); a-- > 0;) {
        if (++at[a] < b.offset[a] + b.extent[a]) break;
        at[a] = b.offset[a];
      }
    }
  }
  return cells;
}

class SplitForRanks : public ::testing::TestWithParam<std::tuple<Shape, unsigned, std::uint64_t>> {};

TEST_P(SplitForRanks, CoverTheShapeOnceWithAtMostOneBoxPerRank) {
  const auto& [shape, ranks, align] = GetParam();
  const auto boxes = split_for_ranks(shape, ranks, align);
  ASSERT_FALSE(boxes.empty());
  EXPECT_LE(boxes.size(), std::max(ranks, 1U));
  const auto coverage = coverage_of(boxes, shape);
  EXPECT_TRUE(coverage.overlaps.empty());
  EXPECT_EQ(coverage.covered, element_count(shape));
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    EXPECT_TRUE(boxes[i].fits(shape));
    if (!shape.empty() && element_count(shape) > 0) {
      EXPECT_GT(boxes[i].count(), 0U) << "box " << i << " is empty";
      for (std::size_t a = 1; a < shape.size(); ++a) EXPECT_EQ(boxes[i].extent[a], shape[a]);  // first axis only
      if (i + 1 < boxes.size()) {
        EXPECT_EQ(boxes[i].extent[0] % align, 0U) << "box " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, SplitForRanks,
                         ::testing::Values(std::tuple{Shape{10, 3}, 3U, 1ULL}, std::tuple{Shape{10, 3}, 16U, 1ULL},
                                           std::tuple{Shape{1000}, 7U, 64ULL}, std::tuple{Shape{5, 2, 2}, 2U, 2ULL},
                                           std::tuple{Shape{}, 4U, 1ULL}, std::tuple{Shape{0, 5}, 4U, 1ULL},
                                           std::tuple{Shape{1}, 1U, 1ULL}));

TEST(ResolvedLayout, AutoIsOneFileForOneProcessAndVirtualForSeparateWriters) {
  const Compression gzip{.compressor = Compressor::Gzip};
  EXPECT_EQ(resolved_layout({}, true), Layout::Contiguous);
  EXPECT_EQ(resolved_layout({.compression = gzip}, true), Layout::Chunked);
  EXPECT_EQ(resolved_layout({.chunk = {4, 4}}, true), Layout::Chunked);
  EXPECT_EQ(resolved_layout({}, false), Layout::Virtual);
  EXPECT_EQ(resolved_layout({.compression = gzip}, false), Layout::Virtual);
  for (const auto given : {Layout::Virtual, Layout::Contiguous, Layout::Chunked}) {
    EXPECT_EQ(resolved_layout({.layout = given}, true), given);
    EXPECT_EQ(resolved_layout({.layout = given}, false), given);
  }
  EXPECT_EQ(WriteOptions{}.layout, Layout::Auto);
  EXPECT_EQ(layout_from_name("auto"), Layout::Auto);
  EXPECT_EQ(layout_name(Layout::Auto), "auto");
}

TEST(Coverage, CountsOverlapsAndGaps) {
  const Shape shape{4, 4};
  const std::vector<Box> once{{{0, 0}, {2, 4}}, {{2, 0}, {2, 4}}};
  EXPECT_TRUE(coverage_of(once, shape).overlaps.empty());
  EXPECT_EQ(coverage_of(once, shape).covered, 16U);
  EXPECT_NO_THROW(check_coverage(once, shape, "f.h5", "/d"));

  const std::vector<Box> overlapping{{{0, 0}, {3, 4}}, {{2, 0}, {2, 4}}};
  EXPECT_EQ(coverage_of(overlapping, shape).overlaps.size(), 1U);
  try {
    check_coverage(overlapping, shape, "f.h5", "/d");
    FAIL() << "overlapping tiles accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("f.h5"), std::string::npos) << e.what();
  }
  const std::vector<Box> gap{{{0, 0}, {1, 4}}, {{2, 0}, {2, 4}}};
  EXPECT_EQ(coverage_of(gap, shape).covered, 12U);
  EXPECT_THROW(check_coverage(gap, shape, "f.h5", "/d"), InvalidArgument);
}

TEST(ChunksTouching, ListEveryChunkOnceInRowMajorOrder) {
  const Box box{{3, 5}, {6, 4}};  // rows 3..8, columns 5..8
  const Shape chunk{4, 3};
  const auto chunks = chunks_touching(box, chunk);
  // Rows 0-3, 4-7, 8-11 and columns 3-5, 6-8: 3 x 2 chunks.
  ASSERT_EQ(chunks.size(), 6U);
  std::set<std::vector<std::uint64_t>> origins;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].extent, chunk);
    EXPECT_EQ(chunks[i].offset[0] % chunk[0], 0U);
    EXPECT_EQ(chunks[i].offset[1] % chunk[1], 0U);
    EXPECT_TRUE(intersect(chunks[i], box).has_value()) << "chunk " << i << " does not touch the box";
    EXPECT_TRUE(origins.insert(chunks[i].offset).second);
    if (i > 0) {
      EXPECT_LT(chunks[i - 1].offset, chunks[i].offset);
    }
  }
  // Their parts inside the box cover it exactly once.
  std::vector<Box> parts;
  for (const auto& c : chunks) parts.push_back(*intersect(c, box));
  const auto cells = cover(parts);
  EXPECT_EQ(cells.size(), box.count());
  EXPECT_TRUE(std::all_of(cells.begin(), cells.end(), [](const auto& c) { return c.second == 1; }));
}

TEST(ChunksTouching, NoneForAnEmptyBox) {
  // An empty box starting inside a chunk (column 7 of the chunk of columns 6-11) touches none.
  EXPECT_TRUE(chunks_touching(Box{{0, 7, 0}, {6, 0, 2}}, Shape{6, 6, 2}).empty());
  EXPECT_TRUE(chunks_touching(Box{{3, 0}, {0, 4}}, Shape{2, 4}).empty());
}

TEST(Intersect, OverlapOrNothing) {
  EXPECT_EQ(intersect(Box{{0, 0}, {4, 4}}, Box{{2, 3}, {4, 4}}), (Box{{2, 3}, {2, 1}}));
  EXPECT_FALSE(intersect(Box{{0, 0}, {4, 4}}, Box{{4, 0}, {1, 4}}).has_value());  // touching is not overlapping
}

TEST(Subtract, LeavesWhatTheSecondBoxDoesNotCoverOnce) {
  const Box a{{0, 0}, {6, 5}};
  const Box b{{2, 1}, {2, 10}};
  const auto rest = subtract(a, b);
  std::map<std::pair<std::uint64_t, std::uint64_t>, int> seen;
  for (const auto& box : rest) {
    EXPECT_FALSE(intersect(box, b).has_value());
    for (auto i = box.offset[0]; i < box.offset[0] + box.extent[0]; ++i)
      for (auto j = box.offset[1]; j < box.offset[1] + box.extent[1]; ++j) ++seen[{i, j}];
  }
  EXPECT_EQ(seen.size(), a.count() - intersect(a, b)->count());
  for (const auto& [element, times] : seen) EXPECT_EQ(times, 1);
  EXPECT_EQ(subtract(a, Box{{6, 0}, {1, 5}}), std::vector<Box>{a});  // no overlap: all of it
  EXPECT_TRUE(subtract(a, Box{{0, 0}, {9, 9}}).empty());
}

TEST(LaterOverlaps, FindsEveryPairThatSharesElementsAlongAnyAxis) {
  using Lists = std::vector<std::vector<std::size_t>>;
  std::vector<Box> columns;  // tiles along the second axis, every one from row 0
  for (std::uint64_t c = 0; c < 4000; ++c) columns.push_back(Box{{0, c * 8}, {100, 8}});
  EXPECT_EQ(later_overlaps(columns), Lists(columns.size()));
  columns.push_back(Box{{99, 7}, {1, 2}});  // one element of tiles 0 and 1
  auto later = later_overlaps(columns);
  EXPECT_EQ(later[0], std::vector<std::size_t>{4000});
  EXPECT_EQ(later[1], std::vector<std::size_t>{4000});
  later[0].clear();
  later[1].clear();
  EXPECT_EQ(later, Lists(columns.size()));
  EXPECT_EQ(later_overlaps({Box{{0, 0}, {2, 2}}, Box{{2, 0}, {2, 2}}, Box{{0, 2}, {4, 2}}}), Lists(3));
  EXPECT_EQ(later_overlaps({Box{{1, 1}, {1, 1}}, Box{{0, 0}, {2, 2}}, Box{{0, 0}, {3, 3}}}),
            (Lists{{1, 2}, {2}, {}}));  // listed from the earlier box, in order
  EXPECT_EQ(later_overlaps({Box{{0, 0}, {2, 2}}, Box{{1, 1}, {0, 1}}}), Lists(2));  // an empty box shares nothing
}

TEST(ChunkFor, DefaultFitsOneGiBAndRequestedShapesAreChecked) {
  const Shape shape{1 << 20, 1024};
  const auto chunk = chunk_for({}, shape, {1 << 19, 1024}, 8, "f.h5", "/d");
  ASSERT_EQ(chunk.size(), 2U);
  EXPECT_LE(element_count(chunk) * 8, std::uint64_t{1} << 30);
  EXPECT_EQ(chunk[1], 1024U);  // leading axes halved first
  EXPECT_EQ(chunk_for({100, 7}, shape, {1, 1}, 8, "f.h5", "/d"), (Shape{100, 7}));
  for (const Shape& bad : {Shape{100}, Shape{0, 7}, Shape{(1 << 20) + 1, 7}}) {
    try {
      (void)chunk_for(bad, shape, {1, 1}, 8, "f.h5", "/d");
      FAIL() << "chunk " << to_string(bad) << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("/d"), std::string::npos) << e.what();
    }
  }
}

TEST(HalvedToFit, HalvesLeadingAxesUntilTheBlockFits) {
  EXPECT_EQ(halved_to_fit({1024, 1024}, 4, 1 << 20), (Shape{256, 1024}));
  EXPECT_EQ(halved_to_fit({3, 5}, 8, 1 << 20), (Shape{3, 5}));
  const auto tiny = halved_to_fit({1000, 1000, 1000}, 8, 1);
  EXPECT_EQ(tiny, (Shape{1, 1, 1}));
}

}  // namespace
}  // namespace h5tile::detail
