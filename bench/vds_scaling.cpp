// How a virtual dataset with many tiles opens and reads: T tiles of 64 rows x 1024 float32
// (256 KiB each), written by 4 thread ranks, then opened (describe) and read whole (from_file),
// next to a contiguous file of the same bytes. Prints one line per T.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <h5tile/h5tile.hpp>

namespace {
double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const fs::path dir = argc > 1 ? argv[1] : "vds-scaling";
  fs::create_directories(dir);
  std::printf("%8s %10s %12s %12s %12s %14s %14s\n", "tiles", "MiB", "write s", "open s", "read s", "read GB/s",
              "contig read GB/s");
  for (const std::uint64_t tiles : {16ULL, 256ULL, 4096ULL}) {
    const std::uint64_t rows = 64;
    const std::uint64_t cols = 1024;
    const h5tile::Shape shape{tiles * rows, cols};
    std::vector<float> data(tiles * rows * cols);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 1000);
    const auto vds = dir / ("vds-" + std::to_string(tiles) + ".h5");
    const auto contiguous = dir / ("contiguous-" + std::to_string(tiles) + ".h5");
    const double write = seconds_of([&] {
      h5tile::run_thread_ranks(4, [&](h5tile::Communicator& comm) {
        std::vector<h5tile::Tile> mine;
        for (std::uint64_t t = static_cast<std::uint64_t>(comm.rank()); t < tiles; t += 4) {
          mine.push_back(
              {h5tile::Box{{t * rows, 0}, {rows, cols}}, h5tile::view(data.data() + t * rows * cols, {rows, cols})});
        }
        h5tile::write_tiles(comm, shape, mine, vds, "/data", {.sync = false});
      });
    });
    h5tile::to_file(h5tile::view(data.data(), shape), contiguous, "/data",
                    {.layout = h5tile::Layout::Contiguous, .sync = false})
        .wait();
    (void)h5tile::from_file(vds, "/data");  // warm the page cache
    const double open = seconds_of([&] { (void)h5tile::describe(vds, "/data"); });
    const double read = seconds_of([&] { (void)h5tile::from_file(vds, "/data"); });
    (void)h5tile::from_file(contiguous, "/data");
    const double contiguous_read = seconds_of([&] { (void)h5tile::from_file(contiguous, "/data"); });
    const double bytes = static_cast<double>(data.size() * 4);
    std::printf("%8llu %10.0f %12.3f %12.3f %12.3f %14.2f %14.2f\n", static_cast<unsigned long long>(tiles),
                bytes / (1 << 20), write, open, read, bytes / read / 1e9, bytes / contiguous_read / 1e9);
  }
  return 0;
}
