#include "io/block_cache.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace h5tile::detail {
namespace {

// Extents read ahead whose gap is at most this join into one request (the gap read and dropped:
// cheaper than a round trip), as the HTTP backend joins the chunks of a read.
constexpr std::uint64_t kPrefetchJoinGap = std::uint64_t{256} << 10;
// Where the extents read ahead lie in at most this many blocks not cached, and in no more blocks
// than they would take requests, the blocks are fetched instead (side by side): the same round
// trip, and what HDF5 reads next near them (a small file's other metadata) is cached too. More
// blocks would cost MiB where the extents need KiB.
constexpr std::size_t kMaxPrefetchBlocks = 4;

}  // namespace

BlockCache::BlockCache(std::shared_ptr<const ByteSource> source, std::uint64_t block_size, std::uint64_t max_bytes)
    : source_(std::move(source)),
      block_size_(std::max<std::uint64_t>(block_size, 4096)),
      max_blocks_(static_cast<std::size_t>(std::max<std::uint64_t>(2, max_bytes / block_size_))) {}

void BlockCache::read(void* out, std::size_t size, std::uint64_t offset) {
  if (size == 0) return;
  {
    const std::lock_guard lock(mutex_);
    if (auto it = extents_.upper_bound(offset); it != extents_.begin()) {
      --it;  // the last extent starting at or before `offset`
      if (offset - it->first <= it->second.size() && size <= it->second.size() - (offset - it->first)) {
        std::memcpy(out, it->second.data() + (offset - it->first), size);
        return;
      }
    }
  }
  if (size >= 2 * block_size_ || offset + size > source_->size() ||  // large, or an error the source reports,
      offset + size <= source_->resident_bytes()) {                  // or held by the source already
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

void BlockCache::clear() {
  const std::lock_guard lock(mutex_);
  blocks_.clear();
  recent_.clear();
  extents_.clear();
  extents_order_.clear();
  extent_bytes_ = 0;
}

bool BlockCache::copy_from_blocks(Block& out, std::uint64_t offset, std::uint64_t size) const {
  const auto first = offset / block_size_;
  const auto last = (offset + size - 1) / block_size_;
  for (auto b = first; b <= last; ++b) {
    if (blocks_.count(b) == 0) return false;
  }
  out.resize(size);
  for (auto b = first; b <= last; ++b) {
    const auto& bytes = blocks_.at(b).first;
    const auto start = b * block_size_;
    const auto from = std::max(offset, start);
    const auto to = std::min<std::uint64_t>(offset + size, start + bytes.size());
    if (to <= from) return false;
    std::memcpy(out.data() + (from - offset), bytes.data() + (from - start), to - from);
  }
  return true;
}

std::vector<std::vector<std::byte>> BlockCache::prefetch(std::span<const Extent> extents, const RunParallel& run) {
  std::vector<Block> got(extents.size());
  std::vector<std::size_t> missing;
  std::vector<std::uint64_t> blocks;  // the blocks not cached that hold the missing extents
  {
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < extents.size(); ++i) {
      const auto& e = extents[i];
      if (e.size == 0 || e.offset > source_->size() || e.size > source_->size() - e.offset) continue;
      if (const auto it = extents_.find(e.offset); it != extents_.end() && it->second.size() >= e.size) {
        got[i].assign(it->second.begin(), it->second.begin() + static_cast<std::ptrdiff_t>(e.size));
      } else if (e.offset + e.size <= source_->resident_bytes()) {
        got[i].resize(e.size);
        source_->read_at(got[i].data(), e.size, e.offset);  // a copy from memory, not a request
      } else if (!copy_from_blocks(got[i], e.offset, e.size)) {
        got[i].clear();
        missing.push_back(i);
        for (auto b = e.offset / block_size_; b <= (e.offset + e.size - 1) / block_size_; ++b) {
          if (blocks_.count(b) == 0 && std::find(blocks.begin(), blocks.end(), b) == blocks.end()) blocks.push_back(b);
          if (blocks.size() > kMaxPrefetchBlocks) break;
        }
      }
    }
  }
  // Neighbours join into one request (a block at most), as the data path joins chunks.
  std::vector<ByteRange> ranges;
  ranges.reserve(missing.size());
  for (const auto i : missing)
    ranges.push_back({extents[i].offset, static_cast<std::size_t>(extents[i].size), nullptr});
  const auto requests = join_ranges(ranges, kPrefetchJoinGap, block_size_);
  if (!blocks.empty() && blocks.size() <= kMaxPrefetchBlocks && blocks.size() <= requests.size()) {
    std::vector<Block> fetched(blocks.size());
    run(blocks.size(), [&](std::size_t k) {
      const auto begin = blocks[k] * block_size_;
      try {
        Block bytes(std::min(source_->size(), begin + block_size_) - begin);
        source_->read_at(bytes.data(), bytes.size(), begin);
        fetched[k] = std::move(bytes);
      } catch (...) {  // left out: the read that needs this block fetches it and reports the failure
      }
    });
    const std::lock_guard lock(mutex_);
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      if (fetched[k].empty() || blocks_.count(blocks[k]) != 0) continue;
      recent_.push_front(blocks[k]);
      blocks_.emplace(blocks[k], std::make_pair(std::move(fetched[k]), recent_.begin()));
    }
    for (const auto i : missing) {
      if (!copy_from_blocks(got[i], extents[i].offset, extents[i].size)) got[i].clear();
    }
    while (blocks_.size() > max_blocks_) {  // the least recently used beyond the limit
      blocks_.erase(recent_.back());
      recent_.pop_back();
    }
    return got;
  }
  run(requests.size(), [&](std::size_t k) {
    const auto& request = requests[k];
    try {
      Block joined(request.size);
      source_->read_at(joined.data(), joined.size(), request.offset);
      for (const auto m : request.members) {
        const auto from = joined.begin() + static_cast<std::ptrdiff_t>(ranges[m].offset - request.offset);
        got[missing[m]].assign(from, from + static_cast<std::ptrdiff_t>(ranges[m].size));
      }
    } catch (...) {  // left empty: the read that needs these bytes makes its own request
    }
  });
  const std::lock_guard lock(mutex_);
  const auto limit = static_cast<std::uint64_t>(max_blocks_) * block_size_;
  for (const auto i : missing) {
    const auto& bytes = got[i];
    if (bytes.empty() || bytes.size() > limit) continue;
    const auto offset = extents[i].offset;
    // An extent overlapping one kept already is left out: kept extents never overlap.
    auto next = extents_.lower_bound(offset);
    if (next != extents_.end() && next->first < offset + bytes.size()) continue;
    if (next != extents_.begin() && std::prev(next)->first + std::prev(next)->second.size() > offset) continue;
    extents_.emplace(offset, bytes);
    extents_order_.push_back(offset);
    extent_bytes_ += bytes.size();
    while (extent_bytes_ > limit) {
      const auto oldest = extents_.find(extents_order_.front());
      extents_order_.pop_front();
      extent_bytes_ -= oldest->second.size();
      extents_.erase(oldest);
    }
  }
  return got;
}

const BlockCache::Block& BlockCache::block(std::uint64_t index) {
  auto& entry = blocks_.at(index);
  recent_.splice(recent_.begin(), recent_, entry.second);
  return entry.first;
}

}  // namespace h5tile::detail
