// Where a write into one shared file loses time: plain pwrite loops in the shapes h5tile's
// writes take (one thread; threads each owning a contiguous range; threads taking 8 MiB tasks
// in turn), into a new file and into one already sized (sparse, as HDF5 leaves a contiguous
// dataset allocated early), next to h5tile's contiguous and virtual to_file, same bytes, no
// fsync (page-cache speed). Prints GB/s per variant.
//   h5tile_single_file_write DIR GIB THREADS
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <h5tile/h5tile.hpp>

namespace {
namespace fs = std::filesystem;

double seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void pwrite_all(int fd, const char* data, std::uint64_t lo, std::uint64_t hi, std::uint64_t piece) {
  for (std::uint64_t pos = lo; pos < hi;) {
    const auto n = ::pwrite(fd, data + pos, std::min(piece, hi - pos), static_cast<off_t>(pos));
    if (n <= 0) std::abort();
    pos += static_cast<std::uint64_t>(n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DIR GIB THREADS\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[1];
  const std::uint64_t bytes = static_cast<std::uint64_t>(std::atof(argv[2]) * (1ULL << 30)) / (16 << 20) * (16 << 20);
  const unsigned threads = static_cast<unsigned>(std::atoi(argv[3]));
  fs::create_directories(dir);
  std::vector<char> data(bytes);
  for (std::uint64_t i = 0; i < bytes; i += 4096) data[i] = static_cast<char>(i >> 12);
  const auto file = dir / "one.bin";

  const auto run = [&](const char* name, bool sized, bool interleaved, unsigned n) {
    fs::remove(file);
    const double s = seconds([&] {
      const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (sized && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) std::abort();
      std::vector<std::thread> ts;
      std::atomic<std::uint64_t> next{0};
      constexpr std::uint64_t kTask = 8 << 20;
      for (unsigned t = 0; t < n; ++t) {
        ts.emplace_back([&, t] {
          if (interleaved) {
            for (std::uint64_t k; (k = next.fetch_add(1)) * kTask < bytes;) {
              pwrite_all(fd, data.data(), k * kTask, std::min(bytes, (k + 1) * kTask), kTask);
            }
          } else {
            pwrite_all(fd, data.data(), bytes * t / n / 4096 * 4096,
                       t + 1 == n ? bytes : bytes * (t + 1) / n / 4096 * 4096, 16 << 20);
          }
        });
      }
      for (auto& t : ts) t.join();
      ::close(fd);
    });
    std::printf("%-62s %7.2f GB/s\n", name, static_cast<double>(bytes) / s / 1e9);
  };
  std::printf("%.2f GB, %u threads, no fsync, in %s\n", static_cast<double>(bytes) / 1e9, threads, dir.c_str());
  const auto gbps = [&](double s) { return static_cast<double>(bytes) / s / 1e9; };
  for (int round = 0; round < 2; ++round) {
    run("plain loop, 1 thread, new file", false, false, 1);
    run("plain loop, threads own ranges, new file", false, false, threads);
    run("plain loop, threads own ranges, file sized first (sparse)", true, false, threads);
    run("plain loop, threads take 8 MiB tasks in turn, new file", false, true, threads);
    run("plain loop, threads take 8 MiB tasks in turn, sized (sparse)", true, true, threads);
    // A safe replacement the plain way: the old file (just written, its pages dirty) stays
    // while the new one is written beside it, then the new one is renamed over it.
    const auto tmp = dir / "one.tmp";
    const double write_s = seconds([&] {
      const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      pwrite_all(fd, data.data(), 0, bytes, 16 << 20);
      ::close(fd);
    });
    const double rename_s = seconds([&] { fs::rename(tmp, file); });
    std::printf("%-62s %7.2f GB/s (write %.2f s, rename over the old file %.2f s)\n",
                "plain loop, 1 thread, beside the old file, renamed over it", gbps(write_s + rename_s), write_s,
                rename_s);
    const double unlink_s = seconds([&] { fs::remove(file); });
    std::printf("%-62s %7.2f s\n", "unlink of a just-written file (dirty pages)", unlink_s);
    h5tile::settings::set_threads(threads);
    const h5tile::ArrayView view{data.data(), h5tile::DType(h5tile::DTypeKind::UInt8), {bytes / 4096, 4096}, {}};
    for (const auto layout : {h5tile::Layout::Contiguous, h5tile::Layout::Chunked, h5tile::Layout::Virtual}) {
      for (const unsigned ranks : {1U, threads}) {
        for (const bool replacing : {false, true}) {
          const auto target = dir / "h5tile.h5";
          if (!replacing) {
            fs::remove(target);
            fs::remove_all(dir / "h5tile.h5.tiles");
          }
          const double s = seconds(
              [&] { h5tile::to_file(view, target, "/d", {.layout = layout, .ranks = ranks, .sync = false}).wait(); });
          std::printf("h5tile to_file %-10s %2u rank(s), %-28s %7.2f GB/s\n",
                      std::string(h5tile::layout_name(layout)).c_str(), ranks,
                      replacing ? "replacing the file above" : "new file", gbps(s));
        }
      }
    }
  }
  fs::remove_all(dir);
  return 0;
}
