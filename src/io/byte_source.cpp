#include "io/byte_source.hpp"

#include <algorithm>
#include <numeric>

namespace h5tile::detail {

void ByteSource::read_ranges(std::span<const ByteRange> ranges) const {
  for (const auto& r : ranges) {
    if (r.size > 0) read_at(r.out, r.size, r.offset);
  }
}

std::vector<JoinedRange> join_ranges(std::span<const ByteRange> ranges, std::uint64_t max_gap,
                                     std::uint64_t max_bytes) {
  std::vector<std::size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ranges[a].offset < ranges[b].offset; });
  std::vector<JoinedRange> joined;
  for (const auto i : order) {
    const auto& r = ranges[i];
    if (r.size == 0) continue;
    const auto end = r.offset + r.size;
    if (!joined.empty()) {
      auto& last = joined.back();
      const auto last_end = last.offset + last.size;
      const auto new_end = std::max(last_end, end);
      if (r.offset <= last_end + max_gap && new_end - last.offset <= max_bytes) {
        last.size = new_end - last.offset;
        last.members.push_back(i);
        continue;
      }
    }
    joined.push_back({r.offset, r.size, {i}});
  }
  return joined;
}

}  // namespace h5tile::detail
