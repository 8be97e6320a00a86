// OpenDataset::read_to_device: a read whose destination is CUDA device memory, through the
// bounded staging pipeline, straight from the file with GPUDirect Storage where it opens, or, for
// compressed chunks, decoded on the GPU (gpu/decode.hpp) where it can.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "gpu/decode.hpp"
#include "gpu/decoder_choice.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "layout/boxes.hpp"
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

// The samples that H5TILE_GPU_DECODE=auto times the decoders on, each the way the read would run
// with that decoder, writing its part of the destination. The GPU's: the read's first chunks, up
// to kGpuSampleBytes decoded. nvCOMP's rate grows with the chunks of one batch (a few hundred
// chunks leave most of the GPU idle: on an H200, 128 chunks of 1 MiB measured 3-6x below a whole
// 1 GiB read), so that sample is large and is the read's own decode. The CPU's: as many bytes, the
// read's last pieces, staged as the CPU decoder's read stages them (its workers, its pinned
// buffers, the copies to the device). Both as large, because a pipeline's start and end weigh
// more in a small sample: on one H200 machine (16 cores, 1 GiB of lz4, 2026-12-02) the staged
// read timed on 256 MiB gave 18.5 GB/s where the whole read ran at 25.5, and auto took the GPU
// (24.6). Before that, the CPU's workers alone on host buffers had measured zstd at 3.95 GB/s
// where the staged read ran at 10.75. The cost: a read of 1 GiB or less is decoded twice, once by
// each decoder, the first time a codec is read on a device in a process. Each decoder first runs
// untimed on a few of its chunks or pieces (nvCOMP's set-up, the pinned buffers, the workers).
constexpr std::uint64_t kGpuSampleBytes = std::uint64_t{1} << 30;
constexpr std::size_t kWarmUnits = 16;

// The GPU's sample of `request`: its first chunks, up to kGpuSampleBytes decoded (at least one).
std::size_t gpu_sample_chunks(const gpu::DecodeRequest& request, std::uint64_t chunk_bytes) {
  return std::max<std::size_t>(
      1, std::min<std::size_t>(request.chunks.size(), kGpuSampleBytes / std::max<std::uint64_t>(chunk_bytes, 1)));
}

