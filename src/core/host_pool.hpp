#pragma once
// Host memory for the arrays reads return. A program that calls from_file in a loop frees
// each result and asks for one of the same size again; new memory costs a page fault and the
// kernel's zero-fill per page (about a tenth of a warm read), so large buffers freed by arrays
// are kept for reuse, up to the host_pool setting (settings.hpp). Kept buffers are marked
// MADV_FREE: the kernel takes their pages back when memory is needed elsewhere (a reuse then
// faults again, as new memory would), and reuses them without a fault otherwise.

#include <cstddef>
#include <cstdint>

namespace h5tile::detail::host_pool {

// Buffers smaller than this are never kept (malloc reuses small blocks on its own).
inline constexpr std::uint64_t kSmallest = std::uint64_t{32} << 20;

// `bytes` of host memory aligned to `align` (a power of two, at least the page size; bytes
// a multiple of align): a kept buffer of exactly that size where there is one, else new
// memory. Null where the system has no memory to give.
[[nodiscard]] std::byte* allocate(std::uint64_t bytes, std::uint64_t align);

// Takes back memory from allocate: kept for reuse while the pool holds at most the
// host_pool setting (the oldest kept buffers are freed first to make room), else freed.
void release(std::byte* memory) noexcept;

// Frees the oldest kept buffers until at most `limit` bytes are kept (set_host_pool_bytes
// calls it with the new limit).
void trim_to(std::uint64_t limit) noexcept;

// Bytes kept for reuse now.
[[nodiscard]] std::uint64_t held_bytes() noexcept;

}  // namespace h5tile::detail::host_pool
