// The pread/pwrite engine against an element-by-element reference, for many boxes and
// memory layouts (packed, transposed, negative strides, padded), element sizes and run
// lengths (direct runs and coalesced short runs).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "engine/raw_transfer.hpp"

namespace h5tile::detail {
namespace {
namespace fs = std::filesystem;

constexpr std::uint64_t kBase = 100;  // dataset bytes start here in the file

struct Case {
  Shape shape;
  Box box;
  std::size_t elem_size;
  std::string memory;  // "packed", "transposed", "reversed", "padded"
};

std::string name_of(const testing::TestParamInfo<Case>& info) {
  std::string n = info.param.memory + "_es" + std::to_string(info.param.elem_size);
  for (auto e : info.param.box.extent) {
    n += "_" + std::to_string(e);
  }
  return n + "_" + std::to_string(info.index);
}

// Memory for `box` in the requested layout: a buffer and strided bytes pointing into it.
struct Memory {
  std::vector<std::byte> buffer;
  StridedBytes bytes;
};

Memory make_memory(const Box& box, std::size_t es, const std::string& kind) {
  const auto rank = box.rank();
  Memory m;
  std::vector<std::int64_t> strides(rank);
  std::uint64_t count = std::max<std::uint64_t>(1, box.count());
  if (kind == "transposed") {  // column-major
    std::int64_t s = static_cast<std::int64_t>(es);
    for (std::size_t a = 0; a < rank; ++a) {
      strides[a] = s;
      s *= static_cast<std::int64_t>(box.extent[a]);
    }
  } else {
    std::int64_t s = static_cast<std::int64_t>(es);
    for (std::size_t a = rank; a-- > 0;) {
      strides[a] = s;
      s *= static_cast<std::int64_t>(box.extent[a] + (kind == "padded" && a == rank - 1 ? 3 : 0));
    }
    if (kind == "padded") {
      count = static_cast<std::uint64_t>(s) / es + 1;
    }
  }
  m.buffer.assign(count * es + 64, std::byte{0});
  m.bytes.ptr = m.buffer.data();
  if (kind == "reversed") {  // every axis backwards
    for (std::size_t a = 0; a < rank; ++a) {
      m.bytes.ptr += static_cast<std::int64_t>(box.extent[a] - 1) * strides[a];
      strides[a] = -strides[a];
    }
  }
  m.bytes.strides = strides;
  return m;
}

// Calls f(file_element_index, memory_pointer) for every element of the box.
template <class F>
void for_each_element(const Shape& shape, const Box& box, const StridedBytes& mem, F&& f) {
  const auto rank = box.rank();
  std::vector<std::uint64_t> idx(rank, 0);
  for (std::uint64_t n = 0; n < box.count(); ++n) {
    std::uint64_t linear = 0;
    std::byte* p = mem.ptr;
    for (std::size_t a = 0; a < rank; ++a) {
      linear = linear * shape[a] + box.offset[a] + idx[a];
      p += static_cast<std::int64_t>(idx[a]) * mem.strides[a];
    }
    f(linear, p);
    for (std::size_t a = rank; a-- > 0;) {
      if (++idx[a] < box.extent[a]) break;
      idx[a] = 0;
    }
  }
}

class RawTransfer : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(GetParam().box.fits(GetParam().shape));
    std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    path_ = fs::temp_directory_path() / ("h5tile_raw_" + std::to_string(::getpid()) + "_" + name);
  }
  void TearDown() override { fs::remove(path_); }
  fs::path path_;
};

