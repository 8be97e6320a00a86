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

void hash_region(XXH64_state_t* state, const ByteSource& file, std::uint64_t offset, std::uint64_t bytes,
                 std::vector<std::byte>& buffer) {
  for (std::uint64_t done = 0; done < bytes;) {
    const auto n = std::min<std::uint64_t>(buffer.size(), bytes - done);
    file.read_at(buffer.data(), n, offset + done);
    XXH64_update(state, buffer.data(), n);
    done += n;
  }
}

void hash_region(XXH64_state_t* state, const ByteSource& file, std::uint64_t offset, std::uint64_t bytes) {
  constexpr std::uint64_t kBlock = 8 << 20;
  std::vector<std::byte> buffer(std::max<std::uint64_t>(1, std::min(bytes, kBlock)));
  hash_region(state, file, offset, bytes, buffer);
}

}  // namespace

std::uint64_t checksum_region(const ByteSource& file, std::uint64_t offset, std::uint64_t bytes) {
  const auto state = new_state();
  hash_region(state.get(), file, offset, bytes);
  return XXH64_digest(state.get());
}

struct RegionChecksum::State {
  Xxh64State hash = new_state();
  // Read back in blocks that stay in the core's cache between the read and the hash.
  std::vector<std::byte> buffer = std::vector<std::byte>(std::size_t{512} << 10);
};

RegionChecksum::RegionChecksum(const PosixFile& file, std::uint64_t offset, std::uint64_t bytes)
    : file_(file), end_(offset + bytes), hashed_(offset), state_(std::make_unique<State>()) {}

RegionChecksum::~RegionChecksum() = default;

void RegionChecksum::hash(std::uint64_t from, std::uint64_t to) {
  hash_region(state_->hash.get(), file_, from, to - from, state_->buffer);
}

void RegionChecksum::written(std::uint64_t begin, std::uint64_t end) {
  end = std::min(end, end_);
  std::unique_lock lock(mutex_);
  begin = std::max(begin, hashed_);
  if (begin >= end || broken_) {
    return;
  }
  auto& ready_end = ready_[begin];
  ready_end = std::max(ready_end, end);
  if (busy_) {
    return;  // the thread hashing now takes this range too once it reaches it
  }
  busy_ = true;
  // Hash, in order, every written range that starts where the hash stands.
  for (auto it = ready_.begin(); it != ready_.end() && it->first <= hashed_; it = ready_.begin()) {
    const auto from = hashed_;
    const auto to = std::max(hashed_, it->second);
    ready_.erase(it);
    if (to == from) {
      continue;
    }
    lock.unlock();
    try {
      hash(from, to);
    } catch (...) {
      lock.lock();
      busy_ = false;
      broken_ = true;
      throw;
    }
    lock.lock();
    hashed_ = to;
  }
  busy_ = false;
}

std::uint64_t RegionChecksum::finish() {
  const std::lock_guard lock(mutex_);
  if (broken_ || busy_) {
    throw RuntimeError("a tile's checksum could not be computed: reading its bytes back failed");
  }
  if (hashed_ < end_) {
    hash(hashed_, end_);
    hashed_ = end_;
  }
  ready_.clear();
  return XXH64_digest(state_->hash.get());
}

std::optional<std::uint64_t> tile_identity(const ByteSource& file, std::uint64_t offset, std::uint64_t data_bytes,
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
