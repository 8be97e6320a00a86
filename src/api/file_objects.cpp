// register_memory_file, register_descriptor_file, unregister_file: files that are not at a path
// (h5tile.File over a Python file-like object), read through the byte-source seam as the
// python:// objects io/remote.hpp gives.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>

#include "io/memory_source.hpp"
#include "io/posix/posix_file.hpp"
#include "io/remote.hpp"

namespace h5tile {
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

void register_memory_file(const std::string& name, std::vector<std::byte> contents) {
  register_source(name, std::make_shared<const MemorySource>(name, std::move(contents)));
}

void register_descriptor_file(const std::string& name, int fd) {
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    const int err = errno != 0 ? errno : EINVAL;
    throw IoError(fmt::format("cannot read '{}' by its file descriptor {}: not a regular file", name, fd), err);
  }
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    const int err = errno;
    throw IoError(fmt::format("cannot duplicate file descriptor {} of '{}': {}", fd, name, std::strerror(err)), err);
  }
  register_source(name, std::make_shared<const PosixFile>(PosixFile::adopt(own, name, DirectIo::Off)));
}

void unregister_file(const std::string& name) { unregister_source(name); }

}  // namespace h5tile
