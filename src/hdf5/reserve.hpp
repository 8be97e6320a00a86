#pragma once
// Disk space reserved past the end of a file before a change in place writes there, so that a
// full disk fails the change before HDF5 frees a chunk's old space or writes part of its new
// bytes (docs/RELIABILITY.md: each chunk wholly old or wholly new).

#include <cstdint>
#include <string>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// `bytes` reserved past the end of the file `object` belongs to (fallocate with
// FALLOC_FL_KEEP_SIZE: the file's size is unchanged), where HDF5 allocates the space of chunks
// that grow or are new; what the writes did not use is given back when the reservation ends.
// Nothing is reserved where the filesystem has plenty of room (256 MiB and four times `bytes`
// free: only another process filling it during the write could then fill it), where the file is
// not HDF5's sec2 driver's, or where its filesystem cannot reserve (the writes then meet a full
// disk themselves).
// What a change may add to a file's metadata beside its chunks (a new node of the chunk index, the
// object header), reserved with them.
inline constexpr std::uint64_t kRoomForTheIndex = 64 * 1024;

// HDF5's descriptor of the file `object` belongs to (not a copy: HDF5's to close), or -1 where
// its driver is not sec2.
[[nodiscard]] int hdf5_descriptor(hid_t object);

class SpaceReservation {
 public:
  // Throws IoError (ENOSPC, naming the file) where the filesystem has not `bytes` free.
  SpaceReservation(hid_t object, std::uint64_t bytes);
  // The same with HDF5's descriptor of the file already known (hdf5_descriptor; -1: none).
  SpaceReservation(int fd, const std::string& name, std::uint64_t bytes);
  SpaceReservation(const SpaceReservation&) = delete;
  SpaceReservation& operator=(const SpaceReservation&) = delete;
  ~SpaceReservation();

 private:
  int fd_ = -1;            // HDF5's descriptor (not ours to close); -1: nothing reserved
  std::uint64_t end_ = 0;  // the end of the reserved range
};

}  // namespace h5tile::detail
