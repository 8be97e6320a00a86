#include "hdf5/chunk_btree.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_set>

namespace h5tile::detail {
namespace {

constexpr std::uint64_t kUndefined = std::numeric_limits<std::uint64_t>::max();  // HDF5's HADDR_UNDEF
constexpr unsigned kLayoutMessage = 0x0008;
constexpr unsigned kContinuationMessage = 0x0010;
constexpr std::size_t kMostHeaderBlocks = 4096;  // an object header's continuation blocks (a loop: damage)

// HDF5 stores integers little-endian.
std::uint64_t little_endian(const std::byte* p, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = bytes; i-- > 0;) value = (value << 8) | static_cast<std::uint64_t>(p[i]);
  return value;
}

// An address of `bytes` bytes, the undefined one (all bits set) as kUndefined whatever its width.
std::uint64_t address_at(const std::byte* p, std::size_t bytes) {
  const auto value = little_endian(p, bytes);
  return bytes < 8 && value == (std::uint64_t{1} << (8 * bytes)) - 1 ? kUndefined : value;
}

// The `size` bytes at `address` (from the base), whole inside the file; nullopt otherwise.
std::optional<std::vector<std::byte>> read_bytes(const ReadAt& read, const ChunkBtreeFormat& format,
                                                 std::uint64_t address, std::uint64_t size) {
  const auto end = format.file_size;
  if (format.base > end || address > end - format.base || size > end - format.base - address) return std::nullopt;
  std::vector<std::byte> bytes(size);
  if (!read(format.base + address, bytes)) return std::nullopt;
  return bytes;
}

// The index address in the data of a data layout message: version 3, class 2 (chunked), the
// dimensionality and sizes of `format.chunk`; nullopt for any other.
std::optional<std::uint64_t> layout_index(std::span<const std::byte> message, const ChunkBtreeFormat& format) {
  const std::size_t dims = format.chunk.size();
  const std::size_t a = format.address_bytes;
  if (message.size() < 3 || message[0] != std::byte{3} || message[1] != std::byte{2} ||
      static_cast<std::size_t>(message[2]) != dims || message.size() < 3 + a + 4 * dims) {
    return std::nullopt;
  }
  for (std::size_t d = 0; d < dims; ++d) {
    if (little_endian(message.data() + 3 + a + 4 * d, 4) != format.chunk[d]) return std::nullopt;
  }
  return address_at(message.data() + 3, a);
}

// An object header's block of messages: where it lies (an address) and its size.
struct HeaderBlock {
  std::uint64_t address;
  std::uint64_t size;
};

}  // namespace

