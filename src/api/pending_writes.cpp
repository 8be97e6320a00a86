#include "api/pending_writes.hpp"

#include <exception>

#include <h5tile/error.hpp>

#include "engine/task.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

fs::path write_key(const fs::path& path) {
  if (path.empty()) {
    // Every read and write waits here first: the one place that names an empty name (before,
    // fs::absolute's "filesystem error: cannot make absolute path").
    throw FileNotFound("the file name is empty: give the path of an HDF5 file, such as 'data/run.h5'");
  }
  // A write replaces the name in its folder (a rename), so two spellings of one folder (a
  // symbolic link to it, a link on the way) name one file: its folder's real path keys it.
  const auto target = fs::absolute(path).lexically_normal();
  std::error_code ec;
  const auto folder = fs::weakly_canonical(target.parent_path(), ec);
  return ec ? target : folder / target.filename();
}

WriteHandle PendingWrites::start(const fs::path& path, std::function<void()> work) {
  const auto key = write_key(path);
  const std::lock_guard lock(mutex_);
  // Drop finished writes whose results nobody needs from the registry (handles keep theirs).
  for (auto it = pending_.begin(); it != pending_.end();) {
    it = it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready ? pending_.erase(it) : std::next(it);
  }
  std::vector<std::shared_future<void>> before;
  const auto [lo, hi] = pending_.equal_range(key);
  for (auto it = lo; it != hi; ++it) {
    before.push_back(it->second);
  }
  auto future = start_task([before = std::move(before), work = std::move(work)] {
                  for (const auto& f : before) {
                    f.wait();
                  }
                  work();
                }).share();
  pending_.emplace(key, future);
  return WriteHandle(future);
}

void PendingWrites::wait_for(const fs::path& path) {
  std::vector<std::shared_future<void>> waits;
  {
    if (path.empty()) (void)write_key(path);  // every call comes here first: FileNotFound naming the empty name
    const std::lock_guard lock(mutex_);
    if (pending_.empty()) return;  // the common case: no key to make (it stats the folders)
    const auto [lo, hi] = pending_.equal_range(write_key(path));
    for (auto it = lo; it != hi; ++it) {
      waits.push_back(it->second);
    }
  }
  for (const auto& f : waits) {
    f.wait();
  }
}

void PendingWrites::wait_all() {
  std::vector<std::shared_future<void>> waits;
  {
    const std::lock_guard lock(mutex_);
    for (auto& [key, f] : pending_) {
      waits.push_back(f);
    }
    pending_.clear();
  }
  std::exception_ptr first;
  for (const auto& f : waits) {
    try {
      f.get();
    } catch (...) {
      if (!first) {
        first = std::current_exception();
      }
    }
  }
  if (first) {
    std::rethrow_exception(first);
  }
}

PendingWrites::~PendingWrites() {
  // Writes still running at exit finish here, before the process ends.
  for (const auto& [key, f] : pending_) {
    f.wait();
  }
}

PendingWrites& pending_writes() {
  static PendingWrites registry;
  return registry;
}

}  // namespace h5tile::detail