double seconds(const std::function<void()>& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

gpu::DecodeRequest first_chunks(const gpu::DecodeRequest& request, std::size_t n) {
  return {request.file,
          request.filters,
          request.chunk,
          request.elem_size,
          {request.chunks.begin(), request.chunks.begin() + static_cast<std::ptrdiff_t>(n)},
          request.where,
          request.cpu};
}

// The CPU's sample of a read (see kGpuSampleBytes): staging `warm` (untimed), then `timed`, whose
// pieces hold `timed_bytes` of the destination.
struct CpuSample {
  std::function<void(const std::vector<std::size_t>&)> stage;
  std::vector<std::size_t> warm;
  std::vector<std::size_t> timed;
  std::uint64_t timed_bytes = 0;
};

// Times the GPU and the CPU decoding parts of the read (gpu/decoder_choice.hpp), each writing its
// part of `out`. The GPU's run is decode_to_device itself (it returns once the device has finished:
// synchronised) on the first chunks of `request`, after an untimed run on a few of them;
// `gpu_did_all` says whether that was the whole read. The CPU's run is `cpu.stage` on its pieces.
gpu::DecoderRates measure_decoders(int device, const gpu::DecodeRequest& request, std::byte* out,
                                   const Shape& out_shape, const std::string& library, unsigned threads,
                                   const gpu::Staging& staging, const CpuSample& cpu, bool& gpu_did_all) {
  std::uint64_t chunk_bytes = request.elem_size;
  for (const auto c : request.chunk) chunk_bytes *= c;
  const auto slowdown = gpu::parse_gpu_slowdown(std::getenv(gpu::kGpuSlowdownVariable));
  gpu::DecoderRates rates;
  const auto n_gpu = gpu_sample_chunks(request, chunk_bytes);
  rates.sample_chunks = n_gpu;
  rates.sample_bytes = n_gpu * chunk_bytes;
  gpu_did_all = false;
  try {
    const auto warm = first_chunks(request, std::min(n_gpu, kWarmUnits));
    gpu::decode_to_device(device, warm, out, out_shape, library, threads, staging, nullptr);
    const auto sample = first_chunks(request, n_gpu);
    const double s =
        seconds([&] { gpu::decode_to_device(device, sample, out, out_shape, library, threads, staging, nullptr); });
    rates.gpu = static_cast<double>(rates.sample_bytes) / std::max(s, 1e-9);
    gpu_did_all = n_gpu == request.chunks.size();
  } catch (const std::exception& e) {
    rates.gpu_failure = e.what();
  }
  if (!cpu.warm.empty()) cpu.stage(cpu.warm);
  const double s = seconds([&] { cpu.stage(cpu.timed); });
  rates.cpu = static_cast<double>(cpu.timed_bytes) / std::max(s, 1e-9);
  rates.cpu_sample_bytes = cpu.timed_bytes;
  return gpu::slowed(std::move(rates), slowdown);
}

// The CPU's sample of the read of source `s`, as large as the GPU's (kGpuSampleBytes): its last
// pieces among `tasks` up to `sample_bytes` of the destination, the first few of them (the last in
// the read) staged untimed.
CpuSample cpu_sample(const std::vector<ReadTask>& tasks, std::size_t s, std::size_t elem_size,
                     std::uint64_t sample_bytes, std::function<void(const std::vector<std::size_t>&)> stage) {
  std::vector<std::size_t> pieces;
  std::uint64_t bytes = 0;
  for (std::size_t i = tasks.size(); i-- > 0;) {
    if (tasks[i].source != s) continue;
    const auto b = tasks[i].dst.count() * elem_size;
    if (!pieces.empty() && bytes + b > sample_bytes) break;
    pieces.push_back(i);
    bytes += b;
  }
  CpuSample sample{std::move(stage), {}, {}, 0};
  const auto n_warm = pieces.size() > 1 ? std::min(kWarmUnits, pieces.size() / 8) : 0;
  sample.warm.assign(pieces.begin(), pieces.begin() + static_cast<std::ptrdiff_t>(n_warm));
  sample.timed.assign(pieces.begin() + static_cast<std::ptrdiff_t>(n_warm), pieces.end());
  for (const auto i : sample.timed) sample.timed_bytes += tasks[i].dst.count() * elem_size;
  return sample;
}

DecoderChoiceReport choice_report(gpu::GpuCodec codec, const gpu::DecoderChoice& choice) {
  return {choice.how,
          gpu::codec_name(codec),
          choice.rates.gpu.value_or(0),
          choice.rates.cpu,
          choice.rates.sample_chunks,
          choice.rates.sample_bytes,
          choice.rates.cpu_sample_bytes,
          choice.rates.gpu_failure};
}

}  // namespace

