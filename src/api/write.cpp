// to_file and write_tiles: validation, the collective steps of a write, and the commit that
// makes the new file visible only when it is complete.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>
#include <h5tile/settings.hpp>

#include "api/pending_writes.hpp"
#include "api/write_checks.hpp"
#include "comm/collective.hpp"
#include "engine/checksum.hpp"
#include "engine/posix_file.hpp"
#include "engine/progress.hpp"
#include "engine/raw_transfer.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "hdf5/file.hpp"
#include "layout/file_writer.hpp"
#include "layout/open_dataset.hpp"
#include "layout/sidecar.hpp"
#include "layout/tile_index.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

namespace {

// What every rank knows about a write once the descriptions are exchanged.
struct WritePlan {
  fs::path target;
  std::string dataset;
  Shape shape;
  DType dtype{DTypeKind::UInt8};
  std::vector<Box> boxes;          // every tile, in rank order
  std::vector<std::size_t> first;  // index in boxes of each rank's first tile
  Shape chunk;                     // layout Chunked: the chunk shape
  std::string embedded;            // the element of a 0-d array (it travels with the plan)
  [[nodiscard]] bool is_embedded() const { return shape.empty() || element_count(shape) == 0; }
};

std::string describe_rank(const Shape& shape, std::span<const Tile> tiles, const fs::path& path,
                          const std::string& dataset, const WriteOptions& options) {
  std::string error;
  std::string dtype_name;
  Packer tiles_packed;
  std::string scalar;
  try {
    for (const auto& tile : tiles) {
      check_tile(tile, shape, path, dataset);
      if (!dtype_name.empty() && tile.data.dtype.name() != dtype_name) {
        throw InvalidArgument(fmt::format("{}: tiles of one rank have dtypes {} and {}", where(path, dataset),
                                          dtype_name, tile.data.dtype.name()));
      }
      dtype_name = tile.data.dtype.name();
      tiles_packed.u64s(tile.box.offset).u64s(tile.box.extent);
      if (shape.empty()) {
        scalar.resize(tile.data.dtype.size());
        if (gpu::device_of(tile.data) >= 0) {
          gpu::copy_to_host(scalar.data(), tile.data.data, scalar.size());
        } else {
          std::memcpy(scalar.data(), tile.data.data, scalar.size());
        }
      }
    }
  } catch (...) {
    error = encode_error(std::current_exception());
  }
  return Packer()
      .str(error)
      .str(path.string())
      .str(dataset)
      .u64s(shape)
      .u64(static_cast<std::uint64_t>(options.layout))
      .u64(static_cast<std::uint64_t>(options.mode))
      .u64s(options.chunk)
      .str(dtype_name)
      .u64(tiles.size())
      .str(tiles_packed.bytes())
      .str(scalar)
      .bytes();
}

// Decodes every rank's description and checks them together; identical on every rank, so
// every rank throws the same error.
WritePlan agree_on_plan(const std::vector<std::string>& all) {
  WritePlan plan;
  std::string first_path;
  std::uint64_t first_layout = 0;
  std::uint64_t first_mode = 0;
  Shape first_chunk;
  std::string dtype_name;
  int dtype_rank = -1;
  for (std::size_t r = 0; r < all.size(); ++r) {
    Unpacker in(all[r]);
    const auto error = in.str();
    if (!error.empty()) {
      throw_encoded(error);
    }
    const auto path = in.str();
    const auto dataset = in.str();
    const auto shape = in.u64s();
    const auto layout = in.u64();
    const auto mode = in.u64();
    const auto chunk = in.u64s();
    const auto rank_dtype = in.str();
    const auto count = in.u64();
    const auto packed = in.str();
    const auto scalar = in.str();
    if (r == 0) {
      first_path = path;
      plan.dataset = dataset;
      plan.shape = shape;
      first_layout = layout;
      first_mode = mode;
      first_chunk = chunk;
    } else if (path != first_path || dataset != plan.dataset || shape != plan.shape || layout != first_layout ||
               mode != first_mode || chunk != first_chunk) {
      throw InvalidArgument(fmt::format(
          "ranks disagree on the write: rank 0 passed '{}':'{}' shape {}, rank {} passed '{}':'{}' shape {} "
          "(every rank must pass the same path, dataset, shape and options)",
          first_path, plan.dataset, to_string(plan.shape), r, path, dataset, to_string(shape)));
    }
    if (!rank_dtype.empty()) {
      if (dtype_name.empty()) {
        dtype_name = rank_dtype;
        dtype_rank = static_cast<int>(r);
      } else if (rank_dtype != dtype_name) {
        throw InvalidArgument(fmt::format("{}: rank {} writes dtype {} but rank {} writes {}", where(path, dataset),
                                          dtype_rank, dtype_name, r, rank_dtype));
      }
    }
    plan.first.push_back(plan.boxes.size());
    Unpacker boxes(packed);
    for (std::uint64_t i = 0; i < count; ++i) {
      Box box;
      box.offset = boxes.u64s();
      box.extent = boxes.u64s();
      plan.boxes.push_back(std::move(box));
    }
    if (!scalar.empty()) {
      plan.embedded = scalar;
    }
  }
  plan.target = first_path;
  if (dtype_name.empty()) {
    throw InvalidArgument(
        fmt::format("{}: no rank passed a tile, so the dtype is unknown", where(plan.target, plan.dataset)));
  }
  plan.dtype = DType::from_name(dtype_name);
  check_coverage(plan.boxes, plan.shape, plan.target, plan.dataset);
  if (static_cast<Layout>(first_layout) == Layout::Chunked && !plan.is_embedded()) {
    const auto largest = std::max_element(plan.boxes.begin(), plan.boxes.end(),
                                          [](const Box& a, const Box& b) { return a.count() < b.count(); });
    plan.chunk = chunk_for(first_chunk, plan.shape, largest->extent, plan.dtype.size(), plan.target, plan.dataset);
  }
  return plan;
}

StridedBytes memory_of(const ArrayView& view) {
  return {static_cast<std::byte*>(const_cast<void*>(view.data)), view.strides()};
}

// Moves a tile's bytes into `box` of a raw dataset (the whole of a tile file, or the tile's
// box of a shared file): straight from host memory, or through staging from a device.
void write_tile_bytes(const RawDataset& file, const Box& box, const ArrayView& data, Progress& progress) {
  const auto memory = memory_of(data);
  const int device = gpu::device_of(data);
  const auto es = file.elem_size;
  if (device < 0) {
    const auto parts = split_rowmajor(box, es, settings::task_size());
    parallel_for(parts.size(), settings::threads(), [&](std::size_t i) {
      write_raw(file, parts[i], sub_memory(memory, box, parts[i]));
      progress.add(parts[i].count() * es);
    });
    return;
  }
  const auto parts = split_rowmajor(box, es, gpu::staging_piece_bytes());
  gpu::stage_from_device(
      device, parts.size(), es,
      [&](std::size_t i) {
        return gpu::DeviceRegion{sub_memory(memory, box, parts[i]).ptr, memory.strides, parts[i].extent};
      },
      [&](std::size_t i, const std::byte* staging) {
        const StridedBytes packed{const_cast<std::byte*>(staging), rowmajor_strides(parts[i].extent, es)};
        write_raw(file, parts[i], packed);
        progress.add(parts[i].count() * es);
      },
      settings::threads());
}

// The part `part` (dataset coordinates, inside `box`) of a tile whose memory `data` holds `box`.
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

// Layout Chunked: writes this rank's tiles into the chunks of the dataset in `path` (all
// allocated), each chunk stored whole and row-major at the address HDF5 gave it.
void write_chunked_tiles(const WritePlan& plan, const fs::path& path, std::span<const Tile> tiles, bool sync,
                         Progress& progress) {
  const PosixFile out(path, O_WRONLY);
  for (const auto& tile : tiles) {
    const auto chunks = chunks_touching(tile.box, plan.chunk);
    std::vector<Shape> origins;
    origins.reserve(chunks.size());
    for (const auto& c : chunks) origins.push_back(c.offset);
    const auto addresses = chunk_addresses(path, plan.dataset, origins);
    const auto es = plan.dtype.size();
    // One task per chunk part; a part larger than the task size is split further by
    // write_tile_bytes (host) or staged piece by piece (device).
    const auto part_of = [&](std::size_t i) {
      auto part = *intersect(tile.box, chunks[i]);
      Box in_chunk = part;
      for (std::size_t a = 0; a < part.rank(); ++a) in_chunk.offset[a] -= chunks[i].offset[a];
      return std::pair{part, in_chunk};
    };
    if (gpu::device_of(tile.data) >= 0 || chunks.size() == 1) {
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        const auto [part, in_chunk] = part_of(i);
        write_tile_bytes({&out, addresses[i], plan.chunk, es}, in_chunk, sub_view(tile.data, tile.box, part), progress);
      }
      continue;
    }
    const auto memory = memory_of(tile.data);
    parallel_for(chunks.size(), settings::threads(), [&](std::size_t i) {
      const auto [part, in_chunk] = part_of(i);
      write_raw({&out, addresses[i], plan.chunk, es}, in_chunk, sub_memory(memory, tile.box, part));
      progress.add(part.count() * es);
    });
  }
  if (sync) {
    out.sync();  // this rank's bytes (with MPI, another node's page cache is not rank 0's to flush)
  }
}

