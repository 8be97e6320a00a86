// Where the time of an early read of a virtual dataset goes: its parts timed alone (the read
// of every tile from the tile index; HDF5's open and the check of its mapping against the
// index; h5tile's full open), then together (h5tile::read_into, early reads on and off), next to
// read_into of a contiguous file of the same bytes, and next to plain pread loops (open, pread,
// close per tile file; and over the contiguous file's bytes in tile-sized pieces) on as many
// threads: the limit for reading that many files; and from_file_batched over both files. Warm
// page cache; medians of 9 runs.
//   usage: h5tile_vds_early_read VDS_FILE CONTIGUOUS_FILE   (e.g. the 4096-tile files that
//          h5tile_vds_scaling leaves: vds-4096.h5, contiguous-4096.h5)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <hdf5.h>

#include <h5tile/h5tile.hpp>

#include "api/resolve.hpp"
#include "hdf5/file.hpp"
#include "layout/open_dataset.hpp"
#include "layout/virtual/early_open.hpp"
#include "layout/virtual/tile_index.hpp"

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
// Reads `count` pieces on `threads` threads, piece(i) reading the i-th; exits on a failed read.
void plain_loop(std::size_t count, unsigned threads, const std::function<bool(std::size_t)>& piece) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (auto i = next++; i < count; i = next++) {
        if (!piece(i)) {
          std::perror("plain pread loop");
          std::exit(1);
        }
      }
    });
  }
  for (auto& thread : pool) thread.join();
}

