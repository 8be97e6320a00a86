#include "engine/posix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

[[noreturn]] void throw_errno(const std::string& what, const std::filesystem::path& path, int err) {
  throw IoError(fmt::format("{} '{}': {}", what, path.string(), std::strerror(err)), err);
}

}  // namespace

PosixFile::PosixFile(const std::filesystem::path& path, int flags, unsigned mode) : path_(path) {
  do {
    fd_ = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) {
    throw_errno("cannot open", path, errno);
  }
}

PosixFile& PosixFile::operator=(PosixFile&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

void PosixFile::read_at(void* buffer, std::size_t size, std::uint64_t offset) const {
  auto* out = static_cast<std::byte*>(buffer);
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

void copy_to_new_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  const PosixFile in(from, O_RDONLY);
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
}

}  // namespace h5tile::detail
