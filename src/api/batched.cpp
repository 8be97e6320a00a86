// from_file_batched: blocks in row-major order of their offsets, read ahead by one task
// (engine/task.hpp) into a queue of bounded depth (from a virtual dataset's tile index while
// HDF5 opens it, as from_file does). An iteration reads the version of the file it opened: the
// file, its sources and (up to a share of the descriptors) its tile files stay open until it
// ends, and where that version can no longer be read it stops with an error saying so.
#include <sys/resource.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>

#include "api/dataset_reader.hpp"
#include "api/pending_writes.hpp"
#include "api/probe.hpp"
#include "api/resolve.hpp"
#include "engine/progress.hpp"
#include "engine/task.hpp"
#include "hdf5/file.hpp"
#include "io/http/url.hpp"
#include "layout/open_dataset.hpp"
#include "layout/virtual/early_open.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

namespace {

// Blocks read ahead of the consumer. At most kDepth queued + one being read + one held by
// the caller are in memory at once.
constexpr std::size_t kDepth = 2;

// The tile files an iteration holds open (OpenOptions::hold_tiles): a quarter of the descriptors
// this process may have open, and at most 4096. Tiles past them are opened block by block, and
// checked to be the files that were written.
std::size_t tiles_to_hold() {
  constexpr std::size_t kMost = 4096;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return kMost;
  }
  return static_cast<std::size_t>(std::min<rlim_t>(limit.rlim_cur / 4, kMost));
}

}  // namespace

struct BatchedReader::State {
  std::filesystem::path path;
  std::string dataset;
  OpenOptions opening;
  int device = -1;
  ProgressCallback callback;         // ReadOptions::progress
  std::optional<Progress> progress;  // counts the blocks read, where `callback` is given
  // Blocks are read from `early` (a virtual dataset known from its tile index, owned by the
  // protocol while it runs and then by `early_kept`) while its tiles are the files the index
  // names, else from `opened` (the dataset as HDF5 opens it). The task alone touches them once
  // it runs; the caller sees `info`.
  const OpenDataset* early = nullptr;
  std::unique_ptr<const OpenDataset> early_kept;
  std::optional<OpenDataset> opened;
  DatasetInfo info;
  Shape chunk;
  Shape grid;  // blocks per axis
  std::uint64_t count = 0;

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Block> ready;
  std::uint64_t produced = 0;
  std::uint64_t consumed = 0;
  std::exception_ptr error;
  bool stopping = false;
  Task<void> reading_ahead;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() { stop(); }

  // Takes the description of `dataset` and the block grid (`chunk_size` checked against it).
  void plan(const OpenDataset& source, Shape chunk_size) {
    info = source.info();
    const auto name = where(path, source.name());
    if (chunk_size.size() != info.shape.size()) {
      throw InvalidArgument(fmt::format("chunk_size {} has {} elements but {} has {} axes (shape {})",
                                        to_string(chunk_size), chunk_size.size(), name, info.shape.size(),
                                        to_string(info.shape)));
    }
    for (std::size_t a = 0; a < chunk_size.size(); ++a) {
      if (chunk_size[a] == 0) {
        throw InvalidArgument(fmt::format("chunk_size {} has element {} equal to 0; every element must be positive",
                                          to_string(chunk_size), a));
      }
    }
    chunk = std::move(chunk_size);
    grid.clear();
    for (std::size_t a = 0; a < info.shape.size(); ++a) {
      grid.push_back(info.shape[a] / chunk[a] + (info.shape[a] % chunk[a] != 0 ? 1 : 0));
    }
    try {
      count = element_count(grid);
    } catch (const InvalidArgument&) {
      throw InvalidArgument(fmt::format("chunk_size {} splits {} of shape {} into 2^64 blocks or more",
                                        to_string(chunk), name, to_string(info.shape)));
    }
    if (callback) {
      std::uint64_t total = std::numeric_limits<std::uint64_t>::max();
      try {
        total = byte_count(info.shape, info.dtype.size());
      } catch (const InvalidArgument&) {  // 2^64 bytes or more: reported as the most there is
      }
      progress.emplace(callback, total);
    }
  }

  void start() {
    stopping = false;
    reading_ahead = start_task([this] { produce(); });
  }

  // Stops the reading ahead and drops what it read.
  void stop() {
    if (reading_ahead.valid()) {
      {
        const std::lock_guard lock(mutex);
        stopping = true;
      }
      changed.notify_all();
      reading_ahead = Task<void>();  // waits for it
    }
    ready.clear();
    produced = 0;
    error = nullptr;
  }

