// Reads of data that is not in the page cache (DirectIo): the bytes equal those of
// plain buffered reads for every alignment of file offset and memory, for data wholly, partly
// or not at all in the cache; and the O_DIRECT path really runs, also where memory and file
// offset do not line up (the pages it read stay out of the page cache, where a buffered read
// would have brought them in).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "io/posix/posix_file.hpp"

namespace h5tile::detail {
namespace {
namespace fs = std::filesystem;

constexpr std::size_t kFileBytes = (std::size_t{6} << 20) + 123;

class DirectIo : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("h5tile_direct_" + std::to_string(::getpid()) + ".bin");
    bytes_.resize(kFileBytes);
    std::mt19937_64 rng(3);
    for (auto& b : bytes_) b = static_cast<std::byte>(rng());
    const PosixFile out(path_, O_WRONLY | O_CREAT | O_TRUNC);
    out.write_at(bytes_.data(), bytes_.size(), 0);
    out.sync();
  }
  void TearDown() override { fs::remove(path_); }
  // Drops the file's pages from the page cache (they are clean: written and flushed).
  void evict(std::uint64_t offset = 0, std::uint64_t length = 0) const {
    const PosixFile f(path_, O_RDONLY);
    ASSERT_EQ(::posix_fadvise(f.fd(), static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED), 0);
  }
  // Pages of [offset, offset + length) in the page cache.
  [[nodiscard]] std::size_t cached_pages(std::uint64_t offset, std::uint64_t length) const {
    const PosixFile f(path_, O_RDONLY);
    void* map = ::mmap(nullptr, kFileBytes, PROT_READ, MAP_SHARED, f.fd(), 0);
    EXPECT_NE(map, MAP_FAILED);
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> resident((kFileBytes + page - 1) / page);
    EXPECT_EQ(::mincore(map, kFileBytes, resident.data()), 0);
    ::munmap(map, kFileBytes);
    std::size_t n = 0;
    for (auto p = offset / page; p < (offset + length + page - 1) / page; ++p) n += resident[p] & 1U;
    return n;
  }
  // Reads [offset, offset + size) into memory at `misalign` bytes past a 4 KiB boundary.
  [[nodiscard]] bool reads_back(std::uint64_t offset, std::size_t size, std::size_t misalign) const {
    std::unique_ptr<std::byte, decltype(&std::free)> buffer(
        static_cast<std::byte*>(std::aligned_alloc(4096, (size + 8192) / 4096 * 4096)), &std::free);
    const PosixFile f(path_, O_RDONLY, direct_);
    f.read_at(buffer.get() + misalign, size, offset);
    return std::memcmp(buffer.get() + misalign, bytes_.data() + offset, size) == 0;
  }

  fs::path path_;
  std::vector<std::byte> bytes_;
  detail::DirectIo direct_ = detail::DirectIo::On;
};

TEST_F(DirectIo, EqualBufferedReadsForEveryAlignmentAndCacheState) {
  struct Read {
    std::uint64_t offset;
    std::size_t size;
    std::size_t misalign;
  };
  // Aligned; file offset and memory off by the same amount (direct after a buffered head);
  // memory and file not lining up (buffered); ending at the file's unaligned end.
  const std::vector<Read> reads{{0, kFileBytes, 0},
                                {4096 * 3 + 17, 3 << 20, 17},
                                {4096 * 3 + 17, 3 << 20, 5},
                                {1 << 20, kFileBytes - (1 << 20), 0},
                                {100, (2 << 20) + 1, 100 % 4096}};
  for (const auto& r : reads) {
    evict();
    EXPECT_TRUE(reads_back(r.offset, r.size, r.misalign)) << "uncached " << r.offset << " " << r.size;
    EXPECT_TRUE(reads_back(r.offset, r.size, r.misalign)) << "cached " << r.offset << " " << r.size;
    evict(2 << 20, 1 << 20);  // a hole in the cache
    EXPECT_TRUE(reads_back(r.offset, r.size, r.misalign)) << "partly cached " << r.offset << " " << r.size;
  }
}

TEST_F(DirectIo, UncachedDataIsReadAroundThePageCacheOnlyWhenAsked) {
  evict();
  if (cached_pages(0, kFileBytes) != 0) {
    GTEST_SKIP() << "the file system of " << path_ << " keeps evicted pages (tmpfs?): nothing to read around";
  }
  const int direct = ::open(path_.c_str(), O_RDONLY | O_DIRECT);
  if (direct < 0) {
    GTEST_SKIP() << "the file system of " << path_ << " refuses O_DIRECT";
  }
  ::close(direct);
  ASSERT_TRUE(reads_back(0, 4 << 20, 0));
  // O_DIRECT brought (almost) nothing into the cache; a buffered read would bring all 1024 pages.
  EXPECT_LT(cached_pages(0, 4 << 20), 16U);
  // A dataset that starts 2 KiB into a page (as HDF5 places them) read into page-aligned
  // memory: through the aligned buffer, still around the cache.
  evict();
  ASSERT_TRUE(reads_back(2048, 4 << 20, 0));
  EXPECT_LT(cached_pages(0, 4 << 20), 16U);
  direct_ = detail::DirectIo::Off;
  evict();
  ASSERT_TRUE(reads_back(0, 4 << 20, 0));
  EXPECT_EQ(cached_pages(0, 4 << 20), 1024U);
}

}  // namespace
}  // namespace h5tile::detail
