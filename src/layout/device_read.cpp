// OpenDataset::read_to_device: a read whose destination is CUDA device memory, through the
// bounded staging pipeline, or straight from the file with GPUDirect Storage where it opens.
#include <cstring>

#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "layout/open_dataset.hpp"

namespace h5tile::detail {

namespace {

// True when `box` of a row-major array of `shape` is one contiguous run of elements.
bool contiguous_in(const Box& box, const Shape& shape) {
  std::size_t a = 0;
  while (a < box.rank() && box.extent[a] == 1) ++a;  // leading unit axes
  for (++a; a < box.rank(); ++a) {
    if (box.extent[a] != shape[a]) return false;
  }
  return true;
}

std::uint64_t linear_offset(const Shape& offset, const Shape& shape) {
  std::uint64_t linear = 0;
  for (std::size_t a = 0; a < shape.size(); ++a) linear = linear * shape[a] + offset[a];
  return linear;
}

}  // namespace

void OpenDataset::read_to_device(const Box& region, std::byte* out, int device, unsigned threads,
                                 Progress* progress) const {
  gpu::begin_device_io();
  const auto es = info_.dtype.size();
  const auto tasks = plan(region, options_.staging.piece_bytes, true);
  std::uint64_t covered = 0;
  for (const auto& task : tasks) covered += task.dst.count();
  if (covered < region.count()) {
    // Regions no source maps hold the fill value: assemble on the host, then copy.
    const Array host = read(region, threads, -1);
    const auto pieces = split_rowmajor(Box::whole(region.extent), es, options_.staging.piece_bytes);
    const auto strides = rowmajor_strides(region.extent, es);
    gpu::stage_to_device(
        device, pieces.size(), es,
        [&](std::size_t i) {
          return gpu::DeviceRegion{out + linear_offset(pieces[i].offset, region.extent) * es, strides,
                                   pieces[i].extent};
        },
        [&](std::size_t i, std::byte* staging) {
          std::memcpy(staging, host.data() + linear_offset(pieces[i].offset, region.extent) * es,
                      pieces[i].count() * es);
        },
        threads, options_.staging);
    return;
  }
  // GPUDirect Storage where it opens: a task that is one run in the file and one run in the
  // destination goes straight from the file to the device.
  std::vector<std::unique_ptr<gpu::GdsFile>> gds(sources_.size());
  if (options_.gds == gpu::GdsMode::Off) {
    gpu::note_gds_reason("H5TILE_GDS=off");
  } else {
    bool tried = false;
    for (std::size_t s = 0; s < sources_.size(); ++s) {
      // A tile read by its tile table is read through its checked descriptor (staging).
      if (const auto* bytes = sources_[s]->raw_bytes()) {
        gds[s] = gpu::gds_open(bytes->file, options_.gds);
        tried = true;
      }
    }
    if (!tried) {
      gpu::note_gds_reason(
          "not tried: no source is one run of bytes in a file held open (tiles read by their tile table, chunked, "
          "filtered or converted data go through staging)");
    }
  }
  std::vector<std::size_t> staged;
  std::vector<std::size_t> direct;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    const bool runs = contiguous_in(t.src, sources_[t.source]->shape) && contiguous_in(t.dst, region.extent);
    (gds[t.source] && runs && t.src.rank() > 0 ? direct : staged).push_back(i);
  }
  const auto strides = rowmajor_strides(region.extent, es);
  parallel_for(direct.size(), threads, [&](std::size_t k) {
    const auto& t = tasks[direct[k]];
    const auto& source = *sources_[t.source];
    gds[t.source]->read(out + linear_offset(t.dst.offset, region.extent) * es, t.dst.count() * es,
                        *source.raw_offset() + linear_offset(t.src.offset, source.shape) * es);
    if (progress != nullptr) progress->add(t.dst.count() * es);
  });
  gpu::stage_to_device(
      device, staged.size(), es,
      [&](std::size_t k) {
        const auto& t = tasks[staged[k]];
        return gpu::DeviceRegion{out + linear_offset(t.dst.offset, region.extent) * es, strides, t.dst.extent};
      },
      [&](std::size_t k, std::byte* staging) {
        const auto& t = tasks[staged[k]];
        sources_[t.source]->read(t.src, staging, t.dst.extent, Box::whole(t.dst.extent));
        if (progress != nullptr) progress->add(t.dst.count() * es);
      },
      threads, options_.staging);
  if (!direct.empty()) gpu::note_path(staged.empty() ? "cufile" : "cufile+staging");
}

}  // namespace h5tile::detail
