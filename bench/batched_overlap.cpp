// from_file_batched with prefetch: does reading the next block overlap the caller's work on the
// current one, and does memory stay at a few blocks? Measures, on one file:
//   R: the blocks read with no work;  W: the work alone (per block as long as one block's read);
//   T: the blocks read with the work done on each;  target T <= 0.65 (R + W),
// and the peak resident memory the batched reads add (target <= 3 blocks + 64 MiB).
//   h5tile_batched_overlap make FILE GIB      (writes a float32 [rows, 4096] dataset /x)
//   h5tile_batched_overlap run FILE BLOCK_ROWS [--cold]   (--cold: drop the page cache before
//   each pass; needs root)
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <h5tile/h5tile.hpp>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool drop_caches() {
  ::sync();
  std::ofstream f("/proc/sys/vm/drop_caches");
  return f && (f << "3\n") && f.flush();
}

long peak_rss_kib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// The caller's work on a block: passes over its bytes until `seconds` have gone by.
double work(const h5tile::Block& block, double seconds) {
  const auto t0 = Clock::now();
  const auto* p = reinterpret_cast<const float*>(block.data.data());
  const auto n = block.data.nbytes() / sizeof(float);
  double sum = 0;
  do {
    for (std::size_t i = 0; i < n; i += 16) sum += p[i];
  } while (since(t0) < seconds);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "make") == 0) {
    const auto rows = static_cast<std::uint64_t>(std::atof(argv[3]) * (1ULL << 30)) / 4 / 4096;
    h5tile::Array a(h5tile::DType(h5tile::DTypeKind::Float32), {rows, 4096});
    auto* f = reinterpret_cast<float*>(a.data());
    for (std::uint64_t i = 0; i < a.size(); ++i) f[i] = static_cast<float>(i % 1000);
    h5tile::to_file(a.view(), argv[2], "/x", {.layout = h5tile::Layout::Contiguous}).wait();
    return 0;
  }
  if (argc < 4 || argc > 5 || std::strcmp(argv[1], "run") != 0) {
    std::fprintf(stderr, "usage: %s make FILE GIB | run FILE BLOCK_ROWS [--cold]\n", argv[0]);
    return 2;
  }
  const bool cold = argc == 5 && std::strcmp(argv[4], "--cold") == 0;
  if (cold && !drop_caches()) {
    std::fprintf(stderr, "--cold: cannot drop the page cache (not root?)\n");
    return 2;
  }
  const std::string file = argv[2];
  const auto block_rows = std::strtoull(argv[3], nullptr, 10);
  const auto info = h5tile::describe(file, "/x");
  const double block_mib = static_cast<double>(block_rows * info.shape[1] * 4) / (1 << 20);
  (void)h5tile::from_file_batched(file, "/x", {block_rows, info.shape[1]}).block_count();
  const long baseline = peak_rss_kib();

  if (cold) drop_caches();
  auto t0 = Clock::now();
  std::uint64_t blocks = 0;
  for (auto& block : h5tile::from_file_batched(file, "/x", {block_rows, info.shape[1]})) {
    (void)block;
    ++blocks;
  }
  const double read_s = since(t0);
  const double per_block = read_s / static_cast<double>(blocks);

  if (cold) drop_caches();
  t0 = Clock::now();
  double sink = 0;
  for (auto& block : h5tile::from_file_batched(file, "/x", {block_rows, info.shape[1]})) {
    sink += work(block, per_block);
  }
  const double total_s = since(t0);
  const double work_s = per_block * static_cast<double>(blocks);
  const double peak_mib = static_cast<double>(peak_rss_kib() - baseline) / 1024;

  std::printf("%s: %llu blocks of %.0f MiB, %s page cache\n", file.c_str(), static_cast<unsigned long long>(blocks),
              block_mib, cold ? "cold" : "warm");
  std::printf("read alone R = %.3f s, work alone W = %.3f s, both T = %.3f s\n", read_s, work_s, total_s);
  std::printf("T / (R + W) = %.2f (target <= 0.65)\n", total_s / (read_s + work_s));
  std::printf("peak memory added = %.0f MiB, limit 3 blocks + 64 MiB = %.0f MiB (%s)\n", peak_mib, 3 * block_mib + 64,
              peak_mib <= 3 * block_mib + 64 ? "within" : "OVER");
  return sink == -1 ? 1 : 0;
}
