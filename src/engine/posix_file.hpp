#pragma once
// A move-only file descriptor and whole-buffer pread/pwrite that retry short transfers.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <utility>

namespace h5tile::detail {

class PosixFile {
 public:
  PosixFile() = default;
  // Opens `path` with open(2) `flags` (O_CLOEXEC is added). Throws IoError naming the path.
  PosixFile(const std::filesystem::path& path, int flags, unsigned mode = 0666);
  PosixFile(PosixFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}
  PosixFile& operator=(PosixFile&& other) noexcept;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;
  ~PosixFile() { reset(); }

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  // Reads exactly `size` bytes at `offset`; a file that ends first is an IoError.
  void read_at(void* buffer, std::size_t size, std::uint64_t offset) const;
  // Writes exactly `size` bytes at `offset`.
  void write_at(const void* buffer, std::size_t size, std::uint64_t offset) const;
  // fdatasync(2).
  void sync() const;
  // Closes, reporting a close(2) error (which can carry a deferred write error).
  void close();
  void reset() noexcept;

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// fsync(2) on a directory, so that a rename inside it survives a crash.
void sync_directory(const std::filesystem::path& directory);

// Copies `from` into a new file `to`, which must not exist (not even as a symbolic link:
// O_CREAT | O_EXCL). The new file's mode is 0666 less the umask.
void copy_to_new_file(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace h5tile::detail
