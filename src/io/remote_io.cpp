#include "io/remote_io.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace h5tile::detail {
namespace {

struct Report {
  std::mutex mutex;
  RemoteIoCounts counts;
  std::unordered_map<std::thread::id, std::uint64_t> per_thread;
};

Report& report() {
  static Report r;
  return r;
}

}  // namespace

void start_remote_io_report() {
  auto& r = report();
  const std::lock_guard lock(r.mutex);
  r.counts = {};
  r.per_thread.clear();
}

void count_remote_request(std::uint64_t bytes, std::uint64_t retries) {
  auto& r = report();
  const std::lock_guard lock(r.mutex);
  r.counts.requests += 1 + retries;
  r.counts.bytes += bytes;
  r.counts.retries += retries;
  const auto mine = r.per_thread[std::this_thread::get_id()] += 1 + retries;
  r.counts.critical_path = std::max(r.counts.critical_path, mine);
}

RemoteIoCounts remote_io_report() {
  auto& r = report();
  const std::lock_guard lock(r.mutex);
  return r.counts;
}

}  // namespace h5tile::detail
