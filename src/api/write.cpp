// to_file and write_tiles: validation, the plan every rank agrees on, and the collective steps
// of a write; how each layout writes lives in layout/ (layout_writer.hpp), the commit that makes
// the new file visible only when it is complete in layout/commit.hpp.
#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>

#include "api/dataset_reader.hpp"
#include "api/pending_writes.hpp"
#include "api/resolve.hpp"
#include "api/write_checks.hpp"
#include "comm/collective.hpp"
#include "engine/codecs/compression.hpp"
#include "engine/progress.hpp"
#include "gpu/backend.hpp"
#include "hdf5/file.hpp"
#include "layout/commit.hpp"
#include "layout/layout_writer.hpp"
#include "layout/tile_bytes.hpp"
#include "layout/write_plan.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

namespace {

std::string describe_rank(const Shape& shape, std::span<const Tile> tiles, const fs::path& path,
                          const std::string& dataset, const WriteOptions& options) {
  std::string error;
  std::string dtype_name;
  Packer tiles_packed;
  std::string scalar;
  try {
    // The name is checked on every rank, so that every rank throws the same error (a rank
    // that threw alone would leave the others waiting for it).
    (void)checked_dataset_name(dataset, path, is_object_target(path));
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
      .u64(static_cast<std::uint64_t>(options.compression.compressor))
      .u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(options.compression.level)))
      .u64((options.compression.shuffle ? 1U : 0U) | (options.compression.fletcher32 ? 2U : 0U))
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
  Compression compression;
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
    Compression rank_compression;
    rank_compression.compressor = static_cast<Compressor>(in.u64());
    rank_compression.level = static_cast<int>(static_cast<std::int64_t>(in.u64()));
    const auto flags = in.u64();
    rank_compression.shuffle = (flags & 1U) != 0;
    rank_compression.fletcher32 = (flags & 2U) != 0;
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
      compression = rank_compression;
    } else if (path != first_path || dataset != plan.dataset || shape != plan.shape || layout != first_layout ||
               mode != first_mode || chunk != first_chunk || to_string(rank_compression) != to_string(compression)) {
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
      plan.scalar = scalar;
    }
  }
  plan.target = first_path;
  if (dtype_name.empty()) {
    throw InvalidArgument(
        fmt::format("{}: no rank passed a tile, so the dtype is unknown", where(plan.target, plan.dataset)));
  }
  plan.dtype = DType::from_name(dtype_name);
  check_coverage(plan.boxes, plan.shape, plan.target, plan.dataset);
  const auto layout = static_cast<Layout>(first_layout);
  check_layout_options({.layout = layout, .chunk = first_chunk, .compression = compression}, plan.target, plan.dataset);
  const bool filtered = compression.any() && !plan.untiled();  // 0-d and empty: stored unfiltered
  if ((layout == Layout::Chunked || filtered) && !plan.untiled()) {
    const auto largest = std::max_element(plan.boxes.begin(), plan.boxes.end(),
                                          [](const Box& a, const Box& b) { return a.count() < b.count(); });
    plan.chunk = chunk_for(first_chunk, plan.shape, largest->extent, plan.dtype.size(), plan.target, plan.dataset,
                           filtered ? kDefaultCompressedChunkBytes : kDefaultChunkBytes);
    if (layout == Layout::Chunked && filtered) {
      check_chunks_in_tiles(plan.boxes, plan.chunk, plan.shape, plan.target, plan.dataset);
    }
  }
  if (filtered) {
    plan.filters = write_filters(compression, plan.dtype.size(), element_count(plan.chunk) * plan.dtype.size());
  }
  return plan;
}

}  // namespace