// Writes one tile to its own file in the sidecar (layout Virtual).
// What a tile file holds: where its raw bytes start, the file's size, their checksum, and the
// file's identity (what lies outside the bytes, engine/checksum.hpp).
struct WrittenTile {
  std::uint64_t offset = 0;
  std::uint64_t file_size = 0;
  std::uint64_t checksum = 0;
  std::uint64_t identity = 0;
};

WrittenTile write_tile_file(const WritePlan& plan, const std::string& generation, std::size_t index, const Tile& tile,
                            bool sync, Progress& progress) {
  const auto path = plan.target.parent_path() / tile_relative(plan.target, plan.dataset, generation, index);
  std::uint64_t offset = 0;
  {
    auto file = create_file(path);
    offset = create_raw_dataset(file.get(), kTileDataset, plan.dtype, tile.box.extent);
  }
  const PosixFile out(path, O_WRONLY);
  const RawDataset raw{&out, offset, tile.box.extent, plan.dtype.size()};
  write_tile_bytes(raw, Box::whole(tile.box.extent), tile.data, progress);
  // The checksum and identity, read back while the bytes are still in the page cache.
  const auto bytes = tile.box.count() * plan.dtype.size();
  const PosixFile back(path, O_RDONLY);
  const auto checksum = checksum_region(back, offset, bytes);
  const auto file_size = static_cast<std::uint64_t>(std::filesystem::file_size(path));
  const auto identity = tile_identity(back, offset, bytes, file_size);
  if (!identity) {
    throw Hdf5Error(fmt::format("tile file '{}' holds more than its data and a few KiB of metadata", path.string()));
  }
  if (sync) {
    out.sync();
  }
  return {offset, file_size, checksum, *identity};
}

