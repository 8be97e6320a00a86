#pragma once
// Blocks of a byte source kept in memory, for HDF5's metadata reads of a remote object: HDF5
// reads its metadata in pieces of a few hundred bytes, each of which would otherwise be a round
// trip. Reads are served from whole blocks of `block_size` (the missing blocks of one read are
// fetched in one request); reads of at least two blocks go to the source directly (HDF5 reading
// data itself: compact, converted, external), uncached. Beside the blocks it keeps extents fetched
// ahead of HDF5 (prefetch: the nodes of a B-tree, a level at a time), which serve any read inside one.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "io/byte_source.hpp"
#include "io/remote_options.hpp"

namespace h5tile::detail {

class BlockCache {
 public:
  // Keeps at most `max_bytes` of blocks (at least two), dropping the least recently used.
  BlockCache(std::shared_ptr<const ByteSource> source, std::uint64_t block_size, std::uint64_t max_bytes);
  // Reads exactly `size` bytes at `offset` (throws as the source does). Thread-safe.
  void read(void* out, std::size_t size, std::uint64_t offset);

  struct Extent {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
  };
  // Reads each of `extents` (inside the source) that is not kept yet, side by side through `run`:
  // neighbours less than 256 KiB apart in one request of at most a block, or, where the extents lie
  // in a few blocks not cached, those blocks; extents inside cached blocks come from there. Keeps
  // them for later reads: up to as many bytes as the blocks, the oldest dropped first. Returns the
  // bytes of each extent, empty where its read failed: these are reads ahead of need, and the read
  // that needs the bytes fetches them again and reports the failure. Thread-safe; not to be
  // called with `run` empty.
  [[nodiscard]] std::vector<std::vector<std::byte>> prefetch(std::span<const Extent> extents, const RunParallel& run);
  [[nodiscard]] const std::shared_ptr<const ByteSource>& source() const noexcept { return source_; }
  // Lets go of every block and extent kept (later reads fetch them again). Thread-safe.
  void clear();

 private:
  using Block = std::vector<std::byte>;
  const Block& block(std::uint64_t index);              // with mutex_ held; it must be cached
  void fetch(std::uint64_t first, std::uint64_t last);  // blocks [first, last], missing ones
  // With mutex_ held: `out` = bytes [offset, offset + size) where the blocks holding them are
  // cached; false (`out` unspecified) where one is not.
  bool copy_from_blocks(Block& out, std::uint64_t offset, std::uint64_t size) const;

  std::shared_ptr<const ByteSource> source_;
  std::uint64_t block_size_;
  std::size_t max_blocks_;
  std::mutex mutex_;
  std::list<std::uint64_t> recent_;  // most recent first
  std::unordered_map<std::uint64_t, std::pair<Block, std::list<std::uint64_t>::iterator>> blocks_;
  // Extents fetched ahead, by offset (they never overlap), and their offsets oldest first.
  std::map<std::uint64_t, Block> extents_;
  std::deque<std::uint64_t> extents_order_;
  std::uint64_t extent_bytes_ = 0;
};

}  // namespace h5tile::detail
