// ChunkCache: decoded chunks of a kept dataset, least recently used dropped first.
#include "api/chunk_cache.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace h5tile::detail {

std::uint64_t chunk_cache_capacity(const DatasetInfo& info) {
  if (info.layout != "chunked" || info.filters.empty() || info.chunk.size() != info.shape.size() ||
      info.chunk.empty()) {
    return 0;
  }
  if (std::any_of(info.chunk.begin(), info.chunk.end(), [](auto n) { return n == 0; })) return 0;
  // Counted without overflow: a chunk past the limit on any axis is past it in all.
  std::uint64_t bytes = info.dtype.size();
  for (const auto n : info.chunk) {
    if (n > kLargestCachedChunk || bytes > kLargestCachedChunk / n) return 0;
    bytes *= n;
  }
  return std::max(kChunkCacheBytes, bytes);
}

std::optional<Box> chunk_holding(const Box& region, const Shape& chunk, const Shape& shape) {
  const auto rank = region.rank();
  if (rank == 0 || chunk.size() != rank || shape.size() != rank || region.offset.size() != rank) return std::nullopt;
  Box holding{Shape(rank), Shape(rank)};
  for (std::size_t d = 0; d < rank; ++d) {
    if (region.extent[d] == 0 || chunk[d] == 0) return std::nullopt;
    const auto first = region.offset[d] / chunk[d];
    if ((region.offset[d] + region.extent[d] - 1) / chunk[d] != first) return std::nullopt;
    holding.offset[d] = first * chunk[d];
    holding.extent[d] = std::min(chunk[d], shape[d] - holding.offset[d]);
  }
  return holding;
}

void copy_box(const std::byte* bytes, const Box& from, const Box& region, std::size_t element_size, std::byte* out) {
  const auto rank = region.rank();
  // The innermost axes along which `region` takes all of `from` make one run with the next axis.
  std::size_t inner = rank;  // axes [inner, rank) copied as one run
  std::uint64_t run = element_size;
  while (inner > 0) {
    run *= region.extent[inner - 1];
    --inner;
    if (region.extent[inner] != from.extent[inner]) break;
  }
  // Row-major strides of `from` in bytes.
  std::vector<std::uint64_t> stride(rank, element_size);
  for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * from.extent[d];
  // The runs: every index of the axes before `inner`, in row-major order.
  std::vector<std::uint64_t> index(inner, 0);
  std::uint64_t base = 0;  // where region's first element lies in `from`
  for (std::size_t d = 0; d < rank; ++d) base += (region.offset[d] - from.offset[d]) * stride[d];
  while (true) {
    std::uint64_t at = base;
    for (std::size_t d = 0; d < inner; ++d) at += index[d] * stride[d];
    std::memcpy(out, bytes + at, run);
    out += run;
    std::size_t d = inner;
    while (d > 0 && ++index[d - 1] == region.extent[d - 1]) {
      index[d - 1] = 0;
      --d;
    }
    if (d == 0) return;
  }
}

bool ChunkCache::copy_out(const Box& chunk, const Box& region, std::size_t element_size, std::byte* out) {
  std::shared_ptr<const Array> decoded;
  {
    const std::lock_guard lock(mutex_);
    const auto found = by_origin_.find(chunk.offset);
    if (found == by_origin_.end() || found->second->chunk != chunk) return false;
    entries_.splice(entries_.begin(), entries_, found->second);
    decoded = found->second->decoded;
  }
  copy_box(decoded->data(), chunk, region, element_size, out);  // outside the lock: others copy too
  return true;
}

void ChunkCache::put(const Box& chunk, std::shared_ptr<const Array> decoded) {
  const auto size = decoded->nbytes();
  if (size > capacity_) return;
  const std::lock_guard lock(mutex_);
  if (const auto found = by_origin_.find(chunk.offset); found != by_origin_.end()) {
    entries_.splice(entries_.begin(), entries_, found->second);  // read meanwhile by another thread
    return;
  }
  while (!entries_.empty() && bytes_ + size > capacity_) {
    bytes_ -= entries_.back().decoded->nbytes();
    by_origin_.erase(entries_.back().chunk.offset);
    entries_.pop_back();
  }
  entries_.push_front(Entry{chunk, std::move(decoded)});
  by_origin_.emplace(chunk.offset, entries_.begin());
  bytes_ += size;
}

std::uint64_t ChunkCache::bytes() const {
  const std::lock_guard lock(mutex_);
  return bytes_;
}

std::size_t ChunkCache::chunks() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace h5tile::detail
