#include "api/write_checks.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/file.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

void check_array(const ArrayView& array, const fs::path& path, const std::string& dataset) {
  const auto count = element_count(array.shape);
  if (count > 0 && array.data == nullptr) {
    throw InvalidArgument(
        fmt::format("{}: the array of shape {} has no data pointer", where(path, dataset), to_string(array.shape)));
  }
  if (!array.byte_strides.empty() && array.byte_strides.size() != array.shape.size()) {
    throw InvalidArgument(fmt::format("{}: the array has {} axes but {} strides", where(path, dataset),
                                      array.shape.size(), array.byte_strides.size()));
  }
  if (count > std::numeric_limits<std::uint64_t>::max() / array.dtype.size()) {
    throw InvalidArgument(fmt::format("{}: an array of shape {} and dtype {} has more than 2^64 bytes",
                                      where(path, dataset), to_string(array.shape), array.dtype.name()));
  }
}

void check_tile(const Tile& tile, const Shape& shape, const fs::path& path, const std::string& dataset) {
  check_array(tile.data, path, dataset);
  if (tile.data.shape != tile.box.extent) {
    throw InvalidArgument(fmt::format("{}: tile {} has data of shape {}, not {}", where(path, dataset),
                                      to_string(tile.box), to_string(tile.data.shape), to_string(tile.box.extent)));
  }
  if (!tile.box.fits(shape)) {
    throw InvalidArgument(fmt::format("{}: tile {} does not fit the dataset of shape {}", where(path, dataset),
                                      to_string(tile.box), to_string(shape)));
  }
}

Coverage coverage_of(const std::vector<Box>& boxes, const Shape& shape, std::size_t max_overlaps) {
  // Sorted by first-axis offset, a box can only overlap the boxes that start before it ends.
  std::vector<std::size_t> order(boxes.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  if (!shape.empty()) {
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return boxes[a].offset[0] < boxes[b].offset[0]; });
  }
  Coverage result;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& box = boxes[order[i]];
    result.covered += box.count();
    for (std::size_t j = i + 1; j < order.size() && result.overlaps.size() < max_overlaps; ++j) {
      const auto& other = boxes[order[j]];
      if (!shape.empty() && other.offset[0] >= box.offset[0] + box.extent[0]) {
        break;
      }
      if (box.overlaps(other) || shape.empty()) {  // two 0-d boxes are the same element
        result.overlaps.emplace_back(box, other);
      }
    }
  }
  return result;
}

void check_coverage(const std::vector<Box>& boxes, const Shape& shape, const fs::path& path,
                    const std::string& dataset) {
  const auto coverage = coverage_of(boxes, shape, 1);
  if (!coverage.overlaps.empty()) {
    const auto& [box, other] = coverage.overlaps.front();
    throw InvalidArgument(
        fmt::format("{}: tiles {} and {} overlap", where(path, dataset), to_string(box), to_string(other)));
  }
  const auto total = element_count(shape);
  if (coverage.covered != total) {
    throw InvalidArgument(
        fmt::format("{}: the tiles cover {} of the {} elements of shape {}; every element "
                    "must be in exactly one tile",
                    where(path, dataset), coverage.covered, total, to_string(shape)));
  }
}

void check_target(const fs::path& path, Mode mode) {
  if (path.empty()) {
    throw InvalidArgument("the file path is empty");
  }
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (fs::is_directory(status)) {
    throw IsADirectory(fmt::format("cannot write '{}': it is a directory", path.string()));
  }
  if (fs::exists(status)) {
    if (mode == Mode::Exclusive) {
      throw FileExists(fmt::format("cannot write '{}': the file exists (mode Exclusive)", path.string()));
    }
    if (mode == Mode::Append) {
      (void)open_file(path, true);  // throws NotHdf5File, IoError
    }
  }
  // The nearest existing ancestor must be a writable folder.
  auto folder = fs::absolute(path).parent_path();
  while (!fs::exists(folder, ec) && folder.has_parent_path() && folder != folder.parent_path()) {
    folder = folder.parent_path();
  }
  if (!fs::is_directory(folder, ec)) {
    throw InvalidArgument(fmt::format("cannot write '{}': '{}' is not a folder", path.string(), folder.string()));
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;
    throw IoError(fmt::format("cannot write '{}': folder '{}': {}", path.string(), folder.string(), std::strerror(err)),
                  err);
  }
}

std::vector<Box> split_for_ranks(const Shape& shape, unsigned ranks) {
  if (shape.empty() || element_count(shape) == 0) {
    return {Box::whole(shape)};
  }
  const auto n = std::min<std::uint64_t>(std::max(1U, ranks), shape[0]);
  std::vector<Box> boxes;
  for (std::uint64_t r = 0; r < n; ++r) {
    auto box = Box::whole(shape);
    // The first shape[0] % n boxes take one row more.
    const auto rows = shape[0] / n;
    const auto extra = shape[0] % n;
    box.offset[0] = r * rows + std::min(r, extra);
    box.extent[0] = rows + (r < extra ? 1 : 0);
    boxes.push_back(std::move(box));
  }
  return boxes;
}

}  // namespace h5tile::detail
