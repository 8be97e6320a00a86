// from_file_batched: blocks in row-major order of their offsets, read ahead by one
// background thread into a queue of bounded depth (from a virtual dataset's tile index while
// HDF5 opens it, as from_file does).
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>
#include <h5tile/settings.hpp>

#include "api/pending_writes.hpp"
#include "api/probe.hpp"
#include "api/resolve.hpp"
#include "hdf5/file.hpp"
#include "layout/open_dataset.hpp"
#include "layout/virtual/early_open.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

namespace {

// Blocks read ahead of the consumer. At most kDepth queued + one being read + one held by
// the caller are in memory at once.
constexpr std::size_t kDepth = 2;

}  // namespace

struct BatchedReader::State {
  // Blocks are read from `early` (a virtual dataset known from its tile index) while it agrees
  // with the mapping, else from `opened` (the dataset as HDF5 opens it). The worker thread alone
  // touches them once it runs; the caller sees `info`.
  std::optional<OpenDataset> early;
  std::optional<OpenDataset> opened;
  std::function<OpenDataset()> open;
  DatasetInfo info;
  Shape chunk;
  Shape grid;  // blocks per axis
  std::uint64_t count = 0;
  unsigned threads = 1;
  int device = -1;

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Block> ready;
  std::uint64_t produced = 0;
  std::uint64_t consumed = 0;
  std::exception_ptr error;
  bool stopping = false;
  std::thread worker;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() { stop(); }

  [[nodiscard]] const OpenDataset& dataset() const { return opened ? *opened : *early; }

  // Takes the dataset's description and the block grid (`chunk_size` checked against it).
  void plan(const fs::path& path, Shape chunk_size) {
    info = dataset().info();
    const auto name = where(path, dataset().name());
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
    count = 1;
    for (std::size_t a = 0; a < info.shape.size(); ++a) {
      grid.push_back((info.shape[a] + chunk[a] - 1) / chunk[a]);
      count *= grid.back();
    }
  }

  void start() {
    stopping = false;
    try {
      worker = std::thread([this] { produce(); });
    } catch (const std::system_error& e) {
      throw RuntimeError(fmt::format("cannot start the thread that reads ahead: {}", e.what()));
    }
  }

  // Stops the worker and drops what it read.
  void stop() {
    if (worker.joinable()) {
      {
        const std::lock_guard lock(mutex);
        stopping = true;
      }
      changed.notify_all();
      worker.join();
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

  [[nodiscard]] Array read(const Box& box) {
    if (!opened) {
      try {
        return early->read(box, threads, device);
      } catch (const IndexMismatch&) {
        opened.emplace(open());  // a tile's file changed since the index was checked: use the mapping
      }
    }
    return opened->read(box, threads, device);
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
  pending_writes().wait_for(path);
  state_ = std::make_unique<State>();
  auto& s = *state_;
  const auto opening = open_options(options);
  probe_if_wanted(options.probe, where(path, dataset), [&] { open_as_a_read_does(path, dataset, opening); });
  s.open = [path, dataset, opening] { return OpenDataset(path, dataset, opening); };
  s.threads = opening.threads;
  s.device = options.device;
  // A virtual dataset with a tile index: the first blocks are read from it while HDF5 opens the
  // dataset here; they are kept only if the mapping agrees with the index.
  if (early_reads_allowed(opening)) {
    s.early = OpenDataset::from_tile_index(path, dataset, opening);
  }
  if (s.early) {
    try {
      s.plan(path, chunk_size);
    } catch (const InvalidArgument&) {
      s.early.reset();  // judged on the index: let the dataset as HDF5 opens it decide
    }
  }
  if (s.early) {
    s.start();
    if (s.early->mapping_agrees()) {
      ++early_read_counts().kept;
      return;
    }
    ++early_read_counts().redone;
    s.stop();
    s.early.reset();
  }
  s.opened.emplace(s.open());
  s.plan(path, std::move(chunk_size));
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