  [[nodiscard]] Box block(std::uint64_t index) const {
    const auto& shape = info.shape;
    Box box = Box::whole(shape);
    for (std::size_t a = shape.size(); a-- > 0;) {
      const auto i = index % grid[a];
      index /= grid[a];
      box.offset[a] = i * chunk[a];
      box.extent[a] = std::min(chunk[a], shape[a] - box.offset[a]);
    }
    return box;
  }

  // Reads `box` from the version of the file opened first. A tile that is no longer the file it
  // was then (one not held open: removed or replaced by a newer write) ends the iteration: opening
  // the file again would read the new version after blocks of the old one.
  [[nodiscard]] Array read(const Box& box) {
    try {
      Progress* counted = progress ? &*progress : nullptr;
      return opened ? opened->read(box, opening.threads, device, counted)
                    : early->read(box, opening.threads, device, counted);
    } catch (const IndexMismatch& e) {
      throw replaced(e.what());
    } catch (const TileChanged& e) {
      throw replaced(e.what());
    }
  }

  [[nodiscard]] VirtualSourceError replaced(const std::string& why) const {
    return VirtualSourceError(
        fmt::format("'{}' was replaced during the iteration over dataset '{}' ({}): the version it began with "
                    "can no longer be read, and blocks of another version are never mixed in; iterate again "
                    "to read the file as it is now",
                    display_name(path.native()), dataset, why));
  }

  void produce() {
    for (std::uint64_t k = 0; k < count; ++k) {
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stopping || ready.size() < kDepth; });
        if (stopping) {
          return;
        }
      }
      try {
        auto box = block(k);
        Block b{read(box), box.offset};
        const std::lock_guard lock(mutex);
        ready.push_back(std::move(b));
        ++produced;
      } catch (...) {
        const std::lock_guard lock(mutex);
        error = std::current_exception();
        changed.notify_all();
        return;
      }
      changed.notify_all();
    }
  }
};

BatchedReader::BatchedReader(const fs::path& path, const std::string& dataset, Shape chunk_size,
                             const ReadOptions& options) {
  settle_before_open(path);
  const auto location = Location::of(path);
  state_ = std::make_unique<State>();
  auto& s = *state_;
  s.path = path;
  s.dataset = dataset;
  s.opening = open_options(options);
  fit_to_path(s.opening, location, options.threads);
  s.opening.hold_tiles = tiles_to_hold();
  probe_if_wanted(options.probe, where(path, dataset), [&] { open_as_a_read_does(location, dataset, s.opening); });
  s.device = options.device;
  s.callback = options.progress;
  // A virtual dataset with a tile index: the first blocks are read from it while HDF5 opens the
  // dataset here, and the blocks after them too where the mapping agrees with the index.
  auto readable = open_for_read(location, dataset, s.opening, [&](const OpenDataset& early) {
    s.plan(early, chunk_size);
    EarlyRead read{.stop = [&s] { s.stop(); }, .settle = [] {}};
    s.early = &early;
    s.start();
    return read;
  });
  if (readable.early) {
    s.early_kept = std::move(readable.early);
    return;
  }
  s.early = nullptr;
  s.opened = std::move(readable.opened);
  s.plan(*s.opened, std::move(chunk_size));
  s.start();
}

BatchedReader::BatchedReader(BatchedReader&&) noexcept = default;
BatchedReader& BatchedReader::operator=(BatchedReader&&) noexcept = default;

BatchedReader::~BatchedReader() = default;

std::optional<Block> BatchedReader::next() {
  auto& s = *state_;
  std::unique_lock lock(s.mutex);
  if (s.consumed == s.count) {
    return std::nullopt;
  }
  s.changed.wait(lock, [&] { return !s.ready.empty() || s.error; });
  if (s.ready.empty()) {
    std::rethrow_exception(s.error);
  }
  Block b = std::move(s.ready.front());
  s.ready.pop_front();
  ++s.consumed;
  lock.unlock();
  s.changed.notify_all();
  return b;
}

std::uint64_t BatchedReader::block_count() const noexcept { return state_->count; }

const DatasetInfo& BatchedReader::info() const noexcept { return state_->info; }

BatchedReader::Iterator BatchedReader::begin() { return Iterator(this); }

BatchedReader from_file_batched(const fs::path& path, const std::string& dataset, Shape chunk_size,
                                const ReadOptions& options) {
  return BatchedReader(path, dataset, std::move(chunk_size), options);
}

}  // namespace h5tile
