// Where the time of an early read of a virtual dataset goes: its parts timed alone (the read
// of every tile from the tile index; HDF5's open and the check of its mapping against the
// index; h5tile's full open), then together (h5tile::read_into, early reads on and off), next to
// read_into of a contiguous file of the same bytes. Warm page cache; medians of 9 runs.
//   usage: h5tile_vds_early_read VDS_FILE CONTIGUOUS_FILE   (e.g. the 4096-tile files that
//          h5tile_vds_scaling leaves: vds-4096.h5, contiguous-4096.h5)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <h5tile/h5tile.hpp>

#include "layout/open_dataset.hpp"

namespace {
using Clock = std::chrono::steady_clock;

double median_seconds(const std::function<void()>& f) {
  std::vector<double> t;
  for (int run = 0; run < 9; ++run) {
    const auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  using namespace h5tile;  // NOLINT(google-build-using-namespace): a benchmark's main
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s VDS_FILE CONTIGUOUS_FILE\n", argv[0]);
    return 2;
  }
  const std::string vds = argv[1];
  const std::string contiguous = argv[2];
  const auto early = detail::OpenDataset::from_tile_index(vds, "/data", false);
  if (!early) {
    std::fprintf(stderr, "%s:/data has no tile index (not written by this h5tile?)\n", vds.c_str());
    return 1;
  }
  const auto& info = early->info();
  const Box whole = Box::whole(info.shape);
  const double bytes = static_cast<double>(whole.count() * info.dtype.size());
  std::vector<std::byte> out(static_cast<std::size_t>(bytes));
  const ArrayView into{out.data(), info.dtype, info.shape, {}};
  read_into(vds, "/data", into);  // warm the page cache (both files)
  read_into(contiguous, "/data", into);
  const unsigned threads = settings::threads();
  const double index = median_seconds([&] { (void)detail::OpenDataset::from_tile_index(vds, "/data", false); });
  const double tiles = median_seconds([&] { early->read_into(whole, out.data(), -1, threads); });
  const double check = median_seconds([&] { (void)early->mapping_agrees(); });
  const double full_open = median_seconds([&] { const detail::OpenDataset opened(vds, "/data"); });
  const double api = median_seconds([&] { read_into(vds, "/data", into); });
  settings::set_early_reads(false);
  const double waiting = median_seconds([&] { read_into(vds, "/data", into); });
  settings::set_early_reads(true);
  const double plain = median_seconds([&] { read_into(contiguous, "/data", into); });
  std::printf("%zu tiles, %.0f MiB, %u threads; medians of 9 runs\n", early->mappings().size(), bytes / (1 << 20),
              threads);
  std::printf(
      "alone:    tile index %.4f s, read of the tiles from it %.4f s (%.2f GB/s), HDF5 open + mapping check "
      "%.4f s, full open %.4f s\n",
      index, tiles, bytes / tiles / 1e9, check, full_open);
  std::printf("together: read_into %.4f s (%.2f GB/s), early reads off %.4f s (%.2f GB/s)\n", api, bytes / api / 1e9,
              waiting, bytes / waiting / 1e9);
  std::printf("contiguous file: read_into %.4f s (%.2f GB/s); ratio %.2f (early reads off: %.2f)\n", plain,
              bytes / plain / 1e9, plain / api, plain / waiting);
  return 0;
}
