#pragma once
// The writes started by to_file and not yet waited for: fence() waits for all of them, and
// a later read or write of the same path waits for the earlier writes of that path.

#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <vector>

#include <h5tile/io.hpp>

namespace h5tile::detail {

class PendingWrites {
 public:
  PendingWrites() = default;
  PendingWrites(const PendingWrites&) = delete;
  PendingWrites& operator=(const PendingWrites&) = delete;
  // Waits for the writes still running (at exit: they complete before the process ends).
  ~PendingWrites();

  // Runs `work` as a task (engine/task.hpp) after the pending writes of `path` have finished.
  [[nodiscard]] WriteHandle start(const std::filesystem::path& path, std::function<void()> work);
  // Waits for the pending writes of `path` (errors stay with their handles).
  void wait_for(const std::filesystem::path& path);
  // Waits for every pending write; throws the first error among them.
  void wait_all();

 private:
  std::mutex mutex_;
  std::multimap<std::filesystem::path, std::shared_future<void>> pending_;
};

[[nodiscard]] PendingWrites& pending_writes();

// The key under which writes of `path` are ordered.
[[nodiscard]] std::filesystem::path write_key(const std::filesystem::path& path);

}  // namespace h5tile::detail