// The new main file, under its temporary name: a copy of the old one in Append mode.
FileHandle start_main_file(const WritePlan& plan, const fs::path& temp, Mode mode) {
  if (mode == Mode::Append && fs::exists(plan.target)) {
    copy_to_new_file(plan.target, temp);
    return open_for_update(temp, plan.dataset);
  }
  return create_file(temp);
}

// Rank 0, after every tile is written: build the main file and rename it over the target.
void commit_virtual(const WritePlan& plan, const std::string& generation, const WriteOptions& options,
                    const std::vector<WrittenTile>& written) {
  const auto temp = temp_main(plan.target, generation);
  {
    auto file = start_main_file(plan, temp, options.mode);
    if (plan.is_embedded()) {
      create_dataset_with(file.get(), plan.dataset, plan.dtype, plan.shape, plan.embedded.data());
    } else {
      std::vector<IndexedTile> tiles;
      for (std::size_t i = 0; i < plan.boxes.size(); ++i) {
        if (plan.boxes[i].count() > 0) {
          tiles.push_back({plan.boxes[i], tile_relative(plan.target, plan.dataset, generation, i).string(),
                           written[i].offset, written[i].file_size, written[i].checksum, written[i].identity});
        }
      }
      create_virtual_dataset(file.get(), plan.dataset, plan.dtype, plan.shape, tiles);
    }
  }
  publish_file(temp, plan.target, options.sync);
}

