#include "api/write_checks.hpp"
#include "io/http/url.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "api/held_files.hpp"
#include "api/resolve.hpp"
#include "core/path_status.hpp"
#include "engine/codecs/compression.hpp"
#include "hdf5/file.hpp"
#include "hdf5/links.hpp"
#include "layout/data_files.hpp"
#include "layout/write_plan.hpp"

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

Layout resolved_layout(const WriteOptions& options, bool one_process) noexcept {
  if (options.layout != Layout::Auto) return options.layout;
  if (!one_process) return Layout::Virtual;
  return options.compression.any() || !options.chunk.empty() ? Layout::Chunked : Layout::Contiguous;
}

void check_layout_options(const WriteOptions& options, const fs::path& path, const std::string& dataset) {
  const auto& compression = options.compression;
  if (compression.any() && options.layout == Layout::Contiguous) {
    throw InvalidArgument(
        fmt::format("{}: compression ({}) needs layout 'chunked' or 'virtual': a contiguous "
                    "dataset cannot be filtered",
                    where(path, dataset), to_string(compression)));
  }
  const bool chunks = options.layout == Layout::Chunked || (options.layout == Layout::Virtual && compression.any());
  if (!options.chunk.empty() && !chunks) {
    throw InvalidArgument(
        fmt::format("{}: a chunk shape ({}) is for layout 'chunked' (or 'virtual' with compression), "
                    "not '{}'",
                    where(path, dataset), to_string(options.chunk), layout_name(options.layout)));
  }
  try {
    check_compression(compression);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("{}: {}", where(path, dataset), e.what()));
  }
}

void check_chunks_in_tiles(const std::vector<Box>& boxes, const Shape& chunk, const Shape& shape, const fs::path& path,
                           const std::string& dataset) {
  for (const auto& box : boxes) {
    if (box.count() == 0) continue;
    for (std::size_t a = 0; a < chunk.size(); ++a) {
      const auto end = box.offset[a] + box.extent[a];
      if (box.offset[a] % chunk[a] != 0 || (end % chunk[a] != 0 && end != shape[a])) {
        throw InvalidArgument(
            fmt::format("{}: tile {} does not start and end on the chunk boundaries of chunk {} along axis {}: "
                        "compressed chunks are written whole by the rank that holds them, so each must lie in one "
                        "tile (give a chunk shape that divides the tiles)",
                        where(path, dataset), to_string(box), to_string(chunk), a));
      }
    }
  }
}

void check_not_remote(const fs::path& path) {
  // Location::of refuses "gs://b/x.h5", which written as a local path would make the folders "gs:/b" here.
  if (const auto file = Location::of(path, Location::Use::Write); file.remote()) {
    throw InvalidArgument(
        fmt::format("cannot write '{}': remote writes are not supported yet (write a local file)", file.shown()));
  }
}

bool is_object_target(const fs::path& path) {
  const auto file = Location::of(path, Location::Use::Write);
  if (!file.remote()) return false;
  const auto url = parse_url(file.text());
  if (!url || url->scheme != "s3") {
    throw InvalidArgument(
        fmt::format("cannot write '{}': remote writes go to s3:// URLs only (HTTP(S) and WebHDFS have no "
                    "standard multipart upload); write a local file or an s3:// object",
                    file.shown()));
  }
  return true;
}

void check_object_target(const fs::path& path, Layout layout, Mode mode, const std::string& dataset) {
  const auto shown = Location::of(path, Location::Use::Write).shown();
  if (layout != Layout::Contiguous && layout != Layout::Chunked && layout != Layout::Virtual) {
    throw InvalidArgument(fmt::format(
        "cannot write '{}' to '{}': layout '{}' cannot be uploaded; an object is written as one self-contained "
        "file (layout 'contiguous' or 'chunked'), or as tile objects and a virtual dataset (layout 'virtual')",
        dataset, shown, layout_name(layout)));
  }
  if (layout == Layout::Virtual) {
    // The tile objects' names hold the key and the dataset's name; the virtual dataset refers to
    // them by relative names, in which a reader takes '?' or '#' for a query or a fragment.
    const auto url = parse_url(path.native());
    const auto key = url ? std::string_view(url->path) : std::string_view();
    if (key.find_first_of("?#") != std::string_view::npos || dataset.find_first_of("?#") != std::string::npos) {
      throw InvalidArgument(fmt::format(
          "cannot write '{}' to '{}': layout 'virtual' names its tile objects after the key and the dataset, and a "
          "'?' or '#' in either would not be found again by readers; use other names, or layout 'contiguous' "
          "or 'chunked'",
          dataset, shown));
    }
  }
  if (mode == Mode::Append) {
    throw InvalidArgument(
        fmt::format("cannot add '{}' to '{}': an object is written whole, and mode 'a' changes a file in place "
                    "(write a local file, or write every dataset to the object at once)",
                    dataset, shown));
  }
}

