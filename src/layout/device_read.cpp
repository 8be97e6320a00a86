// OpenDataset::read_to_device: a read whose destination is CUDA device memory, through the
// bounded staging pipeline, straight from the file with GPUDirect Storage where it opens, or, for
// compressed chunks, decoded on the GPU (gpu/decode.hpp) where it can.
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "gpu/decode.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
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

// The names of the filters that a source's chunks went through ("shuffle, deflate"), "" for none.
std::string filter_names(const Source& source) {
  if (const auto* filtered = std::get_if<FilteredChunks>(&source.access)) {
    return fmt::format("{}", fmt::join(filtered->pipeline->names(), ", "));
  }
  if (const auto* hdf5 = std::get_if<ThroughHdf5>(&source.access); hdf5 != nullptr && !source.chunk.empty()) {
    std::vector<std::string> names;
    for (const auto& f : chunk_filters(hdf5->dataset.get(), hdf5->memory_type.get()).filters) {
      names.push_back(filter_name(f.id));
    }
    return fmt::format("{}", fmt::join(names, ", "));
  }
  return "";
}

// "nvcomp", "cpu", "nvcomp+cpu" or "".
std::string decoder_name(bool gpu, bool cpu) {
  if (gpu) return cpu ? "nvcomp+cpu" : "nvcomp";
  return cpu ? "cpu" : "";
}

}  // namespace

std::optional<gpu::DecodeRequest> OpenDataset::gpu_decoding(std::size_t s, const std::vector<std::size_t>& maps,
                                                            const Box& region, std::string& why_not) const {
  const auto& source = *sources_[s];
  why_not.clear();
  if (maps.empty() || region.rank() == 0) return std::nullopt;
  const auto* filtered = std::get_if<FilteredChunks>(&source.access);
  if (filtered == nullptr) {
    if (const auto names = filter_names(source); !names.empty()) {
      why_not = fmt::format("HDF5 decodes {} of {} on the CPU", names, where(source.file, source.dataset));
    }
    return std::nullopt;
  }
  if (options_.gpu_decode == gpu::DecodeMode::Off) {
    why_not = "H5TILE_GPU_DECODE=off";
    return std::nullopt;
  }
  auto plan =
      gpu::gpu_filters(filtered->pipeline->filters(), source.elem_size, gpu::kernels_built(), options_.gpu_decode);
  if (const auto* why = std::get_if<std::string>(&plan)) {
    why_not = *why;
    return std::nullopt;
  }
  const auto& filters = std::get<gpu::GpuFilters>(plan);
  why_not = gpu::decode_obstacle(filters, options_.nvcomp_library);
  if (!why_not.empty()) return std::nullopt;
  gpu::DecodeRequest request{filtered->file.get(), filters, source.chunk,
                             source.elem_size,     {},      where(source.file, source.dataset),
                             filtered->pipeline};
  std::vector<Shape> origins;
  for (const auto i : maps) {
    const auto& m = mappings_[i];
    const auto part = intersect(m.dst, region);
    if (!part) continue;
    Box src = *part;  // the part in the source, and where it goes in the region
    Shape dst = part->offset;
    for (std::size_t a = 0; a < region.rank(); ++a) {
      src.offset[a] = m.src.offset[a] + (part->offset[a] - m.dst.offset[a]);
      dst[a] = part->offset[a] - region.offset[a];
    }
    for (auto& chunk : chunks_touching(src, source.chunk)) {
      const auto in = intersect(src, chunk);
      if (!in) continue;
      gpu::DeviceChunk c{0, 0, chunk.offset, *in, in->offset};
      for (std::size_t a = 0; a < region.rank(); ++a) {
        c.part.offset[a] = in->offset[a] - chunk.offset[a];
        c.dst_offset[a] = dst[a] + (in->offset[a] - src.offset[a]);
      }
      origins.push_back(chunk.offset);
      request.chunks.push_back(std::move(c));
    }
  }
  const auto located = filtered->directory->find(origins);
  if (!located) {
    why_not = fmt::format("{}: {}; decoded on the CPU", where(source.file, source.dataset),
                          filtered->directory->why_through_hdf5());
    return std::nullopt;
  }
  const auto& stored = *located;
  for (std::size_t i = 0; i < stored.size(); ++i) {
    // The CPU path reads these as HDF5 gives them (fill values; the filters the mask names
    // skipped): so does the GPU path, for the whole source.
    if (!stored[i]) {
      why_not =
          fmt::format("{} has chunks never written (fill values), read on the CPU", where(source.file, source.dataset));
      return std::nullopt;
    }
    if (stored[i]->filter_mask != 0) {
      why_not = fmt::format("{} has a chunk stored with filters skipped (filter mask {:#x}), decoded on the CPU",
                            where(source.file, source.dataset), stored[i]->filter_mask);
      return std::nullopt;
    }
    request.chunks[i].file_offset = stored[i]->offset;
    request.chunks[i].stored_bytes = stored[i]->size;
  }
  return request;
}

