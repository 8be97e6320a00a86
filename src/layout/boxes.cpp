// Arithmetic of boxes (boxes.hpp).
#include "layout/boxes.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace h5tile::detail {

std::optional<Box> intersect(const Box& a, const Box& b) {
  Box out;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    const auto lo = std::max(a.offset[i], b.offset[i]);
    const auto hi = std::min(a.offset[i] + a.extent[i], b.offset[i] + b.extent[i]);
    if (hi <= lo) {
      return std::nullopt;
    }
    out.offset.push_back(lo);
    out.extent.push_back(hi - lo);
  }
  return out;
}

std::vector<Box> subtract(const Box& a, const Box& b) {
  const auto common = intersect(a, b);
  if (!common) return {a};
  std::vector<Box> out;
  Box rest = a;  // narrowed axis by axis to the common part
  for (std::size_t i = 0; i < a.rank(); ++i) {
    const auto lo = rest.offset[i];
    const auto hi = rest.offset[i] + rest.extent[i];
    if (common->offset[i] > lo) {
      Box below = rest;
      below.extent[i] = common->offset[i] - lo;
      out.push_back(std::move(below));
    }
    if (const auto end = common->offset[i] + common->extent[i]; end < hi) {
      Box above = rest;
      above.offset[i] = end;
      above.extent[i] = hi - end;
      out.push_back(std::move(above));
    }
    rest.offset[i] = common->offset[i];
    rest.extent[i] = common->extent[i];
  }
  return out;
}

std::vector<std::vector<std::size_t>> later_overlaps(const std::vector<Box>& boxes) {
  std::vector<std::vector<std::size_t>> later(boxes.size());
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (boxes[i].rank() > 0 && boxes[i].count() > 0) order.push_back(i);
  }
  if (order.size() < 2) return later;
  // Swept along the axis where the boxes start at the most places (tiles along any one axis then
  // cost N log N): each box against those that start before it ends there.
  const auto rank = boxes[order[0]].rank();
  std::size_t axis = 0;
  std::size_t most = 0;
  for (std::size_t a = 0; a < rank; ++a) {
    std::vector<std::uint64_t> starts;
    starts.reserve(order.size());
    for (const auto i : order) starts.push_back(boxes[i].offset[a]);
    std::sort(starts.begin(), starts.end());
    const auto distinct = static_cast<std::size_t>(std::unique(starts.begin(), starts.end()) - starts.begin());
    if (distinct > most) {
      most = distinct;
      axis = a;
    }
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return boxes[x].offset[axis] < boxes[y].offset[axis]; });
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& a = boxes[order[i]];
    for (std::size_t j = i + 1; j < order.size() && boxes[order[j]].offset[axis] < a.offset[axis] + a.extent[axis];
         ++j) {
      if (!intersect(a, boxes[order[j]])) continue;
      const auto [first, second] = std::minmax(order[i], order[j]);
      later[first].push_back(second);
    }
  }
  for (auto& list : later) std::sort(list.begin(), list.end());
  return later;
}

std::vector<Box> chunks_touching(const Box& box, const Shape& chunk) {
  if (box.count() == 0) {
    return {};  // an empty box touches no chunk, even one it starts inside
  }
  const auto rank = box.rank();
  Shape first(rank);
  Shape count(rank);
  for (std::size_t a = 0; a < rank; ++a) {
    const auto end = box.offset[a] + box.extent[a];  // at most the shape's (the box fits it)
    first[a] = box.offset[a] / chunk[a];
    count[a] = end / chunk[a] + (end % chunk[a] != 0 ? 1 : 0) - first[a];
  }
  const auto total = element_count(count);
  std::vector<Box> chunks;
  chunks.reserve(total);
  for (std::uint64_t i = 0; i < total; ++i) {
    Box c{Shape(rank), chunk};
    for (std::size_t a = rank, rest = i; a-- > 0; rest /= count[a]) {
      c.offset[a] = (first[a] + rest % count[a]) * chunk[a];
    }
    chunks.push_back(std::move(c));
  }
  return chunks;
}

bool same_but_unit_axes(const Shape& a, const Shape& b) {
  const auto without_ones = [](const Shape& s) {
    Shape out;
    for (const auto n : s) {
      if (n != 1) out.push_back(n);
    }
    return out;
  };
  return without_ones(a) == without_ones(b);
}

}  // namespace h5tile::detail
