#include "hdf5/btree_node.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace h5tile::detail {
namespace {

// HDF5 stores integers little-endian.
std::uint64_t little_endian(const std::byte* p, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = bytes; i-- > 0;) value = (value << 8) | static_cast<std::uint64_t>(p[i]);
  return value;
}

constexpr std::size_t kSignature = 4;  // "TREE"
constexpr std::size_t kFixedHead = 8;  // signature, node type, level, entries used (2 bytes)
constexpr unsigned kChunkNode = 1;     // node type 1: raw-data chunks (0: group nodes)
constexpr unsigned kMaxRank = 32;      // HDF5's H5S_MAX_RANK

// The node read with addresses of `address_bytes` and keys of datasets of rank `rank`, or nullopt
// where it does not read as a chunk node that way.
std::optional<ChunkBtreeNode> read_as(std::span<const std::byte> node, std::uint64_t file_size,
                                      std::size_t address_bytes, unsigned rank) {
  const std::size_t dims = rank + 1;  // the offsets of a key: the chunk's, and 0 for the element's bytes
  const std::size_t key_bytes = 8 + 8 * dims;
  const std::size_t head = kFixedHead + 2 * address_bytes;
  // node.size() = head + key_bytes + 2K (address_bytes + key_bytes), K >= 1
  if (node.size() < head + key_bytes) return std::nullopt;
  const std::size_t pairs = node.size() - head - key_bytes;
  const std::size_t pair = address_bytes + key_bytes;
  if (pairs == 0 || pairs % (2 * pair) != 0) return std::nullopt;
  const std::size_t max_children = pairs / pair;
  const auto entries = static_cast<std::size_t>(little_endian(node.data() + 6, 2));
  if (entries == 0 || entries > max_children) return std::nullopt;

  const auto key = [&](std::size_t i) { return node.data() + head + i * pair; };
  const auto offset = [&](std::size_t i, std::size_t d) { return little_endian(key(i) + 8 + 8 * d, 8); };
  ChunkBtreeNode out{.level = static_cast<unsigned>(node[5]), .children = {}};
  out.children.reserve(entries);
  std::unordered_set<std::uint64_t> seen;
  for (std::size_t i = 0; i < entries; ++i) {
    if (offset(i, rank) != 0) return std::nullopt;
    if (i > 0) {
      // The first chunk of each child after the first chunk of the one before (row-major order).
      bool less = false;
      bool equal = true;
      for (std::size_t d = 0; d < rank && equal; ++d) {
        const auto a = offset(i - 1, d);
        const auto b = offset(i, d);
        if (a != b) {
          equal = false;
          less = a < b;
        }
      }
      if (!less) return std::nullopt;
    }
    const auto child = little_endian(key(i) + key_bytes, address_bytes);
    if (child >= file_size || file_size - child < node.size() || !seen.insert(child).second) return std::nullopt;
    out.children.push_back(child);
  }
  return out;
}

}  // namespace

std::optional<ChunkBtreeNode> parse_chunk_btree_node(std::span<const std::byte> node, std::uint64_t file_size) {
  if (node.size() < kFixedHead || std::memcmp(node.data(), "TREE", kSignature) != 0 ||
      static_cast<unsigned>(node[4]) != kChunkNode) {
    return std::nullopt;
  }
  std::optional<ChunkBtreeNode> found;
  for (const std::size_t address_bytes : {std::size_t{8}, std::size_t{4}}) {
    for (unsigned rank = 1; rank <= kMaxRank; ++rank) {
      if (auto node_read = read_as(node, file_size, address_bytes, rank)) {
        if (found) return std::nullopt;  // two readings: not sure which, so none
        found = std::move(node_read);
      }
    }
  }
  return found;
}

}  // namespace h5tile::detail
