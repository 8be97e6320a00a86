#include "io/posix/posix_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

[[noreturn]] void throw_errno(const std::string& what, const std::filesystem::path& path, int err) {
  throw IoError(fmt::format("{} '{}': {}", what, path.string(), std::strerror(err)), err);
}

// Reads shorter than this never bypass the page cache.
constexpr std::size_t kDirectMin = std::size_t{1} << 20;
// O_DIRECT needs file offsets, lengths and memory addresses aligned to the logical block size;
// 4 KiB covers every common device.
constexpr std::uint64_t kDirectAlign = 4096;

std::uint64_t memory_bytes() {
  static const std::uint64_t bytes =
      static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return bytes;
}

}  // namespace

bool reads_bypass_cache(DirectIo mode, std::uint64_t file_size, std::uint64_t memory_bytes) noexcept {
  return file_size >= kDirectMin && (mode == DirectIo::On || (mode == DirectIo::Auto && file_size >= memory_bytes / 2));
}

bool reads_bypass_cache(DirectIo mode, std::uint64_t file_size) noexcept {
  return reads_bypass_cache(mode, file_size, memory_bytes());
}

struct PosixFile::Direct {
  std::uint64_t file_size = 0;
  std::once_flag opened;
  std::atomic<int> fd{-1};  // -1: not opened or not possible here (tmpfs, some network file systems)
  void* map = nullptr;      // the file mapped read-only, only ever passed to mincore(2)
  Direct() = default;
  Direct(const Direct&) = delete;
  Direct& operator=(const Direct&) = delete;
  ~Direct() {
    if (map != nullptr) ::munmap(map, file_size);
    if (fd >= 0) ::close(fd);
  }
};

PosixFile::PosixFile(const std::filesystem::path& path, int flags, unsigned mode) : path_(path) {
  do {
    fd_ = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) {
    throw_errno("cannot open", path, errno);
  }
}

PosixFile::PosixFile(const std::filesystem::path& path, int flags, DirectIo direct) : PosixFile(path, flags) {
  prepare_reads(flags, direct);
}

PosixFile PosixFile::adopt(int fd, const std::filesystem::path& path, DirectIo direct) {
  PosixFile file;
  file.fd_ = fd;
  file.path_ = path;
  file.prepare_reads(O_RDONLY, direct);
  return file;
}

void PosixFile::prepare_reads(int flags, DirectIo direct) {
  struct stat st {};
  if ((flags & O_ACCMODE) != O_RDONLY || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    return;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size >= kDirectMin) {
    // The engine reads large pieces in file order: a kernel told so reads further ahead of
    // them (twice the readahead window). Cold reads of a file on the GPU machine by 16 threads of
    // 8 MiB pieces ran 1.68 GB/s without and 2.00 with it (BENCHMARKS.md). A hint: no error matters.
    (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  if (direct != DirectIo::Off && reads_bypass_cache(direct, size, memory_bytes())) {
    direct_ = std::make_shared<Direct>();
    direct_->file_size = size;
  }
}

PosixFile PosixFile::reopen(int flags) const {
  // Opening the descriptor's /proc entry opens its inode, not whatever the path names now
  // (the file may have been renamed over, or the path may not be the one HDF5 opened).
  PosixFile again(fmt::format("/proc/self/fd/{}", fd_), flags);
  struct stat mine {};
  struct stat theirs {};
  if (::fstat(fd_, &mine) != 0 || ::fstat(again.fd_, &theirs) != 0 || mine.st_dev != theirs.st_dev ||
      mine.st_ino != theirs.st_ino) {
    throw IoError(fmt::format("cannot open '{}' again: /proc/self/fd gave another file", path_.string()), EIO);
  }
  again.path_ = path_;
  return again;
}

PosixFile& PosixFile::operator=(PosixFile&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    direct_ = std::move(other.direct_);
  }
  return *this;
}

std::uint64_t PosixFile::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    throw_errno("cannot stat", path_, errno);
  }
  return static_cast<std::uint64_t>(st.st_size);
}

