// Where the chunks of a dataset are, as the read tasks find them (ChunkDirectory), against what
// HDF5 says of each chunk asked on its own (H5Dget_chunk_info_by_coord), in files written here
// with the HDF5 C library: allocated and unallocated chunks, a dataset shrunk after writing, few
// chunks and many; the count of chunks; and HDF5's reads of a chunk's stored bytes.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/create.hpp"
#include "hdf5/file.hpp"
#include "layout/file_writer.hpp"

namespace h5tile::detail {
namespace {

struct Layout {
  hsize_t rows, cols;              // as written
  hsize_t chunk_rows, chunk_cols;  // chunk shape
  hsize_t written_rows;            // rows [0, written_rows) written: the other rows' chunks stay unallocated
  hsize_t kept_rows;               // then the first axis shrunk (or kept) to this
  bool deflate;
  // In HDF5 1.10's formats (an extensible array indexes the chunks), not HDF5's default (a
  // version-1 B-tree, which h5tile lists itself where HDF5 has no H5Dchunk_iter).
  bool array_index = false;
};

std::int32_t value_at(std::size_t i) { return static_cast<std::int32_t>(i % 1000); }

// Writes int32 "x" of `layout` into `path` (a file made with `fcpl` and `fapl`).
void write(const std::filesystem::path& path, const Layout& layout, hid_t fcpl = H5P_DEFAULT,
           hid_t fapl = H5P_DEFAULT) {
  const Hdf5Lock lock;
  const PlistHandle v110(H5Pcreate(H5P_FILE_ACCESS));
  if (layout.array_index) {
    H5Pset_libver_bounds(v110.get(), H5F_LIBVER_V110, H5F_LIBVER_V110);
    fapl = v110.get();
  }
  const FileHandle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, fapl));
  ASSERT_GE(file.get(), 0);
  const hsize_t dims[2] = {layout.rows, layout.cols};
  const hsize_t max_dims[2] = {H5S_UNLIMITED, layout.cols};
  const SpaceHandle space(H5Screate_simple(2, dims, max_dims));
  const PlistHandle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  const hsize_t chunk[2] = {layout.chunk_rows, layout.chunk_cols};
  H5Pset_chunk(dcpl.get(), 2, chunk);
  if (layout.deflate) H5Pset_deflate(dcpl.get(), 4);
  const DatasetHandle dataset(
      H5Dcreate2(file.get(), "x", H5T_NATIVE_INT32, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  ASSERT_GE(dataset.get(), 0);
  if (layout.written_rows > 0) {
    std::vector<std::int32_t> values(layout.written_rows * layout.cols);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = value_at(i);
    const hsize_t start[2] = {0, 0};
    const hsize_t count[2] = {layout.written_rows, layout.cols};
    H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
    const SpaceHandle memory(H5Screate_simple(2, count, nullptr));
    ASSERT_GE(H5Dwrite(dataset.get(), H5T_NATIVE_INT32, memory.get(), space.get(), H5P_DEFAULT, values.data()), 0);
  }
  const hsize_t kept[2] = {layout.kept_rows, layout.cols};
  ASSERT_GE(H5Dset_extent(dataset.get(), kept), 0);
}

// The first element of each chunk of the dataset's grid (as shrunk).
std::vector<Shape> grid(const Layout& layout) {
  std::vector<Shape> origins;
  for (hsize_t r = 0; r < layout.kept_rows; r += layout.chunk_rows)
    for (hsize_t c = 0; c < layout.cols; c += layout.chunk_cols) origins.push_back({r, c});
  return origins;
}

// What HDF5 says of one chunk asked on its own (no user block in these files).
std::optional<StoredChunk> asked_alone(hid_t dataset, const Shape& origin) {
  const Hdf5Lock lock;
  const hsize_t offset[2] = {origin[0], origin[1]};
  unsigned mask = 0;
  haddr_t address = HADDR_UNDEF;
  hsize_t size = 0;
  if (H5Dget_chunk_info_by_coord(dataset, offset, &mask, &address, &size) < 0 || address == HADDR_UNDEF) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  return StoredChunk{address, size, mask};
}

class ChunkDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::path(::testing::TempDir()) /
            (std::string("chunk-directory-") + test->name() + "-" + std::to_string(::getpid()) + ".h5");
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // Writes `layout`, opens it, and returns its directory (chunk bytes as HDF5 stores them
  // unfiltered, or `chunk_bytes`: what the directory weighs its lookups against).
  ChunkDirectory open(const Layout& layout, std::uint64_t chunk_bytes = 0) {
    write(path_, layout);
    const Hdf5Lock lock;
    file_ = FileHandle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    dataset_ = DatasetHandle(H5Dopen2(file_.get(), "x", H5P_DEFAULT));
    return ChunkDirectory(
        dataset_.get(), -1, {layout.chunk_rows, layout.chunk_cols},
        chunk_bytes != 0 ? chunk_bytes : layout.chunk_rows * layout.chunk_cols * sizeof(std::int32_t));
  }

  // Every chunk of the grid as the directory finds it, checked against asked_alone; false where
  // the directory leaves the chunks to HDF5.
  bool agrees_with_hdf5(const ChunkDirectory& directory, const Layout& layout) {
    const auto origins = grid(layout);
    const auto found = directory.find(origins);
    if (!found) return false;
    EXPECT_EQ(found->size(), origins.size());
    for (std::size_t i = 0; i < origins.size() && i < found->size(); ++i) {
      const auto expected = asked_alone(dataset_.get(), origins[i]);
      EXPECT_EQ((*found)[i].has_value(), expected.has_value()) << "chunk " << i;
      if (expected && (*found)[i]) {
        EXPECT_EQ((*found)[i]->offset, expected->offset) << "chunk " << i;
        EXPECT_EQ((*found)[i]->size, expected->size) << "chunk " << i;
        EXPECT_EQ((*found)[i]->filter_mask, expected->filter_mask) << "chunk " << i;
      }
    }
    return true;
  }

  // Writes `layout` and opens it twice in this process, through one HDF5 (as h5py and h5tile can
  // be): returned for writing, and as file_ and dataset_ for reading (sharing the writer's file).
  // The caller holds an Hdf5Lock while it calls HDF5 itself (it is recursive).
  std::pair<FileHandle, DatasetHandle> write_and_open_twice(const Layout& layout) {
    write(path_, layout);
    const Hdf5Lock lock;
    FileHandle writer(H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    DatasetHandle written(H5Dopen2(writer.get(), "x", H5P_DEFAULT));
    file_ = FileHandle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    dataset_ = DatasetHandle(H5Dopen2(file_.get(), "x", H5P_DEFAULT));
    return {std::move(writer), std::move(written)};
  }

  // The file's bytes, and the file made of `bytes` (a damaged copy).
  [[nodiscard]] std::string file_bytes() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void rewrite(const std::string& bytes) const { std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes; }

  // chunks_from_file of "x" in the file, opened read-only (`dataset`: where given, the dataset to
  // list instead).
  [[nodiscard]] std::optional<std::vector<std::pair<Shape, StoredChunk>>> listed(hid_t dataset = -1) const {
    const Hdf5Lock lock;
    const FileHandle file(dataset < 0 ? H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID);
    const DatasetHandle opened(dataset < 0 ? H5Dopen2(file.get(), "x", H5P_DEFAULT) : H5I_INVALID_HID);
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    auto chunks = chunks_from_file(dataset < 0 ? opened.get() : dataset, fd);
    ::close(fd);
    return chunks;
  }

  std::filesystem::path path_;
  FileHandle file_;
  DatasetHandle dataset_;
};

constexpr bool kListsInOnePass = H5TILE_HDF5_CHUNK_ITER;

TEST_F(ChunkDirectoryTest, FewLargeChunksAreFoundWithAnyHdf5) {
  // 6 x 2 chunks, rows 0-39 written: rows 40-47 of chunks are unallocated.
  const Layout layout{48, 64, 8, 32, 40, 48, true};
  const auto directory = open(layout);
  EXPECT_TRUE(agrees_with_hdf5(directory, layout));
  EXPECT_EQ(directory.why_through_hdf5(), "");
}

TEST_F(ChunkDirectoryTest, ManySmallChunksOfAnArrayIndexAreListedWithChunkIterAndLeftToHdf5Without) {
  // 1100 x 4 = 4400 chunks of 64 bytes, 4000 written: finding them one by one would cost more
  // than reading them.
  const Layout layout{4400, 16, 4, 4, 4000, 4400, false, true};
  const auto directory = open(layout);
  const bool found = agrees_with_hdf5(directory, layout);
  EXPECT_EQ(found, kListsInOnePass);
  if (!found) {
    EXPECT_NE(directory.why_through_hdf5().find("4000 chunks"), std::string::npos) << directory.why_through_hdf5();
  }
}

TEST_F(ChunkDirectoryTest, WithoutChunkIterEachChunkIsAskedOfHdf5OnceWhileNothingChanges) {
  // 6 x 2 chunks, rows 40-47 unallocated: found twice, the same, HDF5 asked for each chunk once
  // (none, where one pass lists them); asked again once the dataset has changed.
  const Layout layout{48, 64, 8, 32, 40, 48, true};
  const Hdf5Lock lock;
  const auto [writer, written] = write_and_open_twice(layout);
  ASSERT_GE(dataset_.get(), 0);
  const ChunkDirectory directory(dataset_.get(), -1, {8, 32}, 8 * 32 * sizeof(std::int32_t));
  const auto chunks = grid(layout).size();
  ASSERT_TRUE(agrees_with_hdf5(directory, layout));
  ASSERT_TRUE(agrees_with_hdf5(directory, layout));
  EXPECT_EQ(directory.chunks_asked(), kListsInOnePass ? 0U : chunks);
  const hsize_t shrunk_dims[2] = {40, 64};
  ASSERT_GE(H5Dset_extent(written.get(), shrunk_dims), 0);
  const Layout shrunk{48, 64, 8, 32, 40, 40, true};
  ASSERT_TRUE(agrees_with_hdf5(directory, shrunk));
  EXPECT_EQ(directory.chunks_asked(), kListsInOnePass ? 0U : chunks + grid(shrunk).size());
}

TEST_F(ChunkDirectoryTest, WithoutChunkIterLargeChunksAreLookedUpWhileThatCostsLessThanReadingThem) {
  // 1100 chunks: looked up one by one before 1.14 where a chunk holds at least 64 bytes per chunk
  // of the index (the bytes given here stand for chunks that large), else left to HDF5.
  const Layout layout{4400, 4, 4, 4, 4400, 4400, false, true};
  const auto large = open(layout, 64 * 1100);
  EXPECT_TRUE(agrees_with_hdf5(large, layout));
  EXPECT_EQ(large.why_through_hdf5(), "");
  const ChunkDirectory smaller(dataset_.get(), -1, {4, 4}, 64 * 1100 - 1);
  EXPECT_EQ(agrees_with_hdf5(smaller, layout), kListsInOnePass);
}

TEST_F(ChunkDirectoryTest, WithoutChunkIterMoreThan16384ChunksAreLeftToHdf5HoweverLarge) {
  // Looking up all of N chunks one by one takes time in N^2 (65536 took minutes).
  const Layout layout{65540, 4, 4, 4, 65540, 65540, false, true};  // 16385 chunks
  const auto directory = open(layout, std::uint64_t{1} << 40);
  // Found, or not, without asking HDF5 for each chunk (that would take seconds where one pass lists them).
  const bool found = directory.find(grid(layout)).has_value();
  EXPECT_EQ(found, kListsInOnePass);
  if (!found) {
    EXPECT_NE(directory.why_through_hdf5().find("16385 chunks"), std::string::npos) << directory.why_through_hdf5();
  }
}

TEST_F(ChunkDirectoryTest, ChunksBeyondAShrunkExtentAreNotFound) {
  // Chunk rows 12-15 stay in the index after the shrink to 10 rows (2.5 chunk rows).
  const Layout layout{16, 8, 4, 8, 16, 10, true};
  const auto directory = open(layout);
  ASSERT_TRUE(agrees_with_hdf5(directory, layout));
  const auto found = directory.find({{8, 0}, {12, 0}});
  ASSERT_TRUE(found);
  EXPECT_TRUE((*found)[0].has_value());   // the edge chunk, partly inside
  EXPECT_FALSE((*found)[1].has_value());  // wholly outside: no read asks for it
}

TEST_F(ChunkDirectoryTest, SeesWhatChangedSinceItsListing) {
  // A reader and a writer of one file in one process, through one HDF5 (as h5py and h5tile can
  // be): after the listing, the writer shrinks the dataset, grows it back and writes the rows
  // again, last first, so that their chunks land at new addresses, then flushes.
  const Layout layout{64, 8, 2, 2, 64, 64, false};
  const Hdf5Lock lock;
  const auto [writer, written] = write_and_open_twice(layout);
  ASSERT_GE(dataset_.get(), 0);
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const ChunkDirectory directory(dataset_.get(), fd, {2, 2}, 16);
  ASSERT_TRUE(agrees_with_hdf5(directory, layout));  // 128 chunks: found by any HDF5

  const hsize_t shrunk[2] = {32, 8};
  ASSERT_GE(H5Dset_extent(written.get(), shrunk), 0);
  const auto outside = directory.find({{40, 0}});
  ASSERT_TRUE(outside);
  EXPECT_FALSE((*outside)[0].has_value());  // beyond the extent now: never another chunk's

  const hsize_t grown[2] = {64, 8};
  ASSERT_GE(H5Dset_extent(written.get(), grown), 0);
  std::vector<std::int32_t> rows(2 * 8);
  for (hsize_t r = 62; r >= 32; r -= 2) {
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int32_t>(10000 + r * 8 + i);
    const SpaceHandle space(H5Dget_space(written.get()));
    const hsize_t start[2] = {r, 0};
    const hsize_t count[2] = {2, 8};
    H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
    const SpaceHandle memory(H5Screate_simple(2, count, nullptr));
    ASSERT_GE(H5Dwrite(written.get(), H5T_NATIVE_INT32, memory.get(), space.get(), H5P_DEFAULT, rows.data()), 0);
  }
  ASSERT_GE(H5Fflush(writer.get(), H5F_SCOPE_GLOBAL), 0);
  EXPECT_TRUE(agrees_with_hdf5(directory, layout));  // the new addresses
  ::close(fd);
}

// The index HDF5 gave a dataset (H5D_CHUNK_IDX_NONE: the implicit one).
H5D_chunk_index_t index_of(hid_t dataset) {
  const Hdf5Lock lock;
  H5D_chunk_index_t index{};
  EXPECT_GE(H5Dget_chunk_index_type(dataset, &index), 0);
  return index;
}

TEST_F(ChunkDirectoryTest, ChunksInOneBlockAreFoundWithAnyHdf5) {
  // The chunked writer's datasets: made in HDF5 1.10's formats, allocated when made, unfiltered,
  // so HDF5 gives them the implicit index (chunk i at the first chunk's address plus i chunks).
  // 2075 chunks of 48 bytes, partial at both edges: beyond what 1.10 looks up one by one.
  const Shape shape{247, 301};
  const Shape chunk{3, 4};
  const Layout layout{247, 301, 3, 4, 247, 247, false};
  {
    const auto file = create_file_exclusive(path_, write_access(4096, H5F_LIBVER_V110).get());
    (void)create_chunked_dataset(file.get(), "x", DType(DTypeKind::Int32), shape, chunk, true);
  }
  const Hdf5Lock lock;
  file_ = FileHandle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  dataset_ = DatasetHandle(H5Dopen2(file_.get(), "x", H5P_DEFAULT));
  EXPECT_EQ(index_of(dataset_.get()), H5D_CHUNK_IDX_NONE);
  const ChunkDirectory directory(dataset_.get(), -1, chunk, 48);
  EXPECT_TRUE(agrees_with_hdf5(directory, layout));  // found, whatever the HDF5 version
  const auto origins = grid(layout);
  const auto stored = stored_chunks(dataset_.get(), origins);  // the writers' lookup
  for (std::size_t i = 0; i < origins.size(); i += 97) {
    const auto expected = asked_alone(dataset_.get(), origins[i]);
    ASSERT_TRUE(expected && stored[i]) << "chunk " << i;
    EXPECT_EQ(stored[i]->offset, expected->offset) << "chunk " << i;
  }
}

TEST_F(ChunkDirectoryTest, ChunksInOneBlockOfALargerMaximumExtentAreFoundWithAnyHdf5) {
  // HDF5 numbers the chunks of an implicit index in the grid of the maximum extent (here 9 chunk
  // columns where the current extent has 8): chunk (r, c) at the first plus r * 9 + c chunks.
  // (h5py makes such datasets: maxshape larger than the shape, no filters, early allocation.)
  const Layout layout{1500, 32, 3, 4, 1500, 1500, false};
  {
    const Hdf5Lock lock;
    const auto file = create_file_exclusive(path_, write_access(4096, H5F_LIBVER_V110).get());
    const hsize_t dims[2] = {1500, 32};
    const hsize_t max_dims[2] = {1500, 36};
    const SpaceHandle space(H5Screate_simple(2, dims, max_dims));
    const PlistHandle dcpl(H5Pcreate(H5P_DATASET_CREATE));
    const hsize_t chunk[2] = {3, 4};
    H5Pset_chunk(dcpl.get(), 2, chunk);
    set_early_allocation(dcpl.get());
    const DatasetHandle dataset(
        H5Dcreate2(file.get(), "x", H5T_NATIVE_INT32, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
    ASSERT_GE(dataset.get(), 0);
  }
  const Hdf5Lock lock;
  file_ = FileHandle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  dataset_ = DatasetHandle(H5Dopen2(file_.get(), "x", H5P_DEFAULT));
  ASSERT_EQ(index_of(dataset_.get()), H5D_CHUNK_IDX_NONE);
  const ChunkDirectory directory(dataset_.get(), -1, {3, 4}, 48);
  EXPECT_TRUE(agrees_with_hdf5(directory, layout));  // 4000 chunks of 48 bytes: 1.10 finds them this way only
  const auto origins = grid(layout);
  const auto stored = stored_chunks(dataset_.get(), origins);
  for (std::size_t i = 0; i < origins.size(); ++i) {
    const auto expected = asked_alone(dataset_.get(), origins[i]);
    ASSERT_TRUE(expected && stored[i]) << "chunk " << i;
    EXPECT_EQ(stored[i]->offset, expected->offset) << "chunk " << i;
  }
}

// A file format to write the tests' files in: its name, and its creation and access properties.
struct FileFormat {
  std::string name;
  PlistHandle fcpl;
  PlistHandle fapl;
};

std::vector<FileFormat> file_formats() {
  const Hdf5Lock lock;
  std::vector<FileFormat> formats;
  const auto add = [&](std::string name) -> FileFormat& {
    formats.push_back(
        {std::move(name), PlistHandle(H5Pcreate(H5P_FILE_CREATE)), PlistHandle(H5Pcreate(H5P_FILE_ACCESS))});
    return formats.back();
  };
  add("HDF5's defaults (object headers of version 1)");
  auto& v18 = add("libver 1.8 (object headers of version 2, layout version 3)");
  H5Pset_libver_bounds(v18.fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18);
  auto& user_block = add("a user block of 1024 bytes");
  H5Pset_userblock(user_block.fcpl.get(), 1024);
  auto& narrow = add("addresses and lengths of 4 bytes, nodes of 4 children at most (a deep tree)");
  H5Pset_sizes(narrow.fcpl.get(), 4, 4);
  H5Pset_istore_k(narrow.fcpl.get(), 2);
  return formats;
}

// Every allocated chunk as HDF5 alone lists it, one H5Dget_chunk_info call each (file offsets: HDF5
// before 1.14.4 counts addresses from the superblock, after `user_block` bytes).
std::vector<std::pair<Shape, StoredChunk>> listed_by_hdf5(hid_t dataset, hsize_t user_block) {
  const Hdf5Lock lock;
  const SpaceHandle space(H5Dget_space(dataset));
  hsize_t count = 0;
  EXPECT_GE(H5Dget_num_chunks(dataset, space.get(), &count), 0);
  const hsize_t base = H5_VERSION_GE(1, 14, 4) ? 0 : user_block;
  std::vector<std::pair<Shape, StoredChunk>> chunks;
  for (hsize_t i = 0; i < count; ++i) {
    hsize_t offset[2] = {0, 0};
    unsigned mask = 0;
    haddr_t address = HADDR_UNDEF;
    hsize_t size = 0;
    EXPECT_GE(H5Dget_chunk_info(dataset, space.get(), i, offset, &mask, &address, &size), 0);
    chunks.push_back({{offset[0], offset[1]}, StoredChunk{base + address, size, mask}});
  }
  return chunks;
}

// Whether HDF5's reads find each of `chunks` with the size listed (H5Dget_chunk_storage_size:
// the search of the index that a read makes, not a walk of all of it).
bool found_by_hdf5s_reads(hid_t dataset, const std::vector<std::pair<Shape, StoredChunk>>& chunks) {
  const Hdf5Lock lock;
  for (const auto& [origin, chunk] : chunks) {
    const std::vector<hsize_t> offset(origin.begin(), origin.end());
    hsize_t size = 0;
    if (H5Dget_chunk_storage_size(dataset, offset.data(), &size) < 0 || size != chunk.size) {
      H5Eclear2(H5E_DEFAULT);
      ADD_FAILURE() << "HDF5's reads do not find the chunk at " << to_string(origin) << " with " << chunk.size
                    << " bytes";
      return false;
    }
  }
  return true;
}

// `chunks` by their first elements.
std::vector<std::pair<Shape, StoredChunk>> by_origin(std::vector<std::pair<Shape, StoredChunk>> chunks) {
  std::sort(chunks.begin(), chunks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return chunks;
}

TEST_F(ChunkDirectoryTest, AVersion1BtreeListedFromItsFileEqualsWhatHdf5Lists) {
  // Compared with every record HDF5 itself lists (H5Dchunk_iter, or H5Dget_chunk_info one by one).
  const std::vector<Layout> layouts{
      {48, 64, 8, 32, 40, 48, true},        // deflate, rows 40-47 of chunks unallocated
      {4400, 16, 4, 4, 4000, 4400, false},  // 4000 chunks of 64 bytes
      {16, 8, 4, 8, 16, 10, true},          // shrunk: chunks beyond the extent stay in the index
      {16, 8, 4, 8, 0, 16, false},          // no chunk written
  };
  for (const auto& format : file_formats()) {
    for (const auto& layout : layouts) {
      SCOPED_TRACE(fmt::format("{}, {} rows written", format.name, layout.written_rows));
      write(path_, layout, format.fcpl.get(), format.fapl.get());
      const Hdf5Lock lock;
      const FileHandle file(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
      const DatasetHandle dataset(H5Dopen2(file.get(), "x", H5P_DEFAULT));
      const auto chunks = listed(dataset.get());
      ASSERT_TRUE(chunks.has_value());
      hsize_t user_block = 0;
      H5Pget_userblock(format.fcpl.get(), &user_block);
      const auto expected = by_origin(listed_by_hdf5(dataset.get(), user_block));
      ASSERT_EQ(by_origin(allocated_chunks(dataset.get())).size(), expected.size());  // h5tile's use of it
      EXPECT_TRUE(found_by_hdf5s_reads(dataset.get(), *chunks));
      const auto got = by_origin(*chunks);
      ASSERT_EQ(got.size(), expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].first, expected[i].first) << "chunk " << i;
        EXPECT_EQ(got[i].second.offset, expected[i].second.offset) << "chunk " << i;
        EXPECT_EQ(got[i].second.size, expected[i].second.size) << "chunk " << i;
        EXPECT_EQ(got[i].second.filter_mask, expected[i].second.filter_mask) << "chunk " << i;
      }
    }
  }
}

TEST_F(ChunkDirectoryTest, OtherIndexesAndFilesOpenForWritingAreNotListedFromTheirBytes) {
  const Layout layout{48, 64, 8, 32, 40, 48, true};
  {  // HDF5 1.10's formats: an unlimited axis gets an extensible array, not a version-1 B-tree
    const Hdf5Lock lock;
    const PlistHandle fapl(H5Pcreate(H5P_FILE_ACCESS));
    H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_V110);
    write(path_, layout, H5P_DEFAULT, fapl.get());
    const FileHandle file(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    const DatasetHandle dataset(H5Dopen2(file.get(), "x", H5P_DEFAULT));
    EXPECT_EQ(index_of(dataset.get()), H5D_CHUNK_IDX_EARRAY);
    EXPECT_FALSE(listed(dataset.get()).has_value());
  }
  // Open for writing in this process: HDF5's caches may hold nodes the file does not have yet.
  const Hdf5Lock lock;
  const auto [writer, written] = write_and_open_twice(layout);
  EXPECT_FALSE(listed(dataset_.get()).has_value());
  EXPECT_FALSE(listed(written.get()).has_value());
}

TEST_F(ChunkDirectoryTest, ADamagedNodeIsNotListedFromItsBytes) {
  // One node's signature changed on disk: not a node, so no listing (HDF5 reads no chunk there either).
  const Layout layout{4400, 16, 4, 4, 4000, 4400, false};
  write(path_, layout);
  auto bytes = file_bytes();
  const auto last_node = bytes.rfind("TREE");
  ASSERT_NE(last_node, std::string::npos);
  bytes[last_node + 3] = 'F';
  rewrite(bytes);
  EXPECT_FALSE(listed().has_value());
}

TEST_F(ChunkDirectoryTest, AKeyAboveTheLeavesThatHdf5sSearchWouldMissDropsTheListing) {
  // Key 3 of a node above the leaves moved one chunk row up, still below key 4: the chunks of child
  // 2 at or past it stay in the tree, but HDF5's search for them goes to child 3 and finds nothing
  // (a read gives the fill value). A listing with them would read what HDF5 does not.
  const Layout layout{4400, 16, 4, 4, 4400, 4400, false};
  write(path_, layout);
  auto bytes = file_bytes();
  const auto u64 = [&](std::size_t at) {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + at, 8);
    return v;
  };
  constexpr std::size_t kHead = 24, kEntry = 40;  // 8-byte addresses; keys of 8 + 8 * 3 bytes
  std::size_t node = bytes.find("TREE");
  while (node != std::string::npos && !(bytes[node + 4] == 1 && bytes[node + 5] == 1 && bytes[node + 6] >= 5)) {
    node = bytes.find("TREE", node + 1);
  }
  ASSERT_NE(node, std::string::npos) << "no node above the leaves with 5 children";
  const auto key3 = node + kHead + 3 * kEntry + 8;  // its first offset: the row
  const auto moved = u64(key3) + 4;
  ASSERT_LT(moved, u64(node + kHead + 4 * kEntry + 8));
  std::memcpy(bytes.data() + key3, &moved, 8);
  rewrite(bytes);
  EXPECT_FALSE(listed().has_value());
}

TEST_F(ChunkDirectoryTest, AOneAxisVersion1BtreeIsListedAsHdf5sReadsFindIt) {
  // One axis: HDF5 compares its keys with a case of its own (H5D__btree_cmp3).
  const hsize_t length = 40000, chunk = 8, written = 36000;
  {
    const Hdf5Lock lock;
    const FileHandle file(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    const hsize_t max = H5S_UNLIMITED;
    const SpaceHandle space(H5Screate_simple(1, &length, &max));
    const PlistHandle dcpl(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(dcpl.get(), 1, &chunk);
    H5Pset_deflate(dcpl.get(), 1);
    const DatasetHandle dataset(
        H5Dcreate2(file.get(), "x", H5T_NATIVE_INT32, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
    std::vector<std::int32_t> values(written);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = value_at(i);
    const hsize_t start = 0;
    H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &start, nullptr, &written, nullptr);
    const SpaceHandle memory(H5Screate_simple(1, &written, nullptr));
    ASSERT_GE(H5Dwrite(dataset.get(), H5T_NATIVE_INT32, memory.get(), space.get(), H5P_DEFAULT, values.data()), 0);
  }
  const Hdf5Lock lock;
  const FileHandle file(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  const DatasetHandle dataset(H5Dopen2(file.get(), "x", H5P_DEFAULT));
  const auto chunks = listed(dataset.get());
  ASSERT_TRUE(chunks.has_value());
  EXPECT_EQ(chunks->size(), written / chunk);
  EXPECT_TRUE(found_by_hdf5s_reads(dataset.get(), *chunks));
}

TEST_F(ChunkDirectoryTest, ManySmallChunksOfAVersion1BtreeAreFoundWithAnyHdf5) {
  // 16385 chunks of 64 bytes: of an array index, left to HDF5 without H5Dchunk_iter (above); of a
  // version-1 B-tree, listed from the file HDF5 opened, HDF5 asked for none of them one by one.
  const Layout layout{65540, 4, 4, 4, 65540, 65540, false};
  const auto directory = open(layout, 64);
  const auto origins = grid(layout);
  const auto found = directory.find(origins);
  ASSERT_TRUE(found.has_value()) << directory.why_through_hdf5();
  EXPECT_EQ(directory.chunks_asked(), 0U);
  ASSERT_EQ(found->size(), origins.size());
  for (std::size_t i = 0; i < origins.size(); i += 1021) {
    const auto expected = asked_alone(dataset_.get(), origins[i]);
    ASSERT_TRUE(expected && (*found)[i]) << "chunk " << i;
    EXPECT_EQ((*found)[i]->offset, expected->offset) << "chunk " << i;
    EXPECT_EQ((*found)[i]->size, expected->size) << "chunk " << i;
  }
}

TEST_F(ChunkDirectoryTest, FindsTheSameFromManyThreads) {
  const Layout layout{256, 8, 2, 8, 256, 256, true};
  const auto directory = open(layout);
  const auto origins = grid(layout);
  std::vector<std::optional<std::vector<std::optional<StoredChunk>>>> answers(4);
  std::vector<std::thread> threads;
  for (auto& answer : answers) threads.emplace_back([&] { answer = directory.find(origins); });
  for (auto& t : threads) t.join();
  for (const auto& answer : answers) {
    ASSERT_EQ(answer.has_value(), answers[0].has_value());
    if (!answer) continue;
    for (std::size_t i = 0; i < origins.size(); ++i) {
      ASSERT_TRUE((*answer)[i] && (*answers[0])[i]);
      EXPECT_EQ((*answer)[i]->offset, (*answers[0])[i]->offset);
    }
  }
}

TEST_F(ChunkDirectoryTest, CountsTheAllocatedChunks) {
  // 5 x 2 chunks, of which the first 3 rows (6 chunks) are written. HDF5 1.10 refuses H5S_ALL
  // here, so this once failed there (and the probe's walk of the index with it).
  (void)open({20, 16, 4, 8, 12, 20, false});
  EXPECT_EQ(count_chunks(dataset_.get()), 6U);
}

TEST_F(ChunkDirectoryTest, Hdf5ReadsAChunksStoredBytesOrSaysItIsNotAllocated) {
  const Layout layout{16, 8, 4, 8, 8, 16, true};
  (void)open(layout);
  const auto stored = asked_alone(dataset_.get(), {4, 0});
  ASSERT_TRUE(stored);
  std::vector<char> on_disk(stored->size);
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(stored->offset));
  in.read(on_disk.data(), static_cast<std::streamsize>(on_disk.size()));
  std::vector<std::byte> bytes;
  const auto mask = read_stored_chunk(dataset_.get(), {4, 0}, [&](std::size_t size) {
    bytes.resize(size);
    return bytes.data();
  });
  ASSERT_TRUE(mask);
  EXPECT_EQ(*mask, 0U);
  ASSERT_EQ(bytes.size(), on_disk.size());
  EXPECT_EQ(std::memcmp(bytes.data(), on_disk.data(), bytes.size()), 0);
  EXPECT_FALSE(read_stored_chunk(dataset_.get(), {8, 0}, [&](std::size_t size) {
    bytes.resize(size);
    return bytes.data();
  }));
}

// The message of what `f` throws ("" where it throws nothing).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "";
}

TEST_F(ChunkDirectoryTest, AnUnfilteredChunkOfAnotherSizeThanAChunksIsAnError) {
  // A directory told the chunks hold one byte more than HDF5 records for them: every record it
  // finds says another size than a chunk's, as a damaged index would.
  const Layout layout{16, 8, 4, 8, 8, 16, false};
  (void)open(layout);
  const ChunkDirectory lying(dataset_.get(), -1, {4, 8}, 4 * 8 * 4 + 1, true, "dataset '/x' in 'f.h5'");
  const auto message = error_of([&] { (void)lying.find({{0, 0}, {4, 0}}); });
  EXPECT_NE(message.find("dataset '/x' in 'f.h5': chunk [0:4, 0:8] is recorded with 128 bytes, but an unfiltered "
                         "chunk of this dataset holds 129"),
            std::string::npos)
      << message;
  // Unallocated chunks have no record to check; a filtered dataset's chunks have any size.
  EXPECT_EQ(error_of([&] { (void)lying.find({{8, 0}}); }), "");
  const ChunkDirectory filtered(dataset_.get(), -1, {4, 8}, 4 * 8 * 4 + 1, false, "dataset '/x' in 'f.h5'");
  EXPECT_EQ(error_of([&] { (void)filtered.find({{0, 0}, {4, 0}}); }), "");
}

TEST_F(ChunkDirectoryTest, AChunkPastTheEndOfItsFileIsAnError) {
  // The records checked against the size of the file the chunks are read from: here a file of 64
  // bytes, which every chunk of the dataset lies past.
  const Layout layout{16, 8, 4, 8, 8, 16, true};
  (void)open(layout);
  const auto small = path_.string() + ".small";
  std::ofstream(small, std::ios::binary) << std::string(64, 'x');
  const int fd = ::open(small.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const ChunkDirectory directory(dataset_.get(), fd, {4, 8}, 128, false, "dataset '/x' in 'f.h5'");
  const auto stored = asked_alone(dataset_.get(), {4, 0});
  ASSERT_TRUE(stored);
  const auto message = error_of([&] { (void)directory.find({{4, 0}}); });
  EXPECT_NE(message.find(fmt::format("dataset '/x' in 'f.h5': chunk [4:8, 0:8] is recorded at byte {} with {} bytes, "
                                     "past the end of the file (64 bytes)",
                                     stored->offset, stored->size)),
            std::string::npos)
      << message;
  ::close(fd);
  std::filesystem::remove(small);
}

}  // namespace
}  // namespace h5tile::detail
