#pragma once
// Host memory for the arrays reads return. A program that calls from_file in a loop frees
// each result and asks for one of the same size again; new memory costs a page fault and the
// kernel's zero-fill per page (about a tenth of a warm read), so buffers freed by arrays are
// kept for reuse, up to the host_pool setting (settings.hpp). Small ones too: a Dask or xarray
// task reading one 1 MiB chunk got memory that glibc had just trimmed from its heap, and paid
// more in page faults and unmapping than the read itself (bench/probes/small_result_memory.py);
// many threads doing so also wait on the kernel's lock of the address space.
//
// Kept buffers of kLazyFree bytes and more are marked MADV_FREE: the kernel takes their pages
// back when memory is needed elsewhere (a reuse then faults again, as new memory would), and
// reuses them without a fault otherwise. Smaller ones are kept as they are (marking 1 MiB costs
// about what its faults would), at most kSmallHeld bytes of them (the oldest go first).

#include <cstddef>
#include <cstdint>

namespace h5tile::detail::host_pool {

// Buffers smaller than this are never kept: below glibc's first mmap threshold, malloc keeps and
// reuses them in its heap on its own.
inline constexpr std::uint64_t kSmallest = std::uint64_t{128} << 10;
inline constexpr std::uint64_t kLazyFree = std::uint64_t{32} << 20;
inline constexpr std::uint64_t kSmallHeld = std::uint64_t{256} << 20;

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
