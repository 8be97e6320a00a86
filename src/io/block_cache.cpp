#include "io/block_cache.hpp"

#include <algorithm>
#include <cstring>

namespace h5tile::detail {

BlockCache::BlockCache(std::shared_ptr<const ByteSource> source, std::uint64_t block_size, std::uint64_t max_bytes)
    : source_(std::move(source)),
      block_size_(std::max<std::uint64_t>(block_size, 4096)),
      max_blocks_(static_cast<std::size_t>(std::max<std::uint64_t>(2, max_bytes / block_size_))) {}

void BlockCache::read(void* out, std::size_t size, std::uint64_t offset) {
  if (size == 0) return;
  if (size >= 2 * block_size_ || offset + size > source_->size()) {  // large, or an error the source reports
    source_->read_at(out, size, offset);
    return;
  }
  const auto first = offset / block_size_;
  const auto last = (offset + size - 1) / block_size_;
  const std::lock_guard lock(mutex_);
  fetch(first, last);
  auto* to = static_cast<std::byte*>(out);
  for (auto b = first; b <= last; ++b) {
    const auto& bytes = block(b);
    const auto start = b * block_size_;
    const auto from = std::max(offset, start);
    const auto to_end = std::min<std::uint64_t>(offset + size, start + bytes.size());
    if (to_end <= from) break;  // past the end: the source's read_at said so already
    std::memcpy(to + (from - offset), bytes.data() + (from - start), to_end - from);
  }
}

void BlockCache::fetch(std::uint64_t first, std::uint64_t last) {
  const auto size = source_->size();
  auto b = first;
  while (b <= last) {
    if (blocks_.count(b) != 0) {
      ++b;
      continue;
    }
    auto end = b;  // a run of missing blocks: one request
    while (end + 1 <= last && blocks_.count(end + 1) == 0) ++end;
    const auto begin_byte = b * block_size_;
    const auto end_byte = std::min(size, (end + 1) * block_size_);
    if (end_byte <= begin_byte) {
      // Past the end of the object: let the source say so.
      std::byte dummy{};
      source_->read_at(&dummy, 1, begin_byte);
    }
    std::vector<std::byte> run(end_byte - begin_byte);
    source_->read_at(run.data(), run.size(), begin_byte);
    for (auto i = b; i <= end; ++i) {
      const auto from = (i - b) * block_size_;
      if (from >= run.size()) break;
      const auto n = std::min<std::uint64_t>(block_size_, run.size() - from);
      Block bytes(run.begin() + static_cast<std::ptrdiff_t>(from), run.begin() + static_cast<std::ptrdiff_t>(from + n));
      recent_.push_front(i);
      blocks_.emplace(i, std::make_pair(std::move(bytes), recent_.begin()));
    }
    b = end + 1;
  }
  // Drop the least recently used beyond the limit, never the blocks of this read.
  while (blocks_.size() > max_blocks_) {
    const auto victim = recent_.back();
    if (victim >= first && victim <= last) break;
    recent_.pop_back();
    blocks_.erase(victim);
  }
}

const BlockCache::Block& BlockCache::block(std::uint64_t index) {
  auto& entry = blocks_.at(index);
  recent_.splice(recent_.begin(), recent_, entry.second);
  return entry.first;
}

}  // namespace h5tile::detail