std::optional<std::uint64_t> chunk_index_address(std::uint64_t header, const ReadAt& read,
                                                 const ChunkBtreeFormat& format) {
  // The prefix: 16 bytes in version 1; in version 2 at most 4 + 2 + 16 + 4 + 8.
  constexpr std::uint64_t kLongestPrefix = 34;
  if (format.base > format.file_size || header >= format.file_size - format.base) return std::nullopt;
  const auto prefix =
      read_bytes(read, format, header, std::min(kLongestPrefix, format.file_size - format.base - header));
  if (!prefix || prefix->size() < 16) return std::nullopt;
  const std::byte* p = prefix->data();
  const bool version2 = std::memcmp(p, "OHDR", 4) == 0;
  std::vector<HeaderBlock> blocks;
  std::size_t message_head = 8;  // version 1: type (2), size (2), flags (1), reserved (3)
  if (version2) {
    if (p[4] != std::byte{2}) return std::nullopt;
    const auto flags = static_cast<unsigned>(p[5]);
    std::size_t at = 6;
    if ((flags & 0x20U) != 0) at += 16;  // access, modification, change and birth times
    if ((flags & 0x10U) != 0) at += 4;   // attribute storage phase change values
    const std::size_t width = std::size_t{1} << (flags & 0x03U);
    if (prefix->size() < at + width) return std::nullopt;
    blocks.push_back({header + at + width, little_endian(p + at, width)});
    message_head = (flags & 0x04U) != 0 ? 6 : 4;  // type (1), size (2), flags (1), creation order (2)
  } else if (p[0] == std::byte{1}) {
    blocks.push_back({header + 16, little_endian(p + 8, 4)});
  } else {
    return std::nullopt;
  }
  std::optional<std::uint64_t> index;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (b >= kMostHeaderBlocks) return std::nullopt;
    const auto bytes = read_bytes(read, format, blocks[b].address, blocks[b].size);
    if (!bytes) return std::nullopt;
    std::size_t at = 0;
    std::size_t end = bytes->size();
    if (version2 && b > 0) {  // "OCHK", the messages, a checksum
      if (end < 8 || std::memcmp(bytes->data(), "OCHK", 4) != 0) return std::nullopt;
      at = 4;
      end -= 4;
    }
    while (end - at >= message_head) {  // a gap smaller than a message's head ends a block
      const std::byte* m = bytes->data() + at;
      const auto type = version2 ? static_cast<unsigned>(m[0]) : static_cast<unsigned>(little_endian(m, 2));
      const auto size = static_cast<std::size_t>(little_endian(m + (version2 ? 1 : 2), 2));
      at += message_head;
      if (size > end - at) return std::nullopt;
      const std::span<const std::byte> data(bytes->data() + at, size);
      if (type == kLayoutMessage) {
        if (index) return std::nullopt;  // two layouts
        index = layout_index(data, format);
        if (!index) return std::nullopt;
      } else if (type == kContinuationMessage) {
        if (size < format.address_bytes + format.length_bytes) return std::nullopt;
        blocks.push_back({little_endian(data.data(), format.address_bytes),
                          little_endian(data.data() + format.address_bytes, format.length_bytes)});
      }
      at += size;
    }
  }
  return index;
}

