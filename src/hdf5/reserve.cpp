#include "hdf5/reserve.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/file.hpp"

namespace h5tile::detail {

int hdf5_descriptor(hid_t object) {
  const Hdf5Lock lock;
  const FileHandle file(check(H5Iget_file_id(object), "H5Iget_file_id"));
  const PlistHandle fapl(check(H5Fget_access_plist(file.get()), "H5Fget_access_plist"));
  if (H5Pget_driver(fapl.get()) != H5FD_SEC2) return -1;
  void* handle = nullptr;
  check(H5Fget_vfd_handle(file.get(), fapl.get(), &handle), "H5Fget_vfd_handle");
  return *static_cast<const int*>(handle);
}

namespace {

// Free space past which a write's reservation is not made (see the constructor).
constexpr std::uint64_t kPlentyOfRoom = 256ULL << 20;

bool cannot_reserve(int err) { return err == EOPNOTSUPP || err == ENOSYS || err == EINVAL; }

}  // namespace

SpaceReservation::SpaceReservation(hid_t object, std::uint64_t bytes)
    : SpaceReservation(bytes == 0 ? -1 : hdf5_descriptor(object), bytes == 0 ? std::string() : file_name_of(object),
                       bytes) {}

SpaceReservation::SpaceReservation(int fd, const std::string& name, std::uint64_t bytes) {
  if (fd < 0 || bytes == 0) return;
  // Where the filesystem has room to spare, nothing is reserved (an append a row at a time would
  // pay for a reservation and its return each call): only a disk close to full is reserved on.
  struct statvfs fs {};
  if (::fstatvfs(fd, &fs) == 0 && fs.f_bavail > (kPlentyOfRoom + 4 * bytes) / std::max<std::uint64_t>(fs.f_frsize, 1)) {
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  const auto start = static_cast<std::uint64_t>(st.st_size);
  if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(start), static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    if (cannot_reserve(err)) return;
    throw IoError(fmt::format("cannot change '{}' in place: {} (reserving {} bytes for the chunks this write "
                              "stores, before HDF5 changes any)",
                              name, std::strerror(err), bytes),
                  err);
  }
  fd_ = fd;
  end_ = start + bytes;
}

SpaceReservation::~SpaceReservation() {
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0 || static_cast<std::uint64_t>(st.st_size) >= end_) return;
  // What the writes did not use goes back to the filesystem (a reservation past the end would
  // otherwise stay the file's until it is truncated).
  (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size,
                    static_cast<off_t>(end_ - static_cast<std::uint64_t>(st.st_size)));
}

}  // namespace h5tile::detail
