#pragma once
/// @file
/// How the last large read of a local file ran: the pattern that settings::cold_reads() chose
/// and what the page-cache sample behind the choice found.

#include <cstdint>
#include <string>

namespace h5tile {

/// Process-wide, like last_device_io(): with reads on several threads at once, the last one to
/// finish choosing is reported.
struct ReadPatternReport {
  /// "parallel" (one task per worker, as warm data is read) or "stream" (a few readers of large
  /// requests in file order), "" before any read of a local file.
  std::string pattern;
  std::string setting;  ///< H5TILE_COLD_READS as resolved for the read: "auto", "parallel" or "stream"
  /// What decided it: "cold: 0 of 64 sampled pages cached", "warm: 64 of 64 sampled pages
  /// cached", "not sampled: a read under 64 MiB", "compressed chunks: decoded on every worker", ...
  std::string detection;
  std::uint32_t sampled_pages = 0;  ///< pages asked of the page cache (mincore), 0 where none were
  std::uint32_t cached_pages = 0;   ///< of those, the pages it held
  unsigned readers = 0;             ///< threads that read the file
  std::uint64_t request_bytes = 0;  ///< the largest request (task) of one reader
};
[[nodiscard]] ReadPatternReport last_read_pattern();

}  // namespace h5tile