std::optional<gpu::DecodeRequest> OpenDataset::gpu_decoding(std::size_t s, const std::vector<std::size_t>& maps,
                                                            const Box& region, int device, std::string& why_not) const {
  const auto& source = *opened_.sources[s];
  why_not.clear();
  if (maps.empty() || region.rank() == 0) return std::nullopt;
  const auto* filtered = std::get_if<FilteredChunks>(&source.access);
  if (filtered == nullptr) {
    if (const auto names = filter_names(source); !names.empty()) {
      why_not = fmt::format("HDF5 decodes {} of {} on the CPU", names, where(source.file, source.dataset));
    }
    return std::nullopt;
  }
  if (opened_.options.gpu_decode == gpu::DecodeMode::Off) {
    why_not = "H5TILE_GPU_DECODE=off";
    return std::nullopt;
  }
  auto plan = gpu::gpu_filters(filtered->pipeline->filters(), source.elem_size, gpu::kernels_built(),
                               opened_.options.gpu_decode);
  if (const auto* why = std::get_if<std::string>(&plan)) {
    why_not = *why;
    return std::nullopt;
  }
  const auto& filters = std::get<gpu::GpuFilters>(plan);
  why_not = gpu::decode_obstacle(filters, opened_.options.nvcomp_library);
  if (!why_not.empty()) return std::nullopt;
  // Under auto, once the CPU has won for this codec, the GPU's list of chunks is not built.
  if (opened_.options.gpu_decode == gpu::DecodeMode::Auto) {
    if (const auto known = gpu::decoder_cache().cached(device, filters.codec);
        known && known->decoder == gpu::Decoder::Cpu) {
      gpu::note_decoder_choice(choice_report(filters.codec, *known));
      why_not = known->reason;
      return std::nullopt;
    }
  }
  gpu::DecodeRequest request{filtered->file.get(), filters, source.chunk,
                             source.elem_size,     {},      where(source.file, source.dataset),
                             filtered->pipeline};
  std::vector<Shape> origins;
  for (const auto i : maps) {
    const auto& m = opened_.mappings[i];
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
  gpu::wait_for_default_stream(device);  // a kernel still reading `out` there is done first
  const auto started = std::chrono::steady_clock::now();
  const auto since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const auto es = opened_.info.dtype.size();
  // Data outside the page cache may be read as one stream of few readers with large requests
  // (H5TILE_COLD_READS), staged through pinned buffers of its own (a second pool of the device,
  // so that neither pattern rebuilds the other's).
  const auto shape = shape_read(region, threads, plan(region, opened_.options.staging.piece_bytes, true));
  const auto& tasks = shape.tasks;
  auto pinned = opened_.options.staging;
  if (shape.stream) {
    const auto request = std::max<std::size_t>(opened_.options.cold_reads.request_bytes, pinned.piece_bytes);
    pinned = gpu::Staging{
        .bytes = 2 * std::size_t{std::max(shape.threads, 1U)} * request, .piece_bytes = request, .pool = 1};
    threads = shape.threads;
  }
  std::uint64_t covered = 0;
  for (const auto& task : tasks) covered += task.dst.count();
  // Which sources' compressed chunks the GPU decodes, and why not the others.
  std::vector<std::vector<std::size_t>> maps(
      opened_.sources.size());  // the mappings of each source that the region touches
  for (std::size_t i = 0; i < opened_.mappings.size(); ++i) {
    if (region.rank() > 0 && intersect(opened_.mappings[i].dst, region)) maps[opened_.mappings[i].source].push_back(i);
  }
  // The CPU decoder's read of tasks `which`: each piece read and decoded by the workers into pinned
  // buffers, then copied into place (and auto's timing of it, measure_decoders).
  const auto strides = rowmajor_strides(region.extent, es);
  const auto stage = [&](const std::vector<std::size_t>& which, Progress* counted) {
    gpu::stage_to_device(
        device, which.size(), es,
        [&](std::size_t k) {
          const auto& t = tasks[which[k]];
          return gpu::DeviceRegion{out + linear_offset(t.dst.offset, region.extent) * es, strides, t.dst.extent};
        },
        [&](std::size_t k, std::byte* host) {
          const auto& t = tasks[which[k]];
          opened_.sources[t.source]->read(t.src, host, t.dst.extent, Box::whole(t.dst.extent));
          if (counted != nullptr) counted->add(t.dst.count() * es);
        },
        threads, pinned);
  };
  std::vector<std::optional<gpu::DecodeRequest>> on_gpu(opened_.sources.size());
  std::vector<bool> decoded(opened_.sources.size());  // decoded on the GPU while auto timed it
  std::string why_cpu;
  bool cpu_decodes = false;
  for (std::size_t s = 0; s < opened_.sources.size(); ++s) {
    std::string why;
    if (maps[s].empty()) {
      continue;
    }
    if (covered < region.count()) {
      if (!filter_names(*opened_.sources[s]).empty())
        why = "parts of the region that no source maps (fill values) are assembled on the host";
    } else if (opened_.overlapping) {
      // The GPU would decode every chunk a mapping touches, also where a later mapping stands.
      if (!filter_names(*opened_.sources[s]).empty()) why = "mappings that overlap are read on the CPU";
    } else {
      on_gpu[s] = gpu_decoding(s, maps[s], region, device, why);
      if (on_gpu[s] && on_gpu[s]->cpu != nullptr) {
        const auto& request = *on_gpu[s];
        std::uint64_t chunk_bytes = request.elem_size;
        for (const auto c : request.chunk) chunk_bytes *= c;
        const auto read_bytes = chunk_bytes * request.chunks.size();
        bool gpu_did_all = false;
        const auto choice =
            gpu::decoder_cache().decide(opened_.options.gpu_decode, device, request.filters.codec, read_bytes, [&] {
              const auto cpu = cpu_sample(tasks, s, es, gpu_sample_chunks(request, chunk_bytes) * chunk_bytes,
                                          [&](const auto& which) { stage(which, nullptr); });
              return measure_decoders(device, request, out, region.extent, opened_.options.nvcomp_library, threads,
                                      opened_.options.staging, cpu, gpu_did_all);
            });
        gpu::note_decoder_choice(choice_report(request.filters.codec, choice));
        if (choice.decoder == gpu::Decoder::Cpu) {
          on_gpu[s].reset();
          why = choice.reason;
        } else if (choice.how == "measured" && gpu_did_all) {
          decoded[s] = true;  // the GPU's timed sample was the whole read: in place already
          if (progress != nullptr) {
            for (const auto& c : request.chunks) progress->add(c.part.count() * es);
          }
        }
      }
    }
    if (!why.empty()) {
      cpu_decodes = true;
      if (why_cpu.empty()) why_cpu = why;
    }
  }
  if (cpu_decodes && opened_.options.gpu_decode == gpu::DecodeMode::On) {
    throw RuntimeError(fmt::format("H5TILE_GPU_DECODE=on but the GPU cannot decode {}: {}",
                                   where(opened_.location.path(), opened_.name), why_cpu));
  }
  bool gpu_decodes = false;
  for (const auto& r : on_gpu) gpu_decodes = gpu_decodes || r.has_value();
  gpu::note_decoder(decoder_name(gpu_decodes, cpu_decodes), cpu_decodes ? why_cpu : "");
  if (!gpu_decodes) gpu::note_decode_phases({});  // the phases of a sample that auto timed
  if (covered < region.count()) {
    // Regions no source maps hold the fill value: assemble on the host, then copy.
    const auto planned = since_start();
    const Array host = read(region, threads, -1);
    const auto pieces = split_rowmajor(Box::whole(region.extent), es, opened_.options.staging.piece_bytes);
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
        threads, opened_.options.staging);
    gpu::note_device_io_seconds(planned, since_start());
    return;
  }
  // GPUDirect Storage where it opens: a task that is one run in the file and one run in the
  // destination goes straight from the file to the device.
  std::vector<std::unique_ptr<gpu::GdsFile>> gds(opened_.sources.size());
  if (opened_.options.gds == gpu::GdsMode::Off) {
    gpu::note_gds_reason("H5TILE_GDS=off");
  } else {
    bool tried = false;
    for (std::size_t s = 0; s < opened_.sources.size(); ++s) {
      // A tile read by its tile table is read through its checked descriptor (staging).
      const auto* bytes = opened_.sources[s]->raw_bytes();
      if (bytes != nullptr && bytes->file->posix_file() != nullptr) {
        gds[s] = gpu::gds_open(*bytes->file->posix_file(), opened_.options.gds);
        tried = true;
      }
    }
    if (!tried) {
      gpu::note_gds_reason(
          "not tried: no source is one run of bytes in a file held open (tiles read by their tile table, chunked, "
          "filtered or converted data go through staging)");
    }
  }
  const auto planned = since_start();
  std::vector<std::size_t> staged;
  std::vector<std::size_t> direct;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    if (on_gpu[t.source]) continue;  // decoded on the GPU below
    const bool runs = contiguous_in(t.src, opened_.sources[t.source]->shape) && contiguous_in(t.dst, region.extent);
    (gds[t.source] && runs && t.src.rank() > 0 ? direct : staged).push_back(i);
  }
  parallel_for(direct.size(), threads, [&](std::size_t k) {
    const auto& t = tasks[direct[k]];
    const auto& source = *opened_.sources[t.source];
    gds[t.source]->read(out + linear_offset(t.dst.offset, region.extent) * es, t.dst.count() * es,
                        *source.raw_offset() + linear_offset(t.src.offset, source.shape) * es);
    if (progress != nullptr) progress->add(t.dst.count() * es);
  });
  if (!staged.empty() || (direct.empty() && !gpu_decodes)) stage(staged, progress);
  for (std::size_t s = 0; s < opened_.sources.size(); ++s) {
    const auto& request = on_gpu[s];
    if (request && !decoded[s]) {
      gpu::decode_to_device(device, *request, out, region.extent, opened_.options.nvcomp_library, threads,
                            opened_.options.staging, progress);
    }
  }
  // Which ways the bytes went: "cufile", "nvcomp", "staging", joined with '+'.
  std::string path = direct.empty() ? "" : "cufile";
  if (gpu_decodes) path += path.empty() ? "nvcomp" : "+nvcomp";
  if (!staged.empty() || path.empty()) path += path.empty() ? "staging" : "+staging";
  gpu::note_path(path.c_str());
  gpu::note_device_io_seconds(planned, since_start());
}

}  // namespace h5tile::detail
