#include "layout/open_dataset.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/checksum.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/remote_driver.hpp"
#include "hdf5/types.hpp"
#include "layout/boxes.hpp"
#include "layout/opener.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

OpenDataset::OpenDataset(const Location& location, const std::string& dataset, const OpenOptions& options,
                         FileHandle file)
    : opened_(open_to_read(location, dataset, options, std::move(file))) {}

namespace {

// The remote object that `source` reads (the byte source of h5tile's HDF5 driver under it), or
// nullptr for a local one.
std::shared_ptr<const ByteSource> remote_object_of(const Source& source) {
  const ThroughHdf5* hdf5 = std::get_if<ThroughHdf5>(&source.access);
  std::shared_ptr<const ByteSource> file;
  if (const auto* raw = std::get_if<RawBytes>(&source.access)) file = raw->file;
  if (const auto* chunks = std::get_if<RawChunks>(&source.access)) file = chunks->file;
  if (const auto* filtered = std::get_if<FilteredChunks>(&source.access)) file = filtered->file;
  if (file) return file->remote() ? file : nullptr;
  return hdf5 != nullptr ? remote_source_holding(hdf5->dataset.get()) : nullptr;
}

}  // namespace

bool OpenDataset::pinned_remote() const {
  if (!opened_.location.remote() || opened_.sources.empty()) return false;
  const auto file = remote_file();
  return file && file->pinned() && std::all_of(opened_.sources.begin(), opened_.sources.end(), [](const auto& source) {
           const auto object = source ? remote_object_of(*source) : nullptr;
           return object && object->pinned();
         });
}

std::shared_ptr<const ByteSource> OpenDataset::remote_file() const {
  return remote_source_holding(opened_.dataset.get());
}

void OpenDataset::drop_remote_blocks() const {
  drop_cached_blocks(opened_.dataset.get());
  for (const auto& source : opened_.sources) {
    if (!source) continue;
    const ThroughHdf5* hdf5 = std::get_if<ThroughHdf5>(&source->access);
    if (const auto* chunks = std::get_if<RawChunks>(&source->access)) hdf5 = &chunks->hdf5;
    if (const auto* filtered = std::get_if<FilteredChunks>(&source->access)) hdf5 = &filtered->hdf5;
    if (hdf5 != nullptr && hdf5->dataset) drop_cached_blocks(hdf5->dataset.get());
  }
}

void OpenDataset::check_checksums(const Box& region, unsigned threads) const {
  std::vector<const Mapping*> touched;
  for (const auto& m : opened_.mappings) {
    if (m.checksum && (region.rank() == 0 || intersect(m.dst, region))) touched.push_back(&m);
  }
  parallel_for(touched.size(), threads, [&](std::size_t i) {
    const auto& m = *touched[i];
    const auto& file = opened_.sources[m.source]->file;
    const auto* tile = std::get_if<TableTile>(&opened_.sources[m.source]->access);
    // A tile held open is checked in the file its reads read, and so is a remote object.
    const auto object = remote_object_of(*opened_.sources[m.source]);
    std::optional<PosixFile> opened;
    const ByteSource& tile_file = object ? *object
                                  : tile != nullptr && tile->held
                                      ? *tile->held
                                      : opened.emplace(file, O_RDONLY | O_NONBLOCK, opened_.options.direct_reads);
    if (checksum_region(tile_file, m.raw_offset, m.dst.count() * opened_.info.dtype.size()) != *m.checksum) {
      throw VirtualSourceError(
          fmt::format("{}: tile '{}' (mapped to {}) fails its checksum: its bytes changed since "
                      "they were written",
                      where(opened_.location.path(), opened_.name), file.string(), to_string(m.dst)));
    }
  });
}

void OpenDataset::walk_chunk_indexes() const {
  for (const auto& source : opened_.sources) {
    const ThroughHdf5* hdf5 = std::get_if<ThroughHdf5>(&source->access);
    if (const auto* chunks = std::get_if<RawChunks>(&source->access)) hdf5 = &chunks->hdf5;
    if (const auto* filtered = std::get_if<FilteredChunks>(&source->access)) hdf5 = &filtered->hdf5;
    if (hdf5 != nullptr && !source->chunk.empty()) {
      (void)count_chunks(hdf5->dataset.get());
    }
  }
}