void configure_object_write(WriteConfig& config, const Shape& shape, const Shape& chunk, std::size_t elem_size) {
  config.remote = remote_options();
  Shape stored = shape;
  for (std::size_t a = 0; a < chunk.size() && a < stored.size(); ++a) {
    stored[a] = (stored[a] + chunk[a] - 1) / chunk[a] * chunk[a];
  }
  const auto bytes = element_count(stored) * elem_size;
  config.object_bytes = bytes + bytes / 64 + (std::uint64_t{64} << 20);
}

std::string checked_dataset_name(const std::string& dataset, const fs::path& path, bool object) {
  if (!object) check_not_remote(path);  // before the name: a URL is named only redacted
  try {
    return normalize_dataset_name(dataset);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(
        fmt::format("cannot write '{}': {}", object ? redacted(path.native()) : path.string(), e.what()));
  }
}

DatasetHandle open_dataset_to_change(hid_t file, const std::string& name, const fs::path& path) {
  const auto opening = open_options(ReadOptions{});
  const GuardedLinks links(external_link_check(Location::local(path), opening.allow_external, opening.ext_prefix));
  return open_dataset(file, name, path, links);
}

void check_target(const fs::path& path, Mode mode, const std::string& dataset) {
  if (path.empty()) {
    throw InvalidArgument("the file path is empty");
  }
  check_not_remote(path);
  flush_held(path);  // a file this process holds for writing: its changes are in it before it is copied or replaced
  std::error_code ec;
  // A symbolic-link loop is an IoError (ELOOP) naming it: the rename at the end would otherwise
  // replace the link without a word. Other errors (a name too long, a folder on the way that
  // cannot be searched) are reported by the step of the write that fails on them, naming it.
  fs::file_status status(fs::file_type::not_found);
  try {
    status = status_of(path, "cannot write");
  } catch (const IoError& e) {
    if (e.error_number() == ELOOP) {
      throw;
    }
  }
  if (fs::is_directory(status)) {
    throw IsADirectory(fmt::format("cannot write '{}': it is a directory", path.string()));
  }
  if (path.native().back() == '/') {
    throw IsADirectory(
        fmt::format("cannot write '{}': a name ending in '/' names a folder; give a file name such "
                    "as '{}data.h5'",
                    path.string(), path.string()));
  }
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device, a FIFO or a socket: the rename at the end would replace it (as root, /dev/null).
    check_replaceable_path(path);
  }
  if (fs::exists(status)) {
    if (mode == Mode::Exclusive) {
      throw FileExists(fmt::format("cannot write '{}': the file exists (mode Exclusive)", path.string()));
    }
    if (mode == Mode::Append) {
      // Read-only: the write replaces the file (a rename), never changes it in place, and a
      // read-write open would (HDF5 rewrites its superblock), under the feet of a pending write
      // of the same file that copied it. Write permission is still asked, as h5py's append asks it.
      if (::access(path.c_str(), W_OK) != 0) {
        const int err = errno;
        throw IoError(fmt::format("cannot open '{}': {}", path.string(), std::strerror(err)), err);
      }
      const auto file = open_local_file(path);  // throws NotHdf5File, IoError
      check_replaceable(file.get(), dataset, path);
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

void create_parent_folders(const fs::path& target) {
  const auto folder = fs::absolute(target).parent_path();
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) {
    throw IoError(
        fmt::format("cannot create the folder '{}' for '{}': {}", folder.string(), target.string(), ec.message()),
        ec.value());
  }
}

std::vector<Box> split_for_ranks(const Shape& shape, unsigned ranks, std::uint64_t align_rows) {
  if (shape.empty() || element_count(shape) == 0) {
    return {Box::whole(shape)};
  }
  if (align_rows > 1) {
    const auto wanted = std::max(1U, ranks);
    const auto blocks = (shape[0] + align_rows - 1) / align_rows;
    const auto rows = std::max<std::uint64_t>(1, (blocks + wanted - 1) / wanted) * align_rows;
    std::vector<Box> boxes;
    for (std::uint64_t start = 0; start < shape[0]; start += rows) {
      auto box = Box::whole(shape);
      box.offset[0] = start;
      box.extent[0] = std::min(rows, shape[0] - start);
      boxes.push_back(std::move(box));
    }
    return boxes;
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

Shape chunk_for(const Shape& requested, const Shape& shape, const Shape& first_tile, std::size_t elem_size,
                const std::filesystem::path& path, const std::string& dataset, std::uint64_t max_bytes) {
  constexpr std::uint64_t kMaxChunkBytes = (std::uint64_t{1} << 32) - 1;  // HDF5's limit
  if (!requested.empty()) {
    if (requested.size() != shape.size()) {
      throw InvalidArgument(fmt::format("{}: chunk {} has {} axes but the dataset has {} (shape {})",
                                        where(path, dataset), to_string(requested), requested.size(), shape.size(),
                                        to_string(shape)));
    }
    std::uint64_t bytes = elem_size;
    for (std::size_t a = 0; a < shape.size(); ++a) {
      if (requested[a] == 0 || requested[a] > std::max<std::uint64_t>(1, shape[a])) {
        throw InvalidArgument(fmt::format("{}: chunk {} must be positive and at most the shape {} on every axis",
                                          where(path, dataset), to_string(requested), to_string(shape)));
      }
      bytes = bytes > kMaxChunkBytes / requested[a] ? kMaxChunkBytes + 1 : bytes * requested[a];
    }
    if (bytes > kMaxChunkBytes) {
      throw InvalidArgument(fmt::format("{}: chunk {} holds more than HDF5's limit of 4 GiB - 1 bytes",
                                        where(path, dataset), to_string(requested)));
    }
    return requested;
  }
  Shape chunk = first_tile;
  for (auto& c : chunk) c = std::max<std::uint64_t>(1, c);
  return halved_to_fit(std::move(chunk), elem_size, max_bytes);
}

Shape halved_to_fit(Shape shape, std::size_t elem_size, std::uint64_t max_bytes) {
  // Bytes, saturated: a shape of 2^64 bytes or more is halved like any other too large.
  const auto bytes = [&] {
    std::uint64_t n = elem_size;
    for (const auto e : shape) {
      if (e == 0) return std::uint64_t{0};
      n = n > std::numeric_limits<std::uint64_t>::max() / e ? std::numeric_limits<std::uint64_t>::max() : n * e;
    }
    return n;
  };
  for (std::size_t a = 0; a < shape.size() && bytes() > max_bytes;) {
    if (shape[a] <= 1) {
      ++a;
      continue;
    }
    shape[a] = (shape[a] + 1) / 2;
  }
  return shape;
}

}  // namespace h5tile::detail

namespace h5tile {

std::string check_dataset_name(const std::string& dataset) { return detail::normalize_dataset_name(dataset); }

std::string_view layout_name(Layout layout) noexcept {
  switch (layout) {
    case Layout::Auto: return "auto";
    case Layout::Virtual: return "virtual";
    case Layout::Contiguous: return "contiguous";
    case Layout::Chunked: return "chunked";
  }
  return "?";
}

Layout layout_from_name(std::string_view name) {
  for (const auto layout : {Layout::Auto, Layout::Virtual, Layout::Contiguous, Layout::Chunked}) {
    if (layout_name(layout) == name) {
      return layout;
    }
  }
  throw InvalidArgument(fmt::format("layout must be 'auto', 'virtual', 'contiguous' or 'chunked', not '{}'", name));
}

}  // namespace h5tile
