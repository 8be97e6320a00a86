// Why h5tile's arrays use huge pages: 4 threads pread a file from the page cache into a fresh
// 2 GiB buffer (4 KiB pages), a fresh buffer advised MADV_HUGEPAGE, and a buffer touched
// beforehand. Usage: h5tile_fresh_memory_read FILE (at least 2 GiB, read once before to warm it).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  const std::size_t n = std::size_t{2} << 30;
  const char* modes[] = {"fresh, 4 KiB pages", "fresh, MADV_HUGEPAGE", "touched before (memset)"};
  for (int mode = 0; mode < 3; ++mode) {
    auto* p = static_cast<char*>(std::aligned_alloc(2 << 20, n));
    if (mode == 1) ::madvise(p, n, MADV_HUGEPAGE);
    if (mode == 2) std::memset(p, 0, n);
    const auto t0 = std::chrono::steady_clock::now();
    const int fd = ::open(argv[1], O_RDONLY);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        const std::size_t chunk = n / 4;
        for (std::size_t done = 0; done < chunk;) {
          const auto r = ::pread(fd, p + t * chunk + done, std::min<std::size_t>(8 << 20, chunk - done),
                                 static_cast<off_t>(t * chunk + done));
          if (r <= 0) break;
          done += static_cast<std::size_t>(r);
        }
      });
    }
    for (auto& t : threads) t.join();
    ::close(fd);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-28s %.3f s  %.2f GB/s\n", modes[mode], s, static_cast<double>(n) / s / 1e9);
    std::free(p);
  }
  return 0;
}