void PosixFile::read_at(void* buffer, std::size_t size, std::uint64_t offset) const {
  auto* out = static_cast<std::byte*>(buffer);
  if (direct_ && size >= kDirectMin) {
    read_by_residency(out, size, offset);
    return;
  }
  read_buffered(out, size, offset);
}

void PosixFile::read_direct(std::byte* out, std::size_t size, std::uint64_t offset) const {
  // The aligned middle with O_DIRECT where memory lines up with the file; edges buffered.
  const auto head = (kDirectAlign - offset % kDirectAlign) % kDirectAlign;
  const int fd = direct_->fd.load();
  if (fd < 0 || size < head + kDirectAlign) {
    read_buffered(out, size, offset);
    return;
  }
  if ((reinterpret_cast<std::uintptr_t>(out) + head) % kDirectAlign != 0) {
    read_direct_bounced(out, size, offset);
    return;
  }
  read_buffered(out, head, offset);
  out += head;
  size -= head;
  offset += head;
  std::size_t aligned = size / kDirectAlign * kDirectAlign;
  while (aligned > 0) {
    const auto n = ::pread(fd, out, aligned, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0 || static_cast<std::size_t>(n) % kDirectAlign != 0) {
      break;  // the end of the file, or an error: the buffered read of the rest reports it
    }
    out += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
    aligned -= static_cast<std::size_t>(n);
  }
  read_buffered(out, size, offset);
}

void PosixFile::read_direct_bounced(std::byte* out, std::size_t size, std::uint64_t offset) const {
  // Datasets whose bytes do not start on a 4 KiB boundary of their file (h5py's and HDF5's
  // contiguous ones, mostly) never line up with page-aligned memory. The disk, not the copy,
  // bounds an uncached read (4 MiB: about 2 ms from the disk at 2 GB/s against 0.3 ms of copy),
  // so those take O_DIRECT through a buffer of each thread that does line up.
  constexpr std::size_t kBounce = (std::size_t{4} << 20) + 2 * kDirectAlign;  // a 4 MiB piece in one request
  thread_local const std::unique_ptr<std::byte, decltype(&std::free)> bounce(
      static_cast<std::byte*>(std::aligned_alloc(kDirectAlign, kBounce)), &std::free);
  const int fd = direct_->fd.load();
  while (size > 0 && bounce) {
    const auto lo = offset / kDirectAlign * kDirectAlign;
    const auto skip = static_cast<std::size_t>(offset - lo);
    const auto want = std::min(kBounce, (skip + size + kDirectAlign - 1) / kDirectAlign * kDirectAlign);
    const auto n = ::pread(fd, bounce.get(), want, static_cast<off_t>(lo));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0 || static_cast<std::size_t>(n) <= skip) {
      break;  // the end of the file, or an error: the buffered read of the rest reports it
    }
    const auto got = std::min(size, static_cast<std::size_t>(n) - skip);
    std::memcpy(out, bounce.get() + skip, got);
    out += got;
    size -= got;
    offset += got;
    if (static_cast<std::size_t>(n) < want) {
      break;  // a short read (the file's end): the rest, if any, buffered
    }
  }
  read_buffered(out, size, offset);
}

void PosixFile::read_by_residency(std::byte* out, std::size_t size, std::uint64_t offset) const {
  std::call_once(direct_->opened, [&] {
    int fd = -1;
    try {
      PosixFile direct = reopen(O_RDONLY | O_DIRECT);
      fd = std::exchange(direct.fd_, -1);
    } catch (const IoError&) {
      return;  // a file system without O_DIRECT (tmpfs, some network ones), no /proc: buffered reads
    }
    void* map = ::mmap(nullptr, direct_->file_size, PROT_READ, MAP_SHARED, fd_, 0);
    if (map == MAP_FAILED) {
      ::close(fd);
      return;
    }
    direct_->map = map;
    direct_->fd.store(fd);
  });
  if (direct_->fd.load() < 0 || offset + size > direct_->file_size) {
    read_buffered(out, size, offset);
    return;
  }
  // Which pages the page cache holds (mincore on a mapping of the file, which reads nothing):
  // runs of cached pages are copied from the cache, the others read from the disk directly.
  const std::uint64_t first = offset / kDirectAlign;
  const std::uint64_t last = (offset + size - 1) / kDirectAlign;
  std::vector<unsigned char> resident(last - first + 1);
  auto* base = static_cast<std::byte*>(direct_->map) + first * kDirectAlign;
  if (::mincore(base, (last - first + 1) * kDirectAlign, resident.data()) != 0) {
    read_buffered(out, size, offset);
    return;
  }
  const auto end = offset + size;
  std::uint64_t page = first;
  while (page <= last) {
    const bool cached = (resident[page - first] & 1U) != 0;
    auto next = page + 1;
    while (next <= last && ((resident[next - first] & 1U) != 0) == cached) ++next;
    const auto lo = std::max(offset, page * kDirectAlign);
    const auto hi = std::min(end, next * kDirectAlign);
    auto* dst = out + (lo - offset);
    if (cached) {
      read_buffered(dst, hi - lo, lo);
    } else {
      read_direct(dst, hi - lo, lo);
    }
    page = next;
  }
}

