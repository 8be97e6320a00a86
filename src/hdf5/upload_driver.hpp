#pragma once
// h5tile's upload driver: HDF5 builds a file whose bytes go into an object being uploaded
// (io/object_upload.hpp) rather than a local file. HDF5's metadata stays in memory (held parts)
// until the upload finishes, as it may be written again; raw data written through HDF5 (compressed
// chunks) goes out as its parts fill, as the ranks' own raw bytes do. Works with HDF5 1.10 through
// 1.14.

#include <memory>

#include "hdf5/handle.hpp"
#include "io/object_upload.hpp"

namespace h5tile::detail {

// Creates the file of `upload` (empty) with the file access `fapl` (write_access) put on the
// upload driver. The name HDF5 gives it is upload->name().
[[nodiscard]] FileHandle create_upload_file(const std::shared_ptr<ObjectUpload>& upload, hid_t fapl);
// Opens the file of `upload` again (created by create_upload_file and closed), read-write or
// read-only, with the file access `fapl` (read-only: H5P_DEFAULT will do).
[[nodiscard]] FileHandle open_upload_file(const std::shared_ptr<ObjectUpload>& upload, hid_t fapl, bool writable);

// While one is alive, the raw data HDF5 writes on this thread does not reach the upload: the
// placeholders that give a chunk its place in the file, whose bytes another rank then writes.
class SkippedRawWrites {
 public:
  SkippedRawWrites() noexcept;
  SkippedRawWrites(const SkippedRawWrites&) = delete;
  SkippedRawWrites& operator=(const SkippedRawWrites&) = delete;
  ~SkippedRawWrites();
};

}  // namespace h5tile::detail
