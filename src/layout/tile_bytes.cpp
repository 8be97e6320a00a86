#include "layout/tile_bytes.hpp"

#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"

namespace h5tile::detail {

StridedBytes memory_of(const ArrayView& view) {
  return {static_cast<std::byte*>(const_cast<void*>(view.data)), view.strides()};
}

void write_tile_bytes(const RawDataset& file, const Box& box, const ArrayView& data, Progress& progress,
                      const WriteConfig& config, const PartWritten& written) {
  const auto memory = memory_of(data);
  const int device = gpu::device_of(data);
  const auto es = file.elem_size;
  if (device < 0) {
    const auto parts = split_rowmajor(box, es, config.task_size);
    parallel_for(parts.size(), config.threads, [&](std::size_t i) {
      write_raw(file, parts[i], sub_memory(memory, box, parts[i]));
      if (written) written(parts[i]);
      progress.add(parts[i].count() * es);
    });
    return;
  }
  gpu::begin_device_io();                // writes go through staging (GPUDirect Storage reads only)
  gpu::wait_for_default_stream(device);  // a kernel still writing `data` there is done first
  const auto parts = split_rowmajor(box, es, config.staging.piece_bytes);
  gpu::stage_from_device(
      device, parts.size(), es,
      [&](std::size_t i) {
        return gpu::DeviceRegion{sub_memory(memory, box, parts[i]).ptr, memory.strides, parts[i].extent};
      },
      [&](std::size_t i, const std::byte* staging) {
        const StridedBytes packed{const_cast<std::byte*>(staging), rowmajor_strides(parts[i].extent, es)};
        write_raw(file, parts[i], packed);
        if (written) written(parts[i]);
        progress.add(parts[i].count() * es);
      },
      config.threads, config.staging);
}

void start_writeback(const RawDataset& file, const Box& part) {
  // Only the whole pages of a part that is one run of the file: a part with gaps (a tile narrower
  // than the dataset) spans bytes that other ranks write, and a page shared with a neighbour
  // would be written now and again once the neighbour's bytes arrive.
  constexpr std::uint64_t kPage = 4096;
  const auto span = file_span(file, part);
  if (span.end - span.begin != part.count() * file.elem_size) {
    return;
  }
  const auto begin = (span.begin + kPage - 1) / kPage * kPage;
  const auto end = span.end / kPage * kPage;
  if (begin < end) {
    file.writable()->start_writeback(begin, end - begin);
  }
}

PartWritten writeback_of(const RawDataset& file, const WriteConfig& config) {
  if (!config.sync) {
    return {};
  }
  return [file](const Box& part) { start_writeback(file, part); };
}

void write_tiles_into(const WriteCommit& commit, std::span<const Tile> tiles, bool sync,
                      const std::function<void(const ByteSink& out, const Tile& tile)>& write_tile) {
  const auto out = commit.open_sink();
  for (const auto& tile : tiles) {
    write_tile(*out, tile);
  }
  if (sync) {
    out->sync();
  }
}

ArrayView sub_view(const ArrayView& data, const Box& box, const Box& part) {
  ArrayView view = data;
  view.shape = part.extent;
  view.byte_strides = data.strides();
  auto* base = static_cast<const std::byte*>(data.data);
  for (std::size_t a = 0; a < box.rank(); ++a) {
    base += static_cast<std::int64_t>(part.offset[a] - box.offset[a]) * view.byte_strides[a];
  }
  view.data = base;
  return view;
}

}  // namespace h5tile::detail
