#pragma once
// The chunks of a dataset whose chunk index is a version-1 B-tree (layout message version 3: what
// h5py and HDF5 write by default), listed from the file's bytes in one pass, as HDF5 1.10.10 and
// 1.14's H5Dchunk_iter lists them. For HDF5 releases without H5Dchunk_iter, whose only other way
// is one walk of the whole index per chunk (time in N^2 for N chunks).
//
// The reading follows the file format specification (object header versions 1 and 2 and their
// continuation blocks, the data layout message, B-tree nodes of type 1) and checks what it reads:
// signatures, node types and levels, sizes inside the file, chunk offsets on the chunk grid, every
// node's keys increasing, and each chunk within the bounds that the keys above it give, so that
// HDF5's search of the index (what its reads do) finds every listed chunk where it is listed. It
// knows nothing of HDF5's caches: chunk_directory.cpp takes a listing only where HDF5 agrees with it
// (the number of chunks, and a sample looked up by HDF5 itself).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "hdf5/chunk_directory.hpp"

namespace h5tile::detail {

// Reads the bytes at `offset` in the file (from its first byte, user block included) into `into`,
// whole; false where it cannot (past the end of the file, a failed read).
using ReadAt = std::function<bool(std::uint64_t offset, std::span<std::byte> into)>;

// Reads the extents (file offsets, sizes) ahead of the ReadAt calls that will need them, side by
// side: nodes of one level of a tree, for a file read through requests (a remote object), at most
// `most_bytes` in one call (0: a whole level), what the reader keeps for the calls that follow.
// Reads ahead may fail or be dropped: the ReadAt calls read what they need whatever happened.
struct ReadAhead {
  std::function<void(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& extents)> fetch;
  std::uint64_t most_bytes = 0;
};

// What the file's superblock and the dataset fix, which the bytes do not say again.
struct ChunkBtreeFormat {
  std::size_t address_bytes = 8;  // H5Pget_sizes
  std::size_t length_bytes = 8;
  std::uint64_t base = 0;            // where address 0 lies in the file (the user block's size)
  std::uint64_t file_size = 0;       // bytes
  std::vector<std::uint32_t> chunk;  // the chunk's shape, and the element's size last (as the layout says)
  unsigned max_entries = 0;          // children of a node at most: 2K (H5Pget_istore_k)
};

// The address of the chunk index of the dataset whose object header lies at `header` (an address):
// from its data layout message of version 3, chunked, whose shape must equal `format.chunk`.
// nullopt where the header does not read as one or holds another layout (a version 4 layout,
// whose indexes are others); an index with no chunk yet has the undefined address (all bits set).
[[nodiscard]] std::optional<std::uint64_t> chunk_index_address(std::uint64_t header, const ReadAt& read,
                                                               const ChunkBtreeFormat& format);

// Every chunk under the B-tree node at `root` (an address), in the tree's order (row-major order
// of their first elements): the first element and where the chunk lies (file offsets, the base
// added). nullopt where a node does not read as the format says, or where HDF5's search would not
// find a chunk where the tree holds it.
// The tree is read a level at a time; `ahead` (where it has a fetch) is asked for each level's
// nodes first, a window of them at a time.
[[nodiscard]] std::optional<std::vector<std::pair<Shape, StoredChunk>>> chunk_btree_chunks(
    std::uint64_t root, const ReadAt& read, const ChunkBtreeFormat& format, const ReadAhead& ahead = {});

// chunks_from_file (chunk_directory.hpp) for a file read through `read`, of `file_size` bytes, each
// level of the tree read ahead through `ahead` where given (a remote object's requests side by side).
[[nodiscard]] std::optional<std::vector<std::pair<Shape, StoredChunk>>> chunks_read_through(
    hid_t dataset, const ReadAt& read, std::uint64_t file_size, const ReadAhead& ahead = {});

}  // namespace h5tile::detail
