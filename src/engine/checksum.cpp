#include "engine/checksum.hpp"

#include <memory>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {

std::uint64_t checksum_region(const PosixFile& file, std::uint64_t offset, std::uint64_t bytes) {
  constexpr std::uint64_t kBlock = 8 << 20;
  const std::unique_ptr<XXH64_state_t, decltype(&XXH64_freeState)> state(XXH64_createState(), XXH64_freeState);
  if (!state || XXH64_reset(state.get(), 0) != XXH_OK) {
    throw RuntimeError("cannot create an XXH64 state");
  }
  std::vector<std::byte> buffer(std::min(bytes, kBlock));
  for (std::uint64_t done = 0; done < bytes;) {
    const auto n = std::min(kBlock, bytes - done);
    file.read_at(buffer.data(), n, offset + done);
    XXH64_update(state.get(), buffer.data(), n);
    done += n;
  }
  return XXH64_digest(state.get());
}

}  // namespace h5tile::detail
