#include "io/posix/cold_reads.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <mutex>
#include <utility>

namespace h5tile::detail {
namespace {

std::mutex report_mutex;
ReadPatternReport last_report;

}  // namespace

void sample_pages(int fd, std::uint64_t file_size, std::span<const std::uint64_t> offsets, PageSample& sample) {
  if (fd < 0 || file_size == 0 || offsets.empty()) return;
  // One mapping of the whole file (it reads nothing and costs one VMA), one mincore per page.
  void* map = ::mmap(nullptr, file_size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return;
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  for (const auto offset : offsets) {
    if (offset >= file_size) continue;
    unsigned char resident = 0;
    if (::mincore(static_cast<std::byte*>(map) + offset / page * page, 1, &resident) != 0) continue;
    ++sample.sampled;
    if ((resident & 1U) != 0) ++sample.cached;
  }
  ::munmap(map, file_size);
}

const char* pattern_name(ColdReads::Pattern pattern) noexcept {
  switch (pattern) {
    case ColdReads::Pattern::Parallel: return "parallel";
    case ColdReads::Pattern::Stream: return "stream";
    case ColdReads::Pattern::Auto: break;
  }
  return "auto";
}

void note_read_pattern(ReadPatternReport report) {
  const std::lock_guard lock(report_mutex);
  last_report = std::move(report);
}

}  // namespace h5tile::detail

namespace h5tile {

ReadPatternReport last_read_pattern() {
  const std::lock_guard lock(detail::report_mutex);
  return detail::last_report;
}

}  // namespace h5tile