void OpenDataset::read_to_device(const Box& region, std::byte* out, int device, unsigned threads,
                                 Progress* progress) const {
  gpu::begin_device_io();
  const auto es = info_.dtype.size();
  const auto tasks = plan(region, options_.staging.piece_bytes, true);
  std::uint64_t covered = 0;
  for (const auto& task : tasks) covered += task.dst.count();
  // Which sources' compressed chunks the GPU decodes, and why not the others.
  std::vector<std::vector<std::size_t>> maps(sources_.size());  // the mappings of each source that the region touches
  for (std::size_t i = 0; i < mappings_.size(); ++i) {
    if (region.rank() > 0 && intersect(mappings_[i].dst, region)) maps[mappings_[i].source].push_back(i);
  }
  std::vector<std::optional<gpu::DecodeRequest>> on_gpu(sources_.size());
  std::string why_cpu;
  bool cpu_decodes = false;
  for (std::size_t s = 0; s < sources_.size(); ++s) {
    std::string why;
    if (maps[s].empty()) {
      continue;
    }
    if (covered < region.count()) {
      if (!filter_names(*sources_[s]).empty())
        why = "parts of the region that no source maps (fill values) are assembled on the host";
    } else if (overlapping_) {
      // The GPU would decode every chunk a mapping touches, also where a later mapping stands.
      if (!filter_names(*sources_[s]).empty()) why = "mappings that overlap are read on the CPU";
    } else {
      on_gpu[s] = gpu_decoding(s, maps[s], region, why);
    }
    if (!why.empty()) {
      cpu_decodes = true;
      if (why_cpu.empty()) why_cpu = why;
    }
  }
  if (cpu_decodes && options_.gpu_decode == gpu::DecodeMode::On) {
    throw RuntimeError(
        fmt::format("H5TILE_GPU_DECODE=on but the GPU cannot decode {}: {}", where(path_, name_), why_cpu));
  }
  bool gpu_decodes = false;
  for (const auto& r : on_gpu) gpu_decodes = gpu_decodes || r.has_value();
  gpu::note_decoder(decoder_name(gpu_decodes, cpu_decodes), cpu_decodes ? why_cpu : "");
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
      const auto* bytes = sources_[s]->raw_bytes();
      if (bytes != nullptr && bytes->file->posix_file() != nullptr) {
        gds[s] = gpu::gds_open(*bytes->file->posix_file(), options_.gds);
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
    if (on_gpu[t.source]) continue;  // decoded on the GPU below
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
  if (!staged.empty() || (direct.empty() && !gpu_decodes)) {
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
  }
  for (const auto& request : on_gpu) {
    if (request) {
      gpu::decode_to_device(device, *request, out, region.extent, options_.nvcomp_library, threads, options_.staging,
                            progress);
    }
  }
  // Which ways the bytes went: "cufile", "nvcomp", "staging", joined with '+'.
  std::string path = direct.empty() ? "" : "cufile";
  if (gpu_decodes) path += path.empty() ? "nvcomp" : "+nvcomp";
  if (!staged.empty() || path.empty()) path += path.empty() ? "staging" : "+staging";
  gpu::note_path(path.c_str());
}

}  // namespace h5tile::detail