bool pread_all(int fd, std::byte* out, std::size_t size, off_t offset) {
  while (size > 0) {
    const auto n = ::pread(fd, out, size, offset);
    if (n <= 0) return false;
    out += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
  return true;
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
  auto opened =
      detail::open_from_tile_index(detail::Location::local(vds), "/data", detail::open_options(ReadOptions{}));
  if (!opened) {
    std::fprintf(stderr, "%s:/data has no tile index (not written by this h5tile?)\n", vds.c_str());
    return 1;
  }
  const detail::OpenDataset early(std::move(*opened));
  const auto& info = early.info();
  const Box whole = Box::whole(info.shape);
  const double bytes = static_cast<double>(whole.count() * info.dtype.size());
  std::vector<std::byte> out(static_cast<std::size_t>(bytes));
  const ArrayView into{out.data(), info.dtype, info.shape, {}};
  read_into(vds, "/data", into);  // warm the page cache (both files)
  read_into(contiguous, "/data", into);
  const unsigned threads = settings::threads();
  const double index_time = median_seconds([&] {
    (void)detail::open_from_tile_index(detail::Location::local(vds), "/data", detail::open_options(ReadOptions{}));
  });
  const double tiles = median_seconds([&] { early.read_into(whole, out.data(), -1, threads); });
  const double check = median_seconds([&] { (void)detail::mapping_agrees(early.opened()); });
  const double full_open = median_seconds([&] {
    const detail::OpenDataset opened(detail::Location::local(vds), "/data", detail::open_options(ReadOptions{}));
  });
  const double api = median_seconds([&] { read_into(vds, "/data", into); });
  settings::set_early_reads(false);
  const double waiting = median_seconds([&] { read_into(vds, "/data", into); });
  settings::set_early_reads(true);
  const double plain = median_seconds([&] { read_into(contiguous, "/data", into); });
  // Streamed in blocks of whole rows, about 64 MiB each (new memory per block).
  const auto row_elements = whole.count() / info.shape[0];
  Shape block = info.shape;
  block[0] = std::max<std::uint64_t>(1, (std::uint64_t{64} << 20) / (row_elements * info.dtype.size()));
  auto stream = [&](const std::string& file) {
    return median_seconds([&] {
      for (auto& b : from_file_batched(file, "/data", block)) (void)b;
    });
  };
  const double batched = stream(vds);
  settings::set_early_reads(false);
  const double batched_waiting = stream(vds);
  settings::set_early_reads(true);
  const double batched_plain = stream(contiguous);
  // The plain loops, for tiles that are whole rows (their bytes lie in one run of the output).
  const auto index = [&] {
    const auto file = detail::open_local_file(vds);
    return detail::read_tile_index(file.get(), "/data");
  }();
  const auto row_bytes = whole.count() / info.shape[0] * info.dtype.size();
  const bool rows = std::all_of(index->tiles.begin(), index->tiles.end(), [&](const auto& t) {
    return t.dst.count() / t.dst.extent[0] == whole.count() / info.shape[0];
  });
  double tile_loop = 0;
  double piece_loop = 0;
  if (rows) {
    const auto folder = std::filesystem::path(vds).parent_path();
    const auto& tiles = index->tiles;
    tile_loop = median_seconds([&] {
      plain_loop(tiles.size(), threads, [&](std::size_t i) {
        const auto& t = tiles[i];
        const int fd = ::open((folder / t.file).c_str(), O_RDONLY | O_CLOEXEC);
        const bool ok = fd >= 0 && pread_all(fd, out.data() + t.dst.offset[0] * row_bytes, t.dst.extent[0] * row_bytes,
                                             static_cast<off_t>(t.raw_offset));
        if (fd >= 0) ::close(fd);
        return ok;
      });
    });
    // The contiguous file's bytes, in the same pieces, from one descriptor.
    const hid_t file = H5Fopen(contiguous.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t dataset = H5Dopen2(file, "/data", H5P_DEFAULT);
    const haddr_t base = H5Dget_offset(dataset);
    H5Dclose(dataset);
    H5Fclose(file);
    const int fd = ::open(contiguous.c_str(), O_RDONLY | O_CLOEXEC);
    piece_loop = median_seconds([&] {
      plain_loop(tiles.size(), threads, [&](std::size_t i) {
        const auto& t = tiles[i];
        return pread_all(fd, out.data() + t.dst.offset[0] * row_bytes, t.dst.extent[0] * row_bytes,
                         static_cast<off_t>(base + t.dst.offset[0] * row_bytes));
      });
    });
    ::close(fd);
  }
  std::printf("%zu tiles, %.0f MiB, %u threads; medians of 9 runs\n", early.mappings().size(), bytes / (1 << 20),
              threads);
  std::printf(
      "alone:    tile index %.4f s, read of the tiles from it %.4f s (%.2f GB/s), HDF5 open + mapping check "
      "%.4f s, full open %.4f s\n",
      index_time, tiles, bytes / tiles / 1e9, check, full_open);
  std::printf("together: read_into %.4f s (%.2f GB/s), early reads off %.4f s (%.2f GB/s)\n", api, bytes / api / 1e9,
              waiting, bytes / waiting / 1e9);
  std::printf("contiguous file: read_into %.4f s (%.2f GB/s); ratio %.2f (early reads off: %.2f)\n", plain,
              bytes / plain / 1e9, plain / api, plain / waiting);
  std::printf(
      "from_file_batched, blocks of %llu rows: %.4f s (%.2f GB/s), early reads off %.4f s (%.2f GB/s), "
      "contiguous file %.4f s (%.2f GB/s); ratio %.2f (off: %.2f)\n",
      static_cast<unsigned long long>(block[0]), batched, bytes / batched / 1e9, batched_waiting,
      bytes / batched_waiting / 1e9, batched_plain, bytes / batched_plain / 1e9, batched_plain / batched,
      batched_plain / batched_waiting);
  if (rows) {
    std::printf(
        "plain pread loops: open+pread+close per tile file %.4f s (%.2f GB/s), the contiguous file in the "
        "same pieces %.4f s (%.2f GB/s); read_into %.2fx the tile-file loop\n",
        tile_loop, bytes / tile_loop / 1e9, piece_loop, bytes / piece_loop / 1e9, tile_loop / api);
  }
  return 0;
}
