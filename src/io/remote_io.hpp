#pragma once
// What the remote reads of a call cost: requests, bytes, retries, and the requests on its
// critical path. Process-wide, like the device report (gpu/backend.hpp): a call entering the
// library starts a new report (api/), the HTTP backend counts into it.

#include <cstdint>

namespace h5tile::detail {

struct RemoteIoCounts {
  std::uint64_t requests = 0;
  std::uint64_t bytes = 0;
  std::uint64_t retries = 0;
  // The most requests that one thread made, one after another, during the call: the round trips
  // that its time cannot hide (metadata reads are serial; data requests run in parallel).
  std::uint64_t critical_path = 0;
};

// Starts a new report (counts to zero).
void start_remote_io_report();
// Counts one request of `bytes` bytes made by the calling thread, after `retries` retries.
void count_remote_request(std::uint64_t bytes, std::uint64_t retries);
// The report of the last call.
[[nodiscard]] RemoteIoCounts remote_io_report();

}  // namespace h5tile::detail
