// from_file_batched: blocks in row-major order of their offsets, read ahead by one
// background thread into a queue of bounded depth.
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>
#include <h5tile/settings.hpp>

#include "api/pending_writes.hpp"
#include "hdf5/file.hpp"
#include "layout/open_dataset.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

namespace {

// Blocks read ahead of the consumer. At most kDepth queued + one being read + one held by
// the caller are in memory at once.
constexpr std::size_t kDepth = 2;

}  // namespace

struct BatchedReader::State {
  OpenDataset dataset;
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

  State(const fs::path& path, const std::string& name, const ReadOptions& options)
      : dataset(path, name, options.allow_external_sources, options.verify_checksums) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (worker.joinable()) {
      {
        const std::lock_guard lock(mutex);
        stopping = true;
      }
      changed.notify_all();
      worker.join();
    }
  }

  [[nodiscard]] Box block(std::uint64_t index) const {
    const auto& shape = dataset.info().shape;
    Box box = Box::whole(shape);
    for (std::size_t a = shape.size(); a-- > 0;) {
      const auto i = index % grid[a];
      index /= grid[a];
      box.offset[a] = i * chunk[a];
      box.extent[a] = std::min(chunk[a], shape[a] - box.offset[a]);
    }
    return box;
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
        Block b{dataset.read(box, threads, device), box.offset};
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
  state_ = std::make_unique<State>(path, dataset, options);
  const auto& info = state_->dataset.info();
  const auto name = where(path, state_->dataset.name());
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
  state_->chunk = std::move(chunk_size);
  state_->count = 1;
  for (std::size_t a = 0; a < info.shape.size(); ++a) {
    state_->grid.push_back((info.shape[a] + state_->chunk[a] - 1) / state_->chunk[a]);
    state_->count *= state_->grid.back();
  }
  state_->threads = options.threads != 0 ? options.threads : settings::threads();
  state_->device = options.device;
  state_->worker = std::thread([s = state_.get()] { s->produce(); });
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

const DatasetInfo& BatchedReader::info() const noexcept { return state_->dataset.info(); }

BatchedReader::Iterator BatchedReader::begin() { return Iterator(this); }

BatchedReader from_file_batched(const fs::path& path, const std::string& dataset, Shape chunk_size,
                                const ReadOptions& options) {
  return BatchedReader(path, dataset, std::move(chunk_size), options);
}

}  // namespace h5tile