bool OpenDataset::hdf5_decodes() const {
  return std::any_of(opened_.sources.begin(), opened_.sources.end(), [](const auto& source) {
    const auto* hdf5 = std::get_if<ThroughHdf5>(&source->access);
    return hdf5 != nullptr && detail::hdf5_decodes(hdf5->dataset.get());
  });
}

std::optional<std::vector<fs::path>> OpenDataset::kept_files() const {
  if (!opened_.files_known || opened_.options.metadata_only || opened_.options.hold_tiles > 0) return std::nullopt;
  return opened_.kept_files;
}

namespace {

// `box` cut along `axis` at the boundaries of `chunk` into pieces of as many chunk layers as fit
// `task_bytes` (one at least).
std::vector<Box> chunk_aligned_pieces(const Box& box, const Shape& chunk, std::size_t axis, std::size_t es,
                                      std::uint64_t task_bytes) {
  const auto step = chunk[axis];
  std::uint64_t layer_bytes = step * es;  // one layer of chunks along `axis`, as read
  for (std::size_t a = 0; a < box.rank(); ++a) {
    if (a != axis) layer_bytes *= box.extent[a];
  }
  const auto per_piece = std::max<std::uint64_t>(1, task_bytes / std::max<std::uint64_t>(layer_bytes, 1));
  std::vector<Box> pieces;
  const auto end = box.offset[axis] + box.extent[axis];
  for (auto lo = box.offset[axis]; lo < end;) {
    const auto hi = std::min((lo / step + per_piece) * step, end);
    Box piece = box;
    piece.offset[axis] = lo;
    piece.extent[axis] = hi - lo;
    pieces.push_back(std::move(piece));
    lo = hi;
  }
  return pieces;
}

}  // namespace

std::vector<ReadTask> OpenDataset::plan(const Box& region, std::size_t task_bytes, bool bounded) const {
  std::vector<ReadTask> tasks;
  const auto es = opened_.info.dtype.size();
  // The parts of the region each mapping supplies: where mappings overlap, only what no later
  // mapping maps too (HDF5 reads them in order: the last one's value stands).
  std::vector<std::pair<const Mapping*, Box>> parts;
  for (std::size_t k = 0; k < opened_.mappings.size(); ++k) {
    const auto& m = opened_.mappings[k];
    const auto part = region.rank() == 0 ? std::optional<Box>(region) : intersect(m.dst, region);
    if (!part) {
      continue;
    }
    if (!opened_.overlapping || region.rank() == 0) {
      parts.emplace_back(&m, *part);
      continue;
    }
    std::vector<Box> left{*part};
    for (const auto later : opened_.later_overlaps[k]) {
      if (left.empty()) break;
      std::vector<Box> rest;
      for (const auto& box : left) {
        for (auto& piece : subtract(box, opened_.mappings[later].dst)) rest.push_back(std::move(piece));
      }
      left = std::move(rest);
    }
    for (auto& box : left) parts.emplace_back(&m, std::move(box));
  }
  for (const auto& [mapping, part] : parts) {
    const auto& m = *mapping;
    // Source box of the part, and the part relative to the region.
    Box src = part;
    Box dst = part;
    for (std::size_t a = 0; a < region.rank(); ++a) {
      src.offset[a] = m.src.offset[a] + (part.offset[a] - m.dst.offset[a]);
      dst.offset[a] = part.offset[a] - region.offset[a];
    }
    const auto& source = *opened_.sources[m.source];
    std::vector<Box> pieces;
    if (!source.chunk.empty() && src.rank() > 0) {
      // Chunked: slabs of whole chunk rows along the first axis, so no chunk is read twice, as
      // many rows to a slab as fit the task size (one row at least); a row of chunks larger than
      // that is cut between chunk columns along the second axis (a box of 8 x 8 chunks makes 16
      // tasks for 16 threads, not 8: each decodes its own chunks).
      for (auto& slab : chunk_aligned_pieces(src, source.chunk, 0, es, task_bytes)) {
        if (bounded) {
          for (auto& bounded_piece : split_rowmajor(slab, es, task_bytes)) pieces.push_back(std::move(bounded_piece));
        } else if (slab.rank() > 1 && byte_count(slab.extent, es) > task_bytes) {
          for (auto& piece : chunk_aligned_pieces(slab, source.chunk, 1, es, task_bytes))
            pieces.push_back(std::move(piece));
        } else {
          pieces.push_back(std::move(slab));
        }
      }
    } else {
      pieces = split_rowmajor(src, es, task_bytes);
    }
    for (auto& piece : pieces) {
      Box piece_dst = piece;
      for (std::size_t a = 0; a < piece.rank(); ++a) {
        piece_dst.offset[a] = dst.offset[a] + (piece.offset[a] - src.offset[a]);
      }
      tasks.push_back({m.source, std::move(piece), std::move(piece_dst)});
    }
  }
  return tasks;
}

