#include "core/host_pool.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <deque>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <h5tile/settings.hpp>

namespace h5tile::detail::host_pool {
namespace {

struct Kept {
  std::byte* memory;
  std::uint64_t bytes;
  std::uint64_t align;
};

struct Pool {
  std::mutex mutex;
  std::unordered_map<std::byte*, Kept> lent;  // handed out and not yet released
  std::list<Kept> kept;                       // oldest first
  // The kept buffers of each (bytes, align), oldest first: a reuse takes the newest (its pages
  // the likeliest still in the cache), making room frees the oldest of all (`kept`'s front,
  // also the front of its size's queue).
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::deque<std::list<Kept>::iterator>> by_size;
  std::uint64_t held = 0;
  std::uint64_t held_small = 0;  // of which in buffers under kLazyFree
};

void count(Pool& p, const Kept& buffer, bool in) noexcept {
  const auto bytes = buffer.bytes;
  p.held = in ? p.held + bytes : p.held - bytes;
  if (bytes < kLazyFree) p.held_small = in ? p.held_small + bytes : p.held_small - bytes;
}

Pool& pool() {
  static auto* p = new Pool;  // never destroyed: arrays may be freed during exit
  return *p;
}

// Frees the oldest kept buffers until at most `limit` bytes are held. Caller holds the lock.
void free_down_to(Pool& p, std::uint64_t limit) noexcept {
  while (p.held > limit && !p.kept.empty()) {
    const Kept oldest = p.kept.front();
    const auto queue = p.by_size.find({oldest.bytes, oldest.align});
    queue->second.pop_front();  // the same buffer: both are in the order of release
    if (queue->second.empty()) p.by_size.erase(queue);
    p.kept.pop_front();
    std::free(oldest.memory);
    count(p, oldest, false);
  }
}

}  // namespace

std::byte* allocate(std::uint64_t bytes, std::uint64_t align) {
  auto& p = pool();
  if (bytes >= kSmallest) {
    std::lock_guard lock(p.mutex);
    if (const auto queue = p.by_size.find({bytes, align}); queue != p.by_size.end()) {
      const auto newest = queue->second.back();
      const Kept reused = *newest;
      queue->second.pop_back();
      if (queue->second.empty()) p.by_size.erase(queue);
      p.kept.erase(newest);
      count(p, reused, false);
      p.lent.emplace(reused.memory, reused);
      return reused.memory;
    }
  }
  auto* memory = static_cast<std::byte*>(std::aligned_alloc(align, bytes));
  if (memory != nullptr && bytes >= kSmallest) {
    std::lock_guard lock(p.mutex);
    p.lent.emplace(memory, Kept{memory, bytes, align});
  }
  return memory;
}

void release(std::byte* memory) noexcept {
  if (memory == nullptr) {
    return;
  }
  auto& p = pool();
  std::unique_lock lock(p.mutex);
  const auto it = p.lent.find(memory);
  if (it == p.lent.end()) {
    lock.unlock();
    std::free(memory);  // a small buffer, never lent through the pool's books
    return;
  }
  const Kept buffer = it->second;
  p.lent.erase(it);
  const std::uint64_t limit = settings::host_pool_bytes();
  const bool small = buffer.bytes < kLazyFree;
  if (buffer.bytes > limit || (small && p.held_small + buffer.bytes > kSmallHeld)) {
    lock.unlock();
    std::free(memory);
    return;
  }
  if (!small) {
    // Advice only: without MADV_FREE (kernels before 4.5) the pages simply stay. Outside the
    // lock (other threads' reads keep allocating); the buffer is in no list meanwhile.
    lock.unlock();
    (void)::madvise(memory, buffer.bytes, MADV_FREE);
    lock.lock();
  }
  free_down_to(p, limit - buffer.bytes);
  p.kept.push_back(buffer);
  p.by_size[{buffer.bytes, buffer.align}].push_back(std::prev(p.kept.end()));
  count(p, buffer, true);
}

void trim_to(std::uint64_t limit) noexcept {
  auto& p = pool();
  std::lock_guard lock(p.mutex);
  free_down_to(p, limit);
}

std::uint64_t held_bytes() noexcept {
  auto& p = pool();
  std::lock_guard lock(p.mutex);
  return p.held;
}

}  // namespace h5tile::detail::host_pool