namespace {

// `threads`: the workers of each rank (0: the `threads` setting).
void write_tiles_impl(Communicator& comm, const Shape& global_shape, std::span<const Tile> tiles, const fs::path& path,
                      const std::string& dataset, const WriteOptions& options, Progress& progress,
                      unsigned threads = 0) {
  // 1. Every rank describes its tiles; all ranks check all descriptions the same way (the name
  // first: a name that fails the check is described as given, and every rank throws its error).
  std::string name = dataset;
  try {
    name = normalize_dataset_name(dataset);
  } catch (const InvalidArgument&) {
  }
  const auto plan = agree_on_plan(comm.all_gather(describe_rank(global_shape, tiles, path, name, options)));
  auto config = write_config(options);
  if (threads != 0) config.threads = threads;
  const bool object = is_object_target(plan.target);
  if (object) {
    check_object_target(plan.target, options.layout, options.mode, plan.dataset);
    if (options.layout == Layout::Virtual) {
      configure_object_write(config, {}, {}, 0);  // the main object holds metadata only (the tiles size their own)
    } else {
      configure_object_write(config, plan.shape, plan.chunk, plan.dtype.size());
      // Ranks of other processes cannot write into rank 0's upload in memory: each sends parts of
      // its own (WriteCommit::divide).
      config.processes = comm.size() > 1 && !comm.threads_of_one_process();
    }
  }
  const auto writer = make_layout_writer(plan, config);
  const bool with_tiles = writes_tile_files(plan, options.layout);

  // 2. Rank 0 checks the target and starts the commit (a new generation); the others join it.
  std::optional<WriteCommit> commit;
  const auto joining = on_root(comm, 0, [&] {
    if (!object) {
      check_target(plan.target, options.mode, plan.dataset);
      create_parent_folders(plan.target);
    }
    commit.emplace(plan.target, plan.dataset, config, with_tiles);
    return commit->joining();
  });
  std::exception_ptr unjoined;  // thrown in the write's first agreed step: every rank fails, rank 0 aborts
  if (!commit) {
    try {
      commit.emplace(plan.target, plan.dataset, config, with_tiles, joining);
    } catch (...) {
      unjoined = std::current_exception();
    }
  }

  // 3. Every rank writes its tiles; 4. rank 0 completes the main file and commits. Any failure
  // removes the new files.
  try {
    const auto created = on_root(comm, 0, [&] { return writer->create(*commit); });
    std::vector<WrittenTile> mine;
    std::string handoff;
    agree(comm, [&] {
      if (unjoined) std::rethrow_exception(unjoined);
      try {
        mine =
            writer->write(comm, *commit, created, tiles, plan.first[static_cast<std::size_t>(comm.rank())], progress);
        handoff = commit->handoff();
      } catch (...) {
        commit->stop_sending();
        throw;
      }
    });
    // What each tile's writing yielded, in global tile order, for the main file, and what rank 0
    // needs of each rank's write to commit.
    Packer packed;
    packed.u64(mine.size());
    for (const auto& t : mine) packed.u64(t.offset).u64(t.file_size).u64(t.checksum).u64(t.identity);
    packed.str(handoff);
    std::vector<WrittenTile> written;
    std::vector<std::string> handoffs;
    for (const auto& bytes : comm.all_gather(packed.bytes())) {
      if (bytes.empty()) continue;  // (h5tile.dask's ranks see only their own)
      Unpacker in(bytes);
      for (auto count = in.u64(); count > 0; --count) {
        WrittenTile t;
        t.offset = in.u64();
        t.file_size = in.u64();
        t.checksum = in.u64();
        t.identity = in.u64();
        written.push_back(t);
      }
      handoffs.push_back(in.str());
    }
    (void)on_root(comm, 0, [&] {
      commit->receive(handoffs);
      writer->finish(*commit, written);
      commit->publish();
      if (!object) release_kept(path);  // the replaced file, held open by readers, is let go now
      return std::string();
    });
  } catch (...) {
    if (comm.rank() == 0) {
      commit->abandon();
    }
    throw;
  }
}

}  // namespace

void write_tiles(Communicator& comm, const Shape& global_shape, std::span<const Tile> tiles, const fs::path& path,
                 const std::string& dataset, const WriteOptions& options) {
  (void)is_object_target(path);  // a URL of another scheme is refused before anything
  std::uint64_t bytes = 0;
  for (const auto& tile : tiles) {
    bytes += tile.data.dtype.size() * (tile.data.shape == tile.box.extent ? tile.box.count() : 0);
  }
  Progress progress(options.progress, bytes);
  WriteOptions effective = options;
  effective.layout = resolved_layout(options, false);
  write_tiles_impl(comm, global_shape, tiles, path, dataset, effective, progress);
}

WriteHandle to_file(const ArrayView& array, const fs::path& path, const std::string& dataset,
                    const WriteOptions& options) {
  const bool object = is_object_target(path);
  const auto name = checked_dataset_name(dataset, path, object);
  check_array(array, path, name);
  WriteOptions effective = options;
  effective.layout = resolved_layout(options, true);
  check_layout_options(effective, path, name);
  if (object) {
    check_object_target(path, effective.layout, options.mode, name);
  } else {
    check_target(path, options.mode, name);
  }
  const unsigned requested = threads_or_setting(options.ranks);
  auto boxes = split_for_ranks(array.shape, requested);
  unsigned threads = 0;  // each rank's workers: the `threads` setting
  if (effective.layout == Layout::Chunked && !array.shape.empty()) {
    // Tiles of whole chunks along the first axis, so that no two ranks share a chunk; the
    // chunk chosen here is the one written (the plan would otherwise derive it again from the
    // aligned tiles, and could pick another).
    effective.chunk = chunk_for(options.chunk, array.shape, boxes.front().extent, array.dtype.size(), path, name,
                                options.compression.any() ? kDefaultCompressedChunkBytes : kDefaultChunkBytes);
    if (options.compression.any()) {
      // Compressed chunks get their place in the file only as HDF5 writes them: one rank, whose
      // `requested` workers compress while one thread writes (filtered_writer.hpp), rather than
      // ranks that take turns at the file.
      boxes = {Box::whole(array.shape)};
      threads = requested;
    } else {
      boxes = split_for_ranks(array.shape, requested, effective.chunk[0]);
    }
  }
  const auto target = object ? path : fs::absolute(path).lexically_normal();
  const int device = gpu::device_of(array);
  if (device >= 0 && options.compression.any()) {
    throw InvalidArgument(
        fmt::format("{}: compressed writes take arrays in host memory, not device memory "
                    "(copy the array to the host first)",
                    where(path, name)));
  }
  auto progress = std::make_shared<Progress>(options.progress, array.nbytes());
  return pending_writes().start(target, [=] {
    run_thread_ranks(static_cast<unsigned>(boxes.size()), [&](Communicator& comm) {
      const auto& box = boxes[static_cast<std::size_t>(comm.rank())];
      ArrayView part = sub_view(array, Box::whole(array.shape), box);
      part.memory = device >= 0 ? MemoryKind::Device : MemoryKind::Host;
      const Tile tile{box, part};
      write_tiles_impl(comm, array.shape, std::span<const Tile>(&tile, 1), target, name, effective, *progress, threads);
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

bool WriteHandle::wait_for(std::chrono::nanoseconds timeout) const {
  return future_.valid() && future_.wait_for(timeout) == std::future_status::ready;
}

bool WriteHandle::done() const {
  return future_.valid() && future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

}  // namespace h5tile