void remove_generation(const WritePlan& plan, const std::string& generation) noexcept {
  std::error_code ec;
  fs::remove(temp_main(plan.target, generation), ec);
  fs::remove_all(sidecar_dir(plan.target) / dataset_dir(plan.dataset) / generation, ec);
  remove_empty_folders(plan.target, plan.dataset);
}

}  // namespace

namespace {

void write_tiles_impl(Communicator& comm, const Shape& global_shape, std::span<const Tile> tiles, const fs::path& path,
                      const std::string& dataset, const WriteOptions& options, Progress& progress) {
  // 1. Every rank describes its tiles; all ranks check all descriptions the same way.
  std::string name;
  try {
    name = normalize_dataset_name(dataset);
  } catch (...) {
    name = dataset;
  }
  const auto plan = agree_on_plan(comm.all_gather(describe_rank(global_shape, tiles, path, name, options)));

  // 2. Rank 0 checks the target and picks the generation.
  const auto generation = on_root(comm, 0, [&] {
    check_target(plan.target, options.mode);
    fs::create_directories(fs::absolute(plan.target).parent_path());
    auto g = new_generation();
    if (options.layout == Layout::Virtual && !plan.is_embedded()) {
      mark_in_progress(plan.target, plan.dataset, g);
    }
    return g;
  });

  // 3. Every rank writes its tiles; 4. rank 0 commits. Any failure removes the new files.
  try {
    std::uint64_t offset = 0;
    const bool contiguous = options.layout == Layout::Contiguous && !plan.is_embedded();
    const bool chunked = options.layout == Layout::Chunked && !plan.is_embedded();
    const auto temp = temp_main(plan.target, generation);
    if (contiguous || chunked) {
      offset = std::stoull(on_root(comm, 0, [&] {
        auto file = start_main_file(plan, temp, options.mode);
        if (chunked) {
          (void)create_chunked_dataset(file.get(), plan.dataset, plan.dtype, plan.shape, plan.chunk, true);
          return std::string("0");
        }
        return std::to_string(create_raw_dataset(file.get(), plan.dataset, plan.dtype, plan.shape));
      }));
    }
    std::vector<WrittenTile> mine(tiles.size());
    agree(comm, [&] {
      if (plan.is_embedded()) {
        return;
      }
      if (contiguous) {
        const PosixFile out(temp, O_WRONLY);
        const RawDataset raw{&out, offset, plan.shape, plan.dtype.size()};
        for (const auto& tile : tiles) {
          write_tile_bytes(raw, tile.box, tile.data, progress);
        }
        if (options.sync) {
          out.sync();  // as in write_chunked_tiles
        }
        return;
      }
      if (chunked) {
        write_chunked_tiles(plan, temp, tiles, options.sync, progress);
        return;
      }
      const auto first = plan.first[static_cast<std::size_t>(comm.rank())];
      for (std::size_t i = 0; i < tiles.size(); ++i) {
        if (tiles[i].box.count() > 0) {
          mine[i] = write_tile_file(plan, generation, first + i, tiles[i], options.sync, progress);
        }
      }
    });
    // Every tile's raw offset, file size, checksum and identity, in global tile order, for the
    // tile table.
    Packer packed;
    for (const auto& t : mine) packed.u64(t.offset).u64(t.file_size).u64(t.checksum).u64(t.identity);
    std::vector<WrittenTile> written;
    for (const auto& bytes : comm.all_gather(packed.bytes())) {
      Unpacker in(bytes);
      for (std::size_t k = 0; k < bytes.size() / 32; ++k) {
        WrittenTile t;
        t.offset = in.u64();
        t.file_size = in.u64();
        t.checksum = in.u64();
        t.identity = in.u64();
        written.push_back(t);
      }
    }
    (void)on_root(comm, 0, [&] {
      const CommitLock lock(plan.target);
      if (contiguous || chunked) {
        publish_file(temp, plan.target, options.sync);
      } else {
        commit_virtual(plan, generation, options, written);
      }
      const bool has_tiles = options.layout == Layout::Virtual && !plan.is_embedded();
      clear_in_progress(plan.target, plan.dataset, generation);
      remove_stale(plan.target, plan.dataset, has_tiles ? generation : std::string(), options.mode != Mode::Append,
                   options.keep_previous);
      remove_dead_temps(plan.target);
      return std::string();
    });
  } catch (...) {
    if (comm.rank() == 0) {
      remove_generation(plan, generation);
    }
    throw;
  }
}

}  // namespace

