#pragma once
// A node of a version-1 B-tree of raw-data chunks (the chunk index of HDF5's earliest file format,
// which h5py writes by default), read from its bytes as HDF5 reads them, so that the remote driver
// (hdf5/remote_driver.cpp) can fetch the nodes below it ahead of HDF5's walk, one round trip per
// level instead of one per node. Only the addresses of the children are taken from it: HDF5 still
// reads and checks every node itself.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace h5tile::detail {

struct ChunkBtreeNode {
  unsigned level = 0;                   // 0: a leaf, whose children are chunks
  std::vector<std::uint64_t> children;  // addresses in the file, in the node's order
};

// The node whose bytes are `node`: the whole node, as HDF5 reads it (every node of one tree has the
// same size, 8 + 2A + 2K*A + (2K+1)*R bytes for addresses of A bytes, 2K children at most and keys
// of R = 8 + 8*(rank + 1) bytes). The rank of the dataset, the width of addresses (8 or 4) and K are
// not known here: each layout that the size allows is tried, and a layout is taken only where it is
// the one that reads as a chunk node (every key's last offset 0, the keys of the children in
// increasing order, children distinct, each a whole node inside the `file_size` bytes of the file).
// nullopt where the bytes are not such a node, or where more than one layout fits.
[[nodiscard]] std::optional<ChunkBtreeNode> parse_chunk_btree_node(std::span<const std::byte> node,
                                                                   std::uint64_t file_size);

}  // namespace h5tile::detail
