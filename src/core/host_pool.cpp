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

// Frees kept buffer `it`, the oldest of its size, and returns the next. Caller holds the lock.
std::list<Kept>::iterator drop(Pool& p, std::list<Kept>::iterator it) noexcept {
  const auto queue = p.by_size.find({it->bytes, it->align});
  queue->second.pop_front();  // `it`: a size's queue is in the order of release, as `kept` is
  if (queue->second.empty()) p.by_size.erase(queue);
  std::free(it->memory);
  count(p, *it, false);
  return p.kept.erase(it);
}

// Frees the oldest kept buffers until at most `limit` bytes are held. Caller holds the lock.
void free_down_to(Pool& p, std::uint64_t limit) noexcept {
  while (p.held > limit && !p.kept.empty()) drop(p, p.kept.begin());
}

// Frees the oldest small kept buffers until at most `limit` bytes of them are held, so that a
// program that moves on to another size of small reads has its new size kept. Caller holds the lock.
void free_small_down_to(Pool& p, std::uint64_t limit) noexcept {
  for (auto it = p.kept.begin(); p.held_small > limit && it != p.kept.end();) {
    it = it->bytes < kLazyFree ? drop(p, it) : std::next(it);
  }
}

// The pool's limit where nothing may throw (release runs in destructors and at exit): a bad
// H5TILE_HOST_POOL, which allocate() reports to its caller, keeps nothing here.
std::uint64_t limit_or_none() noexcept {
  try {
    return settings::host_pool_bytes();
  } catch (...) {
    return 0;
  }
}

}  // namespace

std::byte* allocate(std::uint64_t bytes, std::uint64_t align) {
  (void)settings::host_pool_bytes();  // a bad H5TILE_HOST_POOL fails the call that allocates, naming it
  auto& p = pool();
  if (bytes >= kSmallest) {
    std::lock_guard lock(p.mutex);
    if (const auto queue = p.by_size.find({bytes, align}); queue != p.by_size.end()) {
      const auto newest = queue->second.back();
      const Kept reused = *newest;
      p.lent.emplace(reused.memory, reused);  // first: where it throws, the buffer stays kept
      queue->second.pop_back();
      if (queue->second.empty()) p.by_size.erase(queue);
      p.kept.erase(newest);
      count(p, reused, false);
      return reused.memory;
    }
  }
  auto* memory = static_cast<std::byte*>(std::aligned_alloc(align, bytes));
  if (memory != nullptr && bytes >= kSmallest) {
    try {
      std::lock_guard lock(p.mutex);
      p.lent.emplace(memory, Kept{memory, bytes, align});
    } catch (...) {
      std::free(memory);  // no memory for the pool's books either
      return nullptr;
    }
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
  const auto freed = [&] {
    lock.unlock();
    std::free(memory);
  };
  if (buffer.bytes > limit_or_none()) return freed();
  const bool small = buffer.bytes < kLazyFree;
  if (!small) {
    // Advice only: without MADV_FREE (kernels before 4.5) the pages simply stay. Outside the
    // lock (other threads' reads keep allocating); the buffer is in no list meanwhile, and the
    // limit is read again after (set_host_pool_bytes may have lowered it).
    lock.unlock();
    (void)::madvise(memory, buffer.bytes, MADV_FREE);
    lock.lock();
  }
  const std::uint64_t limit = limit_or_none();
  if (buffer.bytes > limit) return freed();
  if (small) free_small_down_to(p, kSmallHeld - buffer.bytes);
  free_down_to(p, limit - buffer.bytes);
  // Where there is no memory for the pool's books, the buffer is freed, not kept.
  try {
    p.kept.push_back(buffer);
  } catch (...) {
    return freed();
  }
  const std::pair key{buffer.bytes, buffer.align};
  try {
    auto& queue = p.by_size[key];
    try {
      queue.push_back(std::prev(p.kept.end()));
    } catch (...) {
      if (queue.empty()) p.by_size.erase(key);
      throw;
    }
  } catch (...) {
    p.kept.pop_back();
    return freed();
  }
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