void write_tiles(Communicator& comm, const Shape& global_shape, std::span<const Tile> tiles, const fs::path& path,
                 const std::string& dataset, const WriteOptions& options) {
  std::uint64_t bytes = 0;
  for (const auto& tile : tiles) {
    bytes += tile.data.dtype.size() * (tile.data.shape == tile.box.extent ? tile.box.count() : 0);
  }
  Progress progress(options.progress, bytes);
  write_tiles_impl(comm, global_shape, tiles, path, dataset, options, progress);
}

WriteHandle to_file(const ArrayView& array, const fs::path& path, const std::string& dataset,
                    const WriteOptions& options) {
  const auto name = normalize_dataset_name(dataset);
  check_array(array, path, name);
  check_target(path, options.mode);
  const unsigned requested = options.ranks != 0 ? options.ranks : settings::threads();
  auto boxes = split_for_ranks(array.shape, requested);
  WriteOptions effective = options;
  if (options.layout == Layout::Chunked && !array.shape.empty()) {
    // Tiles of whole chunks along the first axis, so that no two ranks share a chunk; the
    // chunk chosen here is the one written (the plan would otherwise derive it again from the
    // aligned tiles, and could pick another).
    effective.chunk = chunk_for(options.chunk, array.shape, boxes.front().extent, array.dtype.size(), path, name);
    boxes = split_for_ranks(array.shape, requested, effective.chunk[0]);
  }
  const auto target = fs::absolute(path).lexically_normal();
  const int device = gpu::device_of(array);
  auto progress = std::make_shared<Progress>(options.progress, array.nbytes());
  return pending_writes().start(target, [=] {
    run_thread_ranks(static_cast<unsigned>(boxes.size()), [&](Communicator& comm) {
      const auto& box = boxes[static_cast<std::size_t>(comm.rank())];
      ArrayView part = sub_view(array, Box::whole(array.shape), box);
      part.memory = device >= 0 ? MemoryKind::Device : MemoryKind::Host;
      const Tile tile{box, part};
      write_tiles_impl(comm, array.shape, std::span<const Tile>(&tile, 1), target, name, effective, *progress);
    });
  });
}

void fence() { pending_writes().wait_all(); }

void WriteHandle::wait() const {
  if (!future_.valid()) {
    throw InvalidArgument("WriteHandle::wait on a handle that holds no write");
  }
  future_.get();
}

bool WriteHandle::done() const {
  return future_.valid() && future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

}  // namespace h5tile