std::optional<std::vector<std::pair<Shape, StoredChunk>>> chunk_btree_chunks(std::uint64_t root, const ReadAt& read,
                                                                             const ChunkBtreeFormat& format,
                                                                             const ReadAhead& ahead) {
  std::vector<std::pair<Shape, StoredChunk>> chunks;
  if (root == kUndefined) return chunks;         // no chunk written yet
  const std::size_t dims = format.chunk.size();  // the dataset's rank, and one for the element's bytes
  if (dims < 2 || format.max_entries == 0) return std::nullopt;
  for (const auto d : format.chunk) {
    if (d == 0) return std::nullopt;
  }
  const std::size_t rank = dims - 1;
  const std::size_t a = format.address_bytes;
  const std::size_t head = 8 + 2 * a;    // "TREE", type, level, entries, left and right siblings
  const std::size_t key = 8 + 8 * dims;  // chunk size (4), filter mask (4), offsets (8 each)
  const std::size_t entry = key + a;     // a key, then its child
  const std::uint64_t most_nodes = format.file_size / (head + key) + 1;
  // HDF5 finds a chunk by a search from the root: in each node, the child i whose keys bound it,
  // key i <= chunk < key i + 1, comparing the keys' offsets divided by the chunk's shape
  // (H5D__btree_cmp3, in the order of the axes: row-major, the element's axis last; its case for
  // one axis is the same order where only the last key has a non-zero element offset). A chunk
  // listed here must be the one that search finds, or HDF5 would read the fill value where h5tile
  // read the chunk: every node's keys increase, and each chunk lies within the bounds that the
  // keys of every node above it give its subtree.
  struct Pending {
    std::uint64_t address;
    int level;  // what its parent says it must be; -1 for the root
    Shape low;  // the subtree's bounds, low <= chunk < high (empty: none)
    Shape high;
  };
  std::unordered_set<std::uint64_t> seen;
  std::vector<Shape> keys;
  std::vector<Pending> below;
  // Reads `node`: its children into `below` (in order), or its chunks into `chunks`; false where it
  // does not read as the format says.
  const auto visit = [&](const Pending& node) {
    if (!seen.insert(node.address).second || seen.size() > most_nodes) return false;
    const auto top = read_bytes(read, format, node.address, head);
    if (!top || std::memcmp(top->data(), "TREE", 4) != 0 || (*top)[4] != std::byte{1}) return false;
    const auto level = static_cast<int>((*top)[5]);
    const auto entries = static_cast<std::size_t>(little_endian(top->data() + 6, 2));
    if ((node.level >= 0 && (level != node.level || entries == 0)) || entries > format.max_entries) return false;
    const auto body = read_bytes(read, format, node.address + head, entries * entry + key);
    if (!body) return false;
    // The keys as HDF5 compares them: each offset divided by the chunk's extent on its axis.
    keys.assign(entries + 1, Shape(dims));
    for (std::size_t i = 0; i <= entries; ++i) {
      const std::byte* k = body->data() + i * entry;
      for (std::size_t d = 0; d < dims; ++d) {
        const auto offset = little_endian(k + 8 + 8 * d, 8);
        // A chunk's key: on the chunk grid, the element's offset 0 (the last key, a bound only, may differ).
        if (i < entries && (offset % format.chunk[d] != 0 || (d == rank && offset != 0))) return false;
        keys[i][d] = offset / format.chunk[d];
      }
      if (i > 0 && !(keys[i - 1] < keys[i])) return false;
    }
    const auto child = [&](std::size_t i) { return address_at(body->data() + i * entry + key, a); };
    if (level > 0) {  // each child's bounds: its keys here, within this node's own
      for (std::size_t i = 0; i < entries; ++i) {
        below.push_back({child(i), level - 1, node.low.empty() ? keys[i] : std::max(node.low, keys[i]),
                         node.high.empty() ? keys[i + 1] : std::min(node.high, keys[i + 1])});
      }
      return true;
    }
    for (std::size_t i = 0; i < entries; ++i) {
      if ((!node.low.empty() && keys[i] < node.low) || (!node.high.empty() && !(keys[i] < node.high))) {
        return false;  // outside what the keys above it bound: HDF5's search would not find it
      }
      const std::byte* k = body->data() + i * entry;
      const auto at = child(i);
      if (at == kUndefined || at > std::numeric_limits<std::uint64_t>::max() - format.base) return false;
      Shape origin(rank);
      for (std::size_t d = 0; d < rank; ++d) origin[d] = keys[i][d] * format.chunk[d];
      // A record past the end of the file is kept: ChunkDirectory refuses it, naming the chunk.
      chunks.emplace_back(std::move(origin), StoredChunk{format.base + at, little_endian(k, 4),
                                                         static_cast<unsigned>(little_endian(k + 4, 4))});
    }
    return true;
  };
  // A level at a time, each level's nodes in order, so that the leaves' chunks come in order. Every
  // node of a tree is as large as 2K children make it: a level can be read ahead, in windows of at
  // most ahead.most_bytes, each just before its nodes are read (a reader that keeps fewer bytes
  // than a level would have dropped its first nodes before they are read).
  const std::uint64_t node_bytes = head + std::uint64_t{format.max_entries} * entry + key;
  const std::size_t window = ahead.most_bytes == 0
                                 ? std::numeric_limits<std::size_t>::max()
                                 : static_cast<std::size_t>(std::max<std::uint64_t>(1, ahead.most_bytes / node_bytes));
  std::vector<Pending> level_nodes{{root, -1, {}, {}}};
  std::vector<std::pair<std::uint64_t, std::uint64_t>> extents;
  while (!level_nodes.empty()) {
    below.clear();
    for (std::size_t first = 0; first < level_nodes.size(); first += std::min(window, level_nodes.size() - first)) {
      const auto last = first + std::min(window, level_nodes.size() - first);
      if (ahead.fetch && last - first > 1) {
        extents.clear();
        const auto room = format.file_size - format.base;  // format.base <= file_size: the root was read
        for (auto n = first; n < last; ++n) {
          const auto address = level_nodes[n].address;
          if (address < room) extents.emplace_back(format.base + address, std::min(node_bytes, room - address));
        }
        ahead.fetch(extents);
      }
      for (auto n = first; n < last; ++n) {
        if (!visit(level_nodes[n])) return std::nullopt;
      }
    }
    level_nodes.swap(below);
  }
  return chunks;
}

}  // namespace h5tile::detail
