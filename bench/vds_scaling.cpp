// How a virtual dataset with many tiles opens and reads: T tiles of ROWS (default 64) rows x
// 1024 float32 (256 KiB each by default), written by 4 thread ranks, then opened (describe) and read whole (from_file),
// next to a contiguous file of the same bytes, each read both into a new array (from_file) and
// into one reused buffer (read_into), the latter also with settings::early_reads off (every read
// waits for HDF5 to open the virtual dataset). Medians of 5 warm runs. Prints one line per T,
// then the read_into ratios against the contiguous file.
//   usage: h5tile_vds_scaling [DIR] [ROWS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <h5tile/h5tile.hpp>

namespace {
double seconds_of(const std::function<void()>& f) {
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[2];
}
}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const fs::path dir = argc > 1 ? argv[1] : "vds-scaling";
  const std::uint64_t rows = argc > 2 ? std::stoull(argv[2]) : 64;
  fs::create_directories(dir);
  std::printf("%6s %6s %8s %8s %10s %11s %14s %14s %16s %8s %8s\n", "tiles", "MiB", "write s", "open s", "vds GB/s",
              "contig GB/s", "vds into GB/s", "(early off)", "contig into GB/s", "ratio", "(off)");
  for (const std::uint64_t tiles : {16ULL, 256ULL, 4096ULL}) {
    const std::uint64_t cols = 1024;
    const h5tile::Shape shape{tiles * rows, cols};
    std::vector<float> data(tiles * rows * cols);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 1000);
    const auto vds = dir / ("vds-" + std::to_string(tiles) + ".h5");
    const auto contiguous = dir / ("contiguous-" + std::to_string(tiles) + ".h5");
    const auto write_start = std::chrono::steady_clock::now();
    {
      h5tile::run_thread_ranks(4, [&](h5tile::Communicator& comm) {
        std::vector<h5tile::Tile> mine;
        for (std::uint64_t t = static_cast<std::uint64_t>(comm.rank()); t < tiles; t += 4) {
          mine.push_back(
              {h5tile::Box{{t * rows, 0}, {rows, cols}}, h5tile::view(data.data() + t * rows * cols, {rows, cols})});
        }
        h5tile::write_tiles(comm, shape, mine, vds, "/data", {.sync = false});
      });
    }
    const double write = std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();
    h5tile::to_file(h5tile::view(data.data(), shape), contiguous, "/data",
                    {.layout = h5tile::Layout::Contiguous, .sync = false})
        .wait();
    (void)h5tile::from_file(vds, "/data");  // warm the page cache
    const double open = seconds_of([&] { (void)h5tile::describe(vds, "/data"); });
    const double read = seconds_of([&] { (void)h5tile::from_file(vds, "/data"); });
    (void)h5tile::from_file(contiguous, "/data");
    const double contiguous_read = seconds_of([&] { (void)h5tile::from_file(contiguous, "/data"); });
    std::vector<float> out(data.size(), 0.0F);
    const auto into = h5tile::view(out.data(), shape);
    const double read_into = seconds_of([&] { h5tile::read_into(vds, "/data", into); });
    h5tile::settings::set_early_reads(false);
    const double waiting_into = seconds_of([&] { h5tile::read_into(vds, "/data", into); });
    h5tile::settings::set_early_reads(true);
    const double contiguous_into = seconds_of([&] { h5tile::read_into(contiguous, "/data", into); });
    const double bytes = static_cast<double>(data.size() * 4);
    std::printf("%6llu %6.0f %8.3f %8.3f %10.2f %11.2f %14.2f %14.2f %16.2f %8.2f %8.2f\n",
                static_cast<unsigned long long>(tiles), bytes / (1 << 20), write, open, bytes / read / 1e9,
                bytes / contiguous_read / 1e9, bytes / read_into / 1e9, bytes / waiting_into / 1e9,
                bytes / contiguous_into / 1e9, contiguous_into / read_into, contiguous_into / waiting_into);
  }
  return 0;
}
