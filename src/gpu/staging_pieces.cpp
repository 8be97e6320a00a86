// The size of the staging pieces, the same with and without the CUDA layer (gpu/backend.hpp).
#include <algorithm>

#include "gpu/backend.hpp"

namespace h5tile::detail::gpu {

// On the 16-core H200 machine 2 x 16 pieces of 4 MiB read at 50-52 GB/s where 32 of 8 MiB gave
// 40-51 (BENCHMARKS.md, GPU tuning).
Staging staging_for(std::size_t bytes, std::size_t task_size, unsigned threads) {
  const auto most = std::min(task_size, bytes);
  const auto least = std::min<std::size_t>(std::size_t{1} << 20, most);
  return {bytes, std::clamp<std::size_t>(bytes / (2 * std::size_t{std::max(threads, 1U)}), least, most)};
}

}  // namespace h5tile::detail::gpu
