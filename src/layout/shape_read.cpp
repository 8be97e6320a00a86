// OpenDataset::shape_read: whether a large read of local files runs as warm data is read (one
// task per worker) or as one stream of few readers with large requests in file order, the
// pattern that reads data outside the page cache fastest on disks such as the GPU machines'
// virtual ones (bench/probes/cold_read_shape.py; BENCHMARKS.md).
#include <fcntl.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "layout/open_dataset.hpp"

namespace h5tile::detail {
namespace {

std::uint64_t linear(const Shape& offset, const Shape& shape) {
  std::uint64_t at = 0;
  for (std::size_t a = 0; a < shape.size(); ++a) at = at * shape[a] + offset[a];
  return at;
}

// The file, and its size, whose pages a sample of a source asks about.
struct SampledFile {
  int fd = -1;
  std::uint64_t size = 0;
  PosixFile opened{};  // a tile's file opened for the sample (not held open by the dataset)
};

}  // namespace

std::string OpenDataset::sample_tasks(const std::vector<ReadTask>& tasks, PageSample& sample) const {
  std::vector<bool> touched(opened_.sources.size());
  for (const auto& t : tasks) touched[t.source] = true;
  for (std::size_t s = 0; s < opened_.sources.size(); ++s) {
    if (!touched[s]) continue;
    const auto& access = opened_.sources[s]->access;
    const ByteSource* file = nullptr;
    if (const auto* bytes = std::get_if<RawBytes>(&access)) file = bytes->file.get();
    if (const auto* chunks = std::get_if<RawChunks>(&access)) file = chunks->file.get();
    const auto* tile = std::get_if<TableTile>(&access);
    if (tile == nullptr && (file == nullptr || file->posix_file() == nullptr)) {
      return "a source is compressed, remote or read through HDF5";
    }
    // O_DIRECT reads (H5TILE_DIRECT_IO) need many requests in flight: one stream of them would
    // read at the speed of `dd iflag=direct`.
    const bool direct = tile != nullptr ? (tile->held ? tile->held->bypasses_cache()
                                                      : reads_bypass_cache(tile->direct_reads, tile->file_size))
                                        : file->posix_file()->bypasses_cache();
    if (direct) return "uncached data is read with O_DIRECT (H5TILE_DIRECT_IO)";
  }
  // The first byte of tasks spread evenly over the read, by source.
  std::map<std::size_t, std::vector<std::uint64_t>> offsets;
  const auto n = std::min<std::size_t>(tasks.size(), kColdSamples);
  for (std::size_t k = 0; k < n; ++k) {
    const auto& t = tasks[k * tasks.size() / n];
    const auto& source = *opened_.sources[t.source];
    const auto at = linear(t.src.offset, source.shape) * source.elem_size;
    if (const auto base = source.raw_offset()) {
      offsets[t.source].push_back(*base + at);
    } else if (const auto* chunks = std::get_if<RawChunks>(&source.access)) {
      Shape origin = t.src.offset;
      for (std::size_t a = 0; a < origin.size() && a < source.chunk.size(); ++a) {
        origin[a] = origin[a] / source.chunk[a] * source.chunk[a];
      }
      const auto found = chunks->directory->find({origin});
      if (found && !found->empty() && (*found)[0]) offsets[t.source].push_back((*found)[0]->offset);
    }
  }
  for (const auto& [s, at] : offsets) {
    const auto& source = *opened_.sources[s];
    SampledFile f;
    if (const auto* tile = std::get_if<TableTile>(&source.access)) {
      if (tile->held) {
        f.fd = tile->held->fd();
      } else {
        try {
          f.opened = PosixFile(source.file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
          f.fd = f.opened.fd();
        } catch (const IoError&) {
          continue;  // the read itself says what is wrong with the tile
        }
      }
      f.size = tile->file_size;
    } else {
      const auto* bytes = std::get_if<RawBytes>(&source.access);
      const auto* file =
          bytes != nullptr ? bytes->file->posix_file() : std::get<RawChunks>(source.access).file->posix_file();
      f.fd = file->fd();
      f.size = file->size();
    }
    sample_pages(f.fd, f.size, at, sample);
  }
  return "";
}

OpenDataset::ReadShape OpenDataset::shape_read(const Box& region, unsigned threads, std::vector<ReadTask> tasks) const {
  const auto& cold = opened_.options.cold_reads;
  ReadPatternReport report;
  report.pattern = "parallel";
  report.setting = pattern_name(cold.pattern);
  ReadShape shape{threads, std::move(tasks), false};
  const auto bytes = byte_count(region.extent, opened_.info.dtype.size());
  PageSample sample;
  const auto finish = [&] {
    report.sampled_pages = sample.sampled;
    report.cached_pages = sample.cached;
    report.readers = std::max(1U, std::min<unsigned>(shape.threads, static_cast<unsigned>(shape.tasks.size())));
    std::uint64_t largest = 0;
    for (const auto& t : shape.tasks) largest = std::max(largest, t.dst.count() * opened_.info.dtype.size());
    report.request_bytes = largest;
    note_read_pattern(std::move(report));
    return std::move(shape);
  };
  if (cold.pattern == ColdReads::Pattern::Parallel) {
    report.detection = "not sampled: H5TILE_COLD_READS=parallel";
    return finish();
  }
  if (cold.pattern == ColdReads::Pattern::Auto && bytes < kColdSampleMin) {
    report.detection = fmt::format("not sampled: a read under {} MiB", kColdSampleMin >> 20);
    return finish();
  }
  if (const auto why = sample_tasks(shape.tasks, sample); !why.empty()) {
    report.detection = fmt::format("not sampled: {} (read in parallel)", why);
    return finish();
  }
  const auto found = fmt::format("{} of {} sampled pages cached", sample.cached, sample.sampled);
  if (cold.pattern == ColdReads::Pattern::Auto && !sample.cold()) {
    report.detection = fmt::format("{}: {}", sample.sampled == 0 ? "not sampled" : "warm", found);
    return finish();
  }
  report.detection = cold.pattern == ColdReads::Pattern::Stream ? fmt::format("H5TILE_COLD_READS=stream ({})", found)
                                                                : fmt::format("cold: {}", found);
  report.pattern = "stream";
  shape.stream = true;
  shape.threads = cold.readers;
  shape.tasks = plan(region, cold.request_bytes, true);
  return finish();
}

}  // namespace h5tile::detail
