#pragma once
// Tile checksums: XXH64 of a region of a file, read back right after it was written (while
// its bytes are still in the page cache), and again when a file is verified.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "io/byte_source.hpp"
#include "io/posix/posix_file.hpp"

namespace h5tile::detail {

// `file`: a local file or a remote object (io/byte_source.hpp).
[[nodiscard]] std::uint64_t checksum_region(const ByteSource& file, std::uint64_t offset, std::uint64_t bytes);

// checksum_region(file, offset, bytes) of a region that is being written, computed while it is
// written: the writers report each range of the region once its bytes are written (written()),
// and the writer that finds the next bytes of the region complete reads them back from `file`
// and hashes them, in order, while the others write on (no thread waits for another). The
// digest is of the file's bytes as read back after they were written, not of the memory they
// were written from, exactly as checksum_region reads them once the write is done.
class RegionChecksum {
 public:
  // `file` (open for reading the same inode that is written) must outlive this object.
  RegionChecksum(const PosixFile& file, std::uint64_t offset, std::uint64_t bytes);
  RegionChecksum(const RegionChecksum&) = delete;
  RegionChecksum& operator=(const RegionChecksum&) = delete;
  ~RegionChecksum();

  // [begin, end) of the file is written (the part outside the region is ignored). Call only
  // once every byte of the range is written; thread-safe. May read back and hash (then it
  // throws what the read throws).
  void written(std::uint64_t begin, std::uint64_t end);
  // Once every writer is done: hashes what is left of the region (reported or not) and returns
  // the digest. Throws RuntimeError where an earlier read back failed.
  [[nodiscard]] std::uint64_t finish();

 private:
  void hash(std::uint64_t from, std::uint64_t to);

  const PosixFile& file_;
  std::uint64_t end_;
  std::mutex mutex_;
  std::uint64_t hashed_;                          // under mutex_: the region is hashed up to here
  std::map<std::uint64_t, std::uint64_t> ready_;  // under mutex_: written ranges not hashed yet
  bool busy_ = false;                             // under mutex_: a thread is hashing
  bool broken_ = false;                           // under mutex_: a read back failed
  struct State;
  std::unique_ptr<State> state_;  // the hash and its read buffer: used by the busy thread only
};

// A tile file's identity: XXH64 of every byte of the file outside its data, [offset, offset +
// data_bytes), together with those numbers and the file's size. A file with the identity that
// was recorded when the tile was written holds the same HDF5 metadata (superblock, object
// headers), so HDF5 finds in it the same dataset, of the same type and shape, with its bytes at
// `offset`: reading them with pread reads what HDF5 would. A file of the same size with other
// contents (another dtype, zeros, another tile) has another identity. nullopt where the data
// does not lie inside the file, or where what lies outside it exceeds 64 MiB (h5tile's tiles
// hold a few KiB of metadata).
[[nodiscard]] std::optional<std::uint64_t> tile_identity(const ByteSource& file, std::uint64_t offset,
                                                         std::uint64_t data_bytes, std::uint64_t file_size);

}  // namespace h5tile::detail