TEST_P(RawTransfer, ReadMatchesReference) {
  const auto& c = GetParam();
  const auto total = element_count(c.shape) * c.elem_size;
  std::vector<std::byte> file_bytes(kBase + total);
  std::mt19937 rng(7);
  for (auto& b : file_bytes) b = static_cast<std::byte>(rng());
  {
    const PosixFile f(path_, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    f.write_at(file_bytes.data(), file_bytes.size(), 0);
  }
  const PosixFile f(path_, O_RDONLY);
  const RawDataset raw{&f, kBase, c.shape, c.elem_size};
  auto mem = make_memory(c.box, c.elem_size, c.memory);
  read_raw(raw, c.box, mem.bytes);
  std::uint64_t checked = 0;
  for_each_element(c.shape, c.box, mem.bytes, [&](std::uint64_t i, std::byte* p) {
    ASSERT_EQ(std::memcmp(p, file_bytes.data() + kBase + i * c.elem_size, c.elem_size), 0) << "element " << i;
    ++checked;
  });
  EXPECT_EQ(checked, c.box.count());
}

TEST_P(RawTransfer, WriteTouchesOnlyTheBox) {
  const auto& c = GetParam();
  const auto total = element_count(c.shape) * c.elem_size;
  std::vector<std::byte> expected(kBase + total, std::byte{0xEE});
  {
    const PosixFile f(path_, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    f.write_at(expected.data(), expected.size(), 0);
  }
  auto mem = make_memory(c.box, c.elem_size, c.memory);
  std::mt19937 rng(9);
  for (auto& b : mem.buffer) b = static_cast<std::byte>(rng());
  for_each_element(c.shape, c.box, mem.bytes, [&](std::uint64_t i, std::byte* p) {
    std::memcpy(expected.data() + kBase + i * c.elem_size, p, c.elem_size);
  });
  {
    const PosixFile f(path_, O_WRONLY);
    write_raw(RawDataset{&f, kBase, c.shape, c.elem_size}, c.box, mem.bytes);
  }
  std::vector<std::byte> got(expected.size());
  const PosixFile f(path_, O_RDONLY);
  f.read_at(got.data(), got.size(), 0);
  EXPECT_TRUE(got == expected);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const std::vector<std::pair<Shape, Box>> boxes = {
      {{13, 7, 5}, {{0, 0, 0}, {13, 7, 5}}},  // whole
      {{13, 7, 5}, {{2, 0, 0}, {5, 7, 5}}},   // slab along axis 0
      {{13, 7, 5}, {{1, 2, 1}, {9, 4, 3}}},   // interior
      {{13, 7, 5}, {{12, 6, 4}, {1, 1, 1}}},  // one element
      {{4, 70003}, {{1, 3}, {3, 70000}}},     // long rows: direct transfers
      {{3000, 40}, {{7, 0}, {2900, 40}}},     // many short contiguous rows
      {{3000, 40}, {{7, 5}, {2900, 11}}},     // short runs with gaps: coalesced
      {{11}, {{3}, {8}}},                     // 1-d
      {{}, {{}, {}}},                         // 0-d
      {{5, 0}, {{0, 0}, {5, 0}}},             // empty
  };
  for (const auto& [shape, box] : boxes) {
    for (const std::size_t es : {1UL, 2UL, 8UL, 16UL, 3UL}) {
      for (const char* memory : {"packed", "transposed", "reversed", "padded"}) {
        if (box.count() > 100000 && (es > 2 || std::string(memory) != "packed")) continue;
        out.push_back({shape, box, es, memory});
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Boxes, RawTransfer, testing::ValuesIn(cases()), name_of);

TEST(SplitRowMajor, PiecesAreOrderedBoundedAndContiguous) {
  const Box box{{3, 1, 2}, {10, 6, 7}};
  for (const std::size_t max_bytes : {1UL, 4UL, 40UL, 100UL, 168UL, 169UL, 5000UL, 1UL << 20}) {
    const auto parts = split_rowmajor(box, 4, max_bytes);
    std::uint64_t next = 0;  // linear index (in the box) where the next part must start
    for (const auto& p : parts) {
      ASSERT_TRUE(p.fits(Shape{13, 7, 9}));
      EXPECT_TRUE(p.count() * 4 <= max_bytes || p.count() == 1) << max_bytes;
      std::uint64_t first = 0;
      for (std::size_t a = 0; a < 3; ++a) first = first * box.extent[a] + (p.offset[a] - box.offset[a]);
      EXPECT_EQ(first, next);
      // Contiguous in the box's row-major order: only the first non-unit axis may be partial.
      bool partial_seen = false;
      for (std::size_t a = 0; a < 3; ++a) {
        if (partial_seen) {
          EXPECT_EQ(p.extent[a], box.extent[a]);
        }
        if (p.extent[a] != 1 && p.extent[a] != box.extent[a]) {
          partial_seen = true;
        }
      }
      next += p.count();
    }
    EXPECT_EQ(next, box.count());
  }
  EXPECT_TRUE(split_rowmajor(Box{{0}, {0}}, 4, 10).empty());
  EXPECT_EQ(split_rowmajor(Box{}, 4, 10).size(), 1U);
}

// file_span: the bytes a part touches. The parts a tile file is written in (split_rowmajor of the
// whole tile) hold exactly their own bytes, in order and without gaps: the checksum computed while
// writing relies on it.
TEST(FileSpan, PartsOfAWholeDatasetAreExactlyTheirBytes) {
  const Shape shape{10, 6, 7};
  const RawDataset file{nullptr, 4096, shape, 4};
  for (const std::size_t max_bytes : {1UL, 40UL, 100UL, 169UL, 5000UL, 1UL << 20}) {
    std::uint64_t next = file.base;
    for (const auto& p : split_rowmajor(Box::whole(shape), 4, max_bytes)) {
      const auto span = file_span(file, p);
      EXPECT_EQ(span.begin, next) << max_bytes;
      EXPECT_EQ(span.end - span.begin, p.count() * 4) << max_bytes;
      next = span.end;
    }
    EXPECT_EQ(next, file.base + element_count(shape) * 4);
  }
}

TEST(FileSpan, ABoxWithGapsSpansFromItsFirstToItsLastByte) {
  const RawDataset file{nullptr, 100, Shape{10, 6, 7}, 2};
  const auto span = file_span(file, Box{{3, 1, 2}, {2, 2, 3}});
  EXPECT_EQ(span.begin, 100 + ((3 * 6 + 1) * 7 + 2) * 2);
  EXPECT_EQ(span.end, 100 + ((4 * 6 + 2) * 7 + 4) * 2 + 2);
  EXPECT_GT(span.end - span.begin, std::uint64_t{2 * 2 * 3 * 2});
  EXPECT_EQ(file_span(file, Box{{1, 1, 1}, {0, 2, 2}}).end - file_span(file, Box{{1, 1, 1}, {0, 2, 2}}).begin, 0U);
  const RawDataset scalar{nullptr, 64, Shape{}, 8};
  EXPECT_EQ(file_span(scalar, Box{}).begin, 64U);
  EXPECT_EQ(file_span(scalar, Box{}).end, 72U);
}

// A box is one row-major run in memory when it spans every trailing axis after its first axis
// longer than 1: a chunk decoded (or encoded) straight in place needs that.
TEST(RowMajorRun, OnlyBoxesSpanningTheTrailingAxes) {
  const Shape shape{8, 6, 5};
  std::vector<std::byte> memory(element_count(shape) * 4);
  const StridedBytes whole{memory.data(), rowmajor_strides(shape, 4)};
  const auto run = [&](const Box& part) {
    return is_rowmajor_run(sub_memory(whole, Box::whole(shape), part), part.extent, 4);
  };
  EXPECT_TRUE(run(Box{{2, 0, 0}, {3, 6, 5}}));  // whole rows of the first axis
  EXPECT_TRUE(run(Box{{2, 1, 0}, {1, 4, 5}}));  // one index of the first axis, whole rows below
  EXPECT_TRUE(run(Box{{2, 1, 3}, {1, 1, 2}}));  // part of one row
  EXPECT_TRUE(run(Box::whole(shape)));
  EXPECT_FALSE(run(Box{{2, 0, 0}, {3, 6, 4}}));  // rows cut short
  EXPECT_FALSE(run(Box{{2, 1, 0}, {2, 4, 5}}));  // two slabs with a gap
  EXPECT_FALSE(run(Box{{0, 0, 1}, {1, 2, 4}}));
  // A chunk's own memory (row-major of its extent) always is one.
  EXPECT_TRUE(is_rowmajor_run(StridedBytes{memory.data(), rowmajor_strides(Shape{3, 7}, 2)}, Shape{3, 7}, 2));
}

}  // namespace
}  // namespace h5tile::detail
