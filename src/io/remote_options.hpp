#pragma once
// How reads of a remote object (a URL) behave: resolved from the settings where a call enters
// the library (api/resolve.cpp) and passed down as values.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace h5tile::detail {

// Runs body(0) .. body(count - 1), several at once, and returns when all have run; `body` must not
// throw. Given where a call enters the library (api/resolve.cpp: the engine's pool), so that io/ and
// hdf5/ run requests side by side without a pool of their own.
using RunParallel = std::function<void(std::size_t count, const std::function<void(std::size_t)>& body)>;

struct RemoteOptions {
  // Connections kept open to the server, shared by the workers (and requests in flight at once).
  unsigned connections = 16;
  // The unit of HDF5's metadata cache over the object, and the first request at open.
  std::uint64_t block_size = std::uint64_t{4} << 20;
  // Seconds to connect, and the longest a response may stall; a range is not retried once four
  // times this has passed since its first attempt.
  double timeout_s = 30;
  // Retries of one range after a failure worth retrying (5xx, 429, a dropped connection, a
  // timeout), with exponential backoff and jitter.
  unsigned retries = 5;
  // CA certificates for TLS ("": libcurl's default); verification is always on.
  std::string ca_bundle{};
  // The AWS_* variables of the environment (AWS_ACCESS_KEY_ID, AWS_REGION, AWS_ENDPOINT_URL,
  // AWS_NO_SIGN_REQUEST, ...) that s3:// URLs resolve with, as read where the call entered the
  // library; unset ones are absent.
  std::map<std::string, std::string, std::less<>> aws{};
  // Where requests that are only worth making side by side run (the B-tree nodes the remote driver
  // fetches ahead of HDF5: hdf5/remote_driver.cpp); empty: such requests are not made.
  RunParallel parallel{};
};

}  // namespace h5tile::detail
