#pragma once
// h5tile's read-only HDF5 virtual file driver: HDF5 reads a remote object's metadata (and any
// data it reads itself) through a byte source (io/byte_source.hpp) and a block cache, so that
// opening a dataset costs few round trips. Registered with HDF5 once; works with HDF5 1.10
// through 1.14 (their driver structures differ).

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "hdf5/handle.hpp"
#include "io/byte_source.hpp"
#include "io/remote_options.hpp"

namespace h5tile::detail {

// Opens `source` in HDF5, read-only, through the driver with blocks of `block_size` bytes
// (at most `cache_bytes` of them kept). The name HDF5 gives the file is source->name(). Any
// other file that HDF5 would open with the same access properties (an external link, a virtual
// source) is refused by the driver: only the object itself is read. With `run`, the nodes of a
// chunk index (v1 B-tree) are fetched a level at a time, side by side through `run`, when HDF5
// reads the node above them. Throws what the source throws (FileNotFound, IoError), NotHdf5File.
[[nodiscard]] FileHandle open_remote_file(std::shared_ptr<const ByteSource> source, std::uint64_t block_size,
                                          std::uint64_t cache_bytes, RunParallel run = {});

// The byte source that the driver reads `object`'s file through, or nullptr where that file is
// not read by the driver.
[[nodiscard]] std::shared_ptr<const ByteSource> remote_source_holding(hid_t object);

// Reads of `object`'s file through the driver's block cache, where the driver reads that file,
// valid while the file stays open: `read` exactly the bytes asked (false where that failed), `ahead`
// the extents (offsets, sizes) side by side into the cache (nothing where the driver was given no way
// to run reads side by side), and the object's size.
struct CachedReads {
  std::function<bool(std::uint64_t offset, std::span<std::byte> into)> read;
  std::function<void(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& extents)> ahead;
  std::uint64_t ahead_bytes = 0;  // at most this much read ahead in one call: half what the cache keeps
  std::uint64_t size = 0;
};
[[nodiscard]] std::optional<CachedReads> cached_reads_of(hid_t object);

// Lets go of the blocks the driver keeps of `object`'s file (its metadata, read while opening):
// for a remote file kept open long after, whose later reads need little or none of it (a read
// fetches again what it needs). Nothing for a file the driver does not read.
void drop_cached_blocks(hid_t object);

// The exception that the driver's last failed read on this thread raised (and forgets it), or
// nullptr: what an HDF5 call that failed on it throws, rather than HDF5's own account.
[[nodiscard]] std::exception_ptr take_driver_failure() noexcept;

}  // namespace h5tile::detail
