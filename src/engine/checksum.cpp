#include "engine/checksum.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {

namespace {

using Xxh64State = std::unique_ptr<XXH64_state_t, decltype(&XXH64_freeState)>;

Xxh64State new_state() {
  Xxh64State state(XXH64_createState(), XXH64_freeState);
  if (!state || XXH64_reset(state.get(), 0) != XXH_OK) {
    throw RuntimeError("cannot create an XXH64 state");
  }
  return state;
}

void hash_region(XXH64_state_t* state, const PosixFile& file, std::uint64_t offset, std::uint64_t bytes) {
  constexpr std::uint64_t kBlock = 8 << 20;
  std::vector<std::byte> buffer(std::min(bytes, kBlock));
  for (std::uint64_t done = 0; done < bytes;) {
    const auto n = std::min(kBlock, bytes - done);
    file.read_at(buffer.data(), n, offset + done);
    XXH64_update(state, buffer.data(), n);
    done += n;
  }
}

}  // namespace

std::uint64_t checksum_region(const PosixFile& file, std::uint64_t offset, std::uint64_t bytes) {
  const auto state = new_state();
  hash_region(state.get(), file, offset, bytes);
  return XXH64_digest(state.get());
}

std::optional<std::uint64_t> tile_identity(const PosixFile& file, std::uint64_t offset, std::uint64_t data_bytes,
                                           std::uint64_t file_size) {
  constexpr std::uint64_t kMaxMetadata = std::uint64_t{64} << 20;
  if (data_bytes > file_size || offset > file_size - data_bytes || file_size - data_bytes > kMaxMetadata) {
    return std::nullopt;
  }
  const auto state = new_state();
  std::array<unsigned char, 24> numbers{};  // little-endian, whatever the host's order
  std::size_t at = 0;
  for (const std::uint64_t n : {offset, data_bytes, file_size}) {
    for (int byte = 0; byte < 8; ++byte) numbers[at++] = static_cast<unsigned char>(n >> (8 * byte));
  }
  XXH64_update(state.get(), numbers.data(), numbers.size());
  hash_region(state.get(), file, 0, offset);
  hash_region(state.get(), file, offset + data_bytes, file_size - offset - data_bytes);
  return XXH64_digest(state.get());
}

}  // namespace h5tile::detail
