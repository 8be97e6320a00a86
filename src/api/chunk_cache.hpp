#pragma once
// Whole decoded chunks of a compressed dataset that a DatasetReader keeps open
// (api/dataset_reader.cpp), so that reads of a part of a chunk each (h5py's habit: a row at a
// time) decode the chunk once rather than once a read, as HDF5's chunk cache does for h5py. The
// cache lives and dies with the open dataset its chunks were read from: whatever lets that go
// (a change of the file, h5tile's own write of the path, close()) drops the chunks with it.

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include <h5tile/array.hpp>
#include <h5tile/io.hpp>

namespace h5tile::detail {

// Bytes of decoded chunks a reader holds, as HDF5 2.0's default chunk cache for each open
// dataset (h5py's rdcc_nbytes; HDF5 1.x: 1 MiB), or one chunk where a chunk is larger, up to
// kLargestCachedChunk.
constexpr std::uint64_t kChunkCacheBytes = std::uint64_t{8} << 20;
// Chunks larger than this are not cached (each read decodes them, as HDF5's cache does with a
// chunk larger than the cache): a File keeps up to 32 readers, each could hold one (a File
// holds at most 32 x 16 MiB, where every dataset is read a part of a large chunk at a time).
constexpr std::uint64_t kLargestCachedChunk = std::uint64_t{16} << 20;

// The bytes of decoded chunks that a reader of the dataset `info` describes may hold: 0 where
// its reads are not cached (not chunked, not filtered, chunks over kLargestCachedChunk).
[[nodiscard]] std::uint64_t chunk_cache_capacity(const DatasetInfo& info);

// The chunk (of shape `chunk`, in a dataset of shape `shape`, clipped to it) that holds the
// whole of `region`; nullopt where `region` is empty or spans chunks.
[[nodiscard]] std::optional<Box> chunk_holding(const Box& region, const Shape& chunk, const Shape& shape);

// Copies `region` (inside `from`) out of `bytes`, the row-major elements of `from`, into `out`,
// the row-major elements of `region`.
void copy_box(const std::byte* bytes, const Box& from, const Box& region, std::size_t element_size, std::byte* out);

// Decoded chunks, keyed by their origin, at most `capacity` bytes of them, the least recently
// used dropped first. Thread-safe: reads copy out of a chunk outside the lock.
class ChunkCache {
 public:
  explicit ChunkCache(std::uint64_t capacity) : capacity_(capacity) {}

  // Copies `region` (inside `chunk`) into `out` where `chunk` is cached; false otherwise.
  bool copy_out(const Box& chunk, const Box& region, std::size_t element_size, std::byte* out);
  // Keeps `decoded`, the elements of `chunk` (host memory), as the most recently used, dropping
  // the least recently used beyond the capacity. A chunk larger than the capacity is not kept;
  // one kept already stays as it is.
  void put(const Box& chunk, std::shared_ptr<const Array> decoded);

  [[nodiscard]] std::uint64_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::uint64_t bytes() const;
  [[nodiscard]] std::size_t chunks() const;

 private:
  struct Entry {
    Box chunk;
    std::shared_ptr<const Array> decoded;
  };
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // the most recently used first
  std::map<Shape, std::list<Entry>::iterator> by_origin_;
  std::uint64_t capacity_;
  std::uint64_t bytes_ = 0;
};

}  // namespace h5tile::detail