void OpenDataset::fill(std::byte* out, std::uint64_t count) const {
  std::vector<std::byte> value(opened_.info.dtype.size());
  fill_value(opened_.dataset.get(), opened_.memory_type.get(), value.data());
  for (std::uint64_t i = 0; i < count; ++i) {
    std::memcpy(out + i * value.size(), value.data(), value.size());
  }
}

void OpenDataset::check_fits(const Box& region) const {
  if (!region.fits(opened_.info.shape)) {
    throw InvalidArgument(fmt::format("region {} does not fit {} of shape {}", to_string(region),
                                      where(opened_.location.path(), opened_.name), to_string(opened_.info.shape)));
  }
}

void OpenDataset::require_fixed_size() const {
  if (opened_.info.dtype.kind() == DTypeKind::VarString) {
    throw UnsupportedType(
        fmt::format("{} holds variable-length strings ({}), which read_strings() reads (in Python, "
                    "from_file and read_box return them as object arrays of bytes)",
                    where(opened_.location.path(), opened_.name), opened_.info.charset));
  }
}

std::vector<std::string> OpenDataset::read_strings(const Box& region) const {
  if (opened_.info.dtype.kind() != DTypeKind::VarString) {
    throw UnsupportedType(fmt::format("{} holds {}, not variable-length strings: read it with from_file or read_box",
                                      where(opened_.location.path(), opened_.name), opened_.info.dtype.name()));
  }
  check_fits(region);
  return hdf5_read_strings(opened_.dataset.get(), opened_.memory_type.get(), region);
}

Array OpenDataset::read(const Box& region, unsigned threads, int device, Progress* progress) const {
  require_fixed_size();
  check_fits(region);
  Array out(opened_.info.dtype, region.extent, device);
  read_into(region, out.data(), device, threads, progress);
  return out;
}

void OpenDataset::read_into(const Box& region, std::byte* out, int device, unsigned threads, Progress* progress) const {
  require_fixed_size();
  check_fits(region);
  if (opened_.options.verify_checksums) {
    check_checksums(region, threads);
  }
  if (device >= 0) {
    read_to_device(region, out, device, threads, progress);
    return;
  }
  // Tasks of the task size, smaller where that would leave threads idle (a 64 MiB block
  // of from_file_batched on 16 threads: 4 MiB each), never under 1 MiB.
  // Data outside the page cache may be read as one stream instead (H5TILE_COLD_READS).
  const std::uint64_t task_size = opened_.options.task_size;
  const auto shape = shape_read(
      region, threads,
      plan(region,
           std::clamp<std::uint64_t>(byte_count(region.extent, opened_.info.dtype.size()) / std::max(threads, 1U),
                                     std::min<std::uint64_t>(task_size, 1U << 20), task_size)));
  const auto& tasks = shape.tasks;
  std::uint64_t covered = 0;
  for (const auto& task : tasks) {
    covered += task.dst.count();
  }
  if (covered < region.count()) {
    fill(out, region.count());  // a virtual dataset with regions no source maps (never one from
                                // from_tile_index, whose tiles cover it exactly once)
  }
  parallel_for(tasks.size(), shape.threads, [&](std::size_t i) {
    const auto& task = tasks[i];
    opened_.sources[task.source]->read(task.src, out, region.extent, task.dst);
    if (progress != nullptr) progress->add(task.dst.count() * opened_.info.dtype.size());
  });
}

}  // namespace h5tile::detail
