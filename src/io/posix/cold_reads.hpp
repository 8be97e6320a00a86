#pragma once
// Reads of data that is not in the page cache: whether a read's pages are cached (a sample asked
// of the page cache with mincore(2), which reads nothing), and the report of which pattern ran
// (last_read_pattern). Which pattern reads cold data fastest is a property of the disk: on the
// virtual disks of the GPU machines a few readers of large requests in file order beat one
// reader per core (bench/probes/cold_read_shape.py measures it; BENCHMARKS.md).

#include <cstdint>
#include <span>

#include <h5tile/read_pattern.hpp>

namespace h5tile::detail {

// H5TILE_COLD_READS and its shape, resolved at the edge (api/resolve.cpp).
struct ColdReads {
  enum class Pattern : unsigned char { Auto, Parallel, Stream };
  Pattern pattern = Pattern::Auto;
  unsigned readers = 1;
  std::uint64_t request_bytes = std::uint64_t{32} << 20;
};

// Reads smaller than this are not sampled (and stay parallel): cold or warm, they are over in a
// few requests of each worker.
inline constexpr std::uint64_t kColdSampleMin = std::uint64_t{64} << 20;
// The most pages one read asks about.
inline constexpr std::uint32_t kColdSamples = 64;

// Pages asked about, and how many of them the page cache held.
struct PageSample {
  std::uint32_t sampled = 0;
  std::uint32_t cached = 0;
  // Cold: fewer than half the pages asked about are cached (none asked: not cold).
  [[nodiscard]] bool cold() const noexcept { return sampled > 0 && 2 * cached < sampled; }
};

// Asks the page cache about the page at each of `offsets` of `fd` (a regular file of
// `file_size` bytes), adding to `sample`. Offsets past the end are skipped; where the file
// cannot be mapped (not a regular file) nothing is added.
void sample_pages(int fd, std::uint64_t file_size, std::span<const std::uint64_t> offsets, PageSample& sample);

// The name of a pattern: "auto", "parallel", "stream".
[[nodiscard]] const char* pattern_name(ColdReads::Pattern pattern) noexcept;

// Records the report that last_read_pattern() returns.
void note_read_pattern(ReadPatternReport report);

}  // namespace h5tile::detail