void PosixFile::read_buffered(std::byte* out, std::size_t size, std::uint64_t offset) const {
  while (size > 0) {
    const auto n = ::pread(fd_, out, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw_errno(fmt::format("cannot read {} bytes at offset {} of", size, offset), path_, errno);
    }
    if (n == 0) {
      throw IoError(fmt::format("'{}' ends before offset {}: the file is truncated", path_.string(), offset + size),
                    EIO);
    }
    out += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void PosixFile::write_at(const void* buffer, std::size_t size, std::uint64_t offset) const {
  const auto* in = static_cast<const std::byte*>(buffer);
  while (size > 0) {
    const auto n = ::pwrite(fd_, in, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw_errno(fmt::format("cannot write {} bytes at offset {} of", size, offset), path_, errno);
    }
    in += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void PosixFile::sync() const {
  if (::fdatasync(fd_) != 0) {
    throw_errno("cannot flush", path_, errno);
  }
}

void PosixFile::start_writeback(std::uint64_t offset, std::uint64_t size) const noexcept {
  if (fd_ >= 0 && size > 0) {
    (void)::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(size), SYNC_FILE_RANGE_WRITE);
  }
}

void PosixFile::close() {
  const int fd = std::exchange(fd_, -1);
  if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) {
    throw_errno("cannot close", path_, errno);
  }
}

void PosixFile::reset() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void sync_directory(const std::filesystem::path& directory) {
  PosixFile dir(directory.empty() ? std::filesystem::path(".") : directory, O_RDONLY | O_DIRECTORY);
  if (::fsync(dir.fd()) != 0 && errno != EINVAL) {
    throw_errno("cannot flush directory", directory, errno);
  }
}

namespace {

FileIdentity identity_of_stat(const struct stat& st) {
  return {.exists = true,
          .device = static_cast<std::uint64_t>(st.st_dev),
          .inode = static_cast<std::uint64_t>(st.st_ino),
          .size = static_cast<std::uint64_t>(st.st_size),
          .modified_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
          .changed_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec};
}

}  // namespace

FileIdentity identity_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return {};
    }
    throw_errno("cannot stat", path, errno);
  }
  return identity_of_stat(st);
}

FileIdentity copy_to_new_file(const std::filesystem::path& from, const std::filesystem::path& to, DirectIo direct) {
  const PosixFile in(from, O_RDONLY, direct);
  PosixFile out(to, O_WRONLY | O_CREAT | O_EXCL);
  struct stat st {};
  if (::fstat(in.fd(), &st) != 0) {
    throw_errno("cannot stat", from, errno);
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::uint64_t done = 0;
  while (done < size) {
    const auto n = ::copy_file_range(in.fd(), nullptr, out.fd(), nullptr, size - done, 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0 && errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
        throw_errno("cannot copy into", to, errno);
      }
      break;  // not supported here, or the file shrank: finish with pread/pwrite
    }
    done += static_cast<std::uint64_t>(n);
  }
  std::vector<std::byte> buffer(std::size_t{1} << 20);
  while (done < size) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), size - done));
    in.read_at(buffer.data(), n, done);
    out.write_at(buffer.data(), n, done);
    done += n;
  }
  out.close();
  return identity_of_stat(st);
}

}  // namespace h5tile::detail
