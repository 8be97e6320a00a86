#include "core/host_pool.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <iterator>
#include <list>
#include <mutex>
#include <unordered_map>

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
  std::uint64_t held = 0;
};

Pool& pool() {
  static auto* p = new Pool;  // never destroyed: arrays may be freed during exit
  return *p;
}

// Frees the oldest kept buffers until at most `limit` bytes are held. Caller holds the lock.
void free_down_to(Pool& p, std::uint64_t limit) noexcept {
  while (p.held > limit && !p.kept.empty()) {
    std::free(p.kept.front().memory);
    p.held -= p.kept.front().bytes;
    p.kept.pop_front();
  }
}

}  // namespace

std::byte* allocate(std::uint64_t bytes, std::uint64_t align) {
  auto& p = pool();
  if (bytes >= kSmallest) {
    std::lock_guard lock(p.mutex);
    for (auto it = p.kept.begin(); it != p.kept.end(); ++it) {
      if (it->bytes == bytes && it->align == align) {
        const Kept reused = *it;
        p.kept.erase(it);
        p.held -= reused.bytes;
        p.lent.emplace(reused.memory, reused);
        return reused.memory;
      }
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
  if (buffer.bytes > limit) {
    lock.unlock();
    std::free(memory);
    return;
  }
  free_down_to(p, limit - buffer.bytes);
  // Advice only: without MADV_FREE (kernels before 4.5) the pages simply stay.
  (void)::madvise(memory, buffer.bytes, MADV_FREE);
  p.kept.push_back(buffer);
  p.held += buffer.bytes;
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
