#pragma once
// A move-only file descriptor and whole-buffer pread/pwrite that retry short transfers: the
// local backend of ByteSource (io/byte_source.hpp), and what writes go through.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include <h5tile/settings.hpp>

#include "io/byte_sink.hpp"
#include "io/byte_source.hpp"

namespace h5tile::detail {

// Whether large reads of a file opened read-only take what the page cache lacks with O_DIRECT
// (bypassing the cache: the disk's full speed, no extra copy, nothing evicted): the direct_io
// setting's modes (h5tile/settings.hpp), Auto for files of at least half the machine's memory
// (which would not stay cached anyway), On for every file, Off never.
using DirectIo = settings::DirectIo;

// Whether reads of a regular file of `file_size` bytes bypass the page cache under `mode` on a
// machine with `memory_bytes` of memory (files under 1 MiB never do).
[[nodiscard]] bool reads_bypass_cache(DirectIo mode, std::uint64_t file_size, std::uint64_t memory_bytes) noexcept;
// The same on this machine (its physical memory).
[[nodiscard]] bool reads_bypass_cache(DirectIo mode, std::uint64_t file_size) noexcept;

class PosixFile final : public ByteSource, public ByteSink {
 public:
  PosixFile() = default;
  // Opens `path` with open(2) `flags` (O_CLOEXEC is added). Throws IoError naming the path.
  PosixFile(const std::filesystem::path& path, int flags, unsigned mode = 0666);
  // Opens `path` read-only (`flags` include O_RDONLY) for reads that treat the page cache as
  // `direct` says.
  PosixFile(const std::filesystem::path& path, int flags, DirectIo direct);
  // Takes ownership of `fd`, a descriptor opened read-only elsewhere (named `path` in errors).
  static PosixFile adopt(int fd, const std::filesystem::path& path, DirectIo direct);
  PosixFile(PosixFile&& other) noexcept
      : ByteSource(),
        ByteSink(),
        fd_(std::exchange(other.fd_, -1)),
        path_(std::move(other.path_)),
        direct_(std::move(other.direct_)) {}
  PosixFile& operator=(PosixFile&& other) noexcept;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;
  ~PosixFile() override { reset(); }

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  // Reads exactly `size` bytes at `offset`; a file that ends first is an IoError. A large read
  // of a file opened read-only takes the part the page cache lacks with O_DIRECT where the
  // file's DirectIo says so.
  void read_at(void* buffer, std::size_t size, std::uint64_t offset) const override;
  [[nodiscard]] std::string name() const override { return path_.string(); }
  // fstat(2)'s size now. Throws IoError.
  [[nodiscard]] std::uint64_t size() const override;
  [[nodiscard]] const PosixFile* posix_file() const noexcept override { return this; }
  // Whether large reads take what the page cache lacks with O_DIRECT (DirectIo).
  [[nodiscard]] bool bypasses_cache() const noexcept { return direct_ != nullptr; }
  // Writes exactly `size` bytes at `offset`.
  void write_at(const void* buffer, std::size_t size, std::uint64_t offset) const override;
  // The same open file (the same inode, whatever its path names now) opened anew with `flags`
  // (through /proc/self/fd). Throws IoError when that is not possible.
  [[nodiscard]] PosixFile reopen(int flags) const;
  // fdatasync(2).
  void sync() const override;
  // Asks the kernel to start writing the dirty pages of [offset, offset + size) to the device
  // now (sync_file_range(2), SYNC_FILE_RANGE_WRITE), without waiting for them: a write that
  // ends in sync() then finds most of its bytes on their way already, instead of starting them
  // all there. Only a hint: durability still comes from sync(), which also reports any error
  // of this writeback, so failures here (a file system without it) are ignored.
  void start_writeback(std::uint64_t offset, std::uint64_t size) const noexcept override;
  // Closes, reporting a close(2) error (which can carry a deferred write error).
  void close();
  void reset() noexcept;

 private:
  // Reads with pread(2) only.
  void read_buffered(std::byte* out, std::size_t size, std::uint64_t offset) const;
  // Reads what the page cache holds from it, and the rest with O_DIRECT.
  void read_by_residency(std::byte* out, std::size_t size, std::uint64_t offset) const;
  // Reads with O_DIRECT: straight into `out` where offset and memory line up on 4 KiB (edges
  // buffered), else through an aligned buffer.
  void read_direct(std::byte* out, std::size_t size, std::uint64_t offset) const;
  // Reads with O_DIRECT into a 4 KiB-aligned buffer of the calling thread, copying out.
  void read_direct_bounced(std::byte* out, std::size_t size, std::uint64_t offset) const;
  // For `fd_`, a regular file opened read-only: tells the kernel that reads run in order, and
  // lets read_at bypass the page cache where `direct` says so.
  void prepare_reads(int flags, DirectIo direct);

  int fd_ = -1;
  std::filesystem::path path_;
  struct Direct;                    // the O_DIRECT descriptor, opened at first need
  std::shared_ptr<Direct> direct_;  // set for files opened read-only whose reads bypass the cache
};

// fsync(2) on a directory, so that a rename inside it survives a crash.
void sync_directory(const std::filesystem::path& directory);

// Which file a path names: its device and inode, size and modification and change times. A
// commit renames a new file over its target, so every write of a target changes its identity.
struct FileIdentity {
  bool exists = false;  // false: the path named nothing (the other members are 0)
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;
  std::int64_t changed_ns = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

// The identity of the file `path` names now (following links); `exists` false where it names
// nothing. Throws IoError for other failures of stat(2).
[[nodiscard]] FileIdentity identity_of(const std::filesystem::path& path);

// Copies `from` (read as `direct` says) into a new file `to`, which must not exist (not even as
// a symbolic link: O_CREAT | O_EXCL). The new file's mode is 0666 less the umask. Returns the
// identity of the file copied (the one opened, whatever `from` names afterwards).
FileIdentity copy_to_new_file(const std::filesystem::path& from, const std::filesystem::path& to, DirectIo direct);

}  // namespace h5tile::detail
