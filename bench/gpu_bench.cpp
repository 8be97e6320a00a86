// GPU read/write benchmark: h5tile's device path next to its limits and to plain HDF5, on the
// same files in one run. Device work is synchronised before every clock read; each figure
// is the median of --repeats warm runs after one warm-up, plus one cold run (page cache
// dropped) where the process may drop it. Prints one JSON object per measurement, then a table.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <h5tile/h5tile.hpp>

#include "cuda_timing.hpp"

namespace {
using h5tile::bench::cuda;
using h5tile::bench::seconds;
namespace fs = std::filesystem;

bool drop_caches() {
  ::sync();
  std::ofstream f("/proc/sys/vm/drop_caches");
  if (!f) return false;
  f << "3\n";
  return static_cast<bool>(f.flush());
}

struct Result {
  std::string name;
  double warm = 0;  // median seconds
  double cold = 0;  // seconds, 0 if not measured
};

// `prepare` runs untimed before every timed run (removing a file the run would replace).
Result measure(const std::string& name, int repeats, bool cold, const std::function<void()>& f,
               const std::function<void()>& prepare = {}) {
  Result r{name};
  if (prepare) prepare();
  if (cold && drop_caches()) r.cold = seconds(f);
  if (prepare) prepare();
  (void)seconds(f);  // warm-up
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    if (prepare) prepare();
    t.push_back(seconds(f));
  }
  std::sort(t.begin(), t.end());
  r.warm = t[t.size() / 2];
  return r;
}

std::uint64_t contiguous_offset(const fs::path& file, const std::string& dataset) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  const auto offset = H5Dget_offset(d);
  H5Dclose(d);
  H5Fclose(f);
  return offset;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"h5tile GPU benchmark"};
  std::string dir = "/tmp/h5tile-gpu-bench";
  double gib = 8;
  int repeats = 5;
  unsigned threads = 16;
  unsigned tiles = 16;
  app.add_option("--dir", dir, "folder for the benchmark files")->capture_default_str();
  app.add_option("--gib", gib, "array size in GiB (float32)")->capture_default_str();
  app.add_option("--repeats", repeats, "warm runs per measurement (median reported)")->capture_default_str();
  app.add_option("--threads", threads, "I/O threads")->capture_default_str();
  app.add_option("--tiles", tiles, "tiles of the virtual-layout file")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  h5tile::settings::set_threads(threads);

  const std::uint64_t n = static_cast<std::uint64_t>(gib * (1ULL << 30)) / 4 / 4096 * 4096;
  const std::uint64_t bytes = n * 4;
  const h5tile::Shape shape{n / 4096, 4096};
  fs::create_directories(dir);
  const auto contiguous = fs::path(dir) / "contiguous.h5";
  const auto virtual_file = fs::path(dir) / "virtual.h5";

  // The source array on the device (a pattern, not zeros), written out from the device.
  void* device_src = nullptr;
  cuda(cudaMalloc(&device_src, bytes), "cudaMalloc");
  {
    std::vector<std::uint32_t> pattern(n);
    for (std::uint64_t i = 0; i < n; ++i) pattern[i] = static_cast<std::uint32_t>(i * 2654435761ULL + 12345ULL);
    cuda(cudaMemcpy(device_src, pattern.data(), bytes, cudaMemcpyHostToDevice), "upload");
  }
  const h5tile::ArrayView src{device_src, h5tile::DType(h5tile::DTypeKind::Float32), shape, {}};
  std::vector<Result> results;
  const double gb = static_cast<double>(bytes) / 1e9;

  // Writes into a new file, as the plain loops below write (replacing a file is measured apart
  // by bench/single_file_write.cpp: on ext4 a rename over an existing file starts the new
  // file's writeback at once).
  const auto fresh = [](const fs::path& path) {
    return [path] {
      fs::remove(path);
      fs::remove_all(path.string() + ".tiles");
    };
  };
  results.push_back(measure(
      "h5tile write from device, contiguous (no fsync)", 1, false,
      [&] {
        h5tile::to_file(src, contiguous, "/data",
                        {.layout = h5tile::Layout::Contiguous, .ranks = threads, .sync = false})
            .wait();
      },
      fresh(contiguous)));
  results.push_back(measure(
      "h5tile write from device, virtual (no fsync)", 1, false,
      [&] {
        h5tile::to_file(src, virtual_file, "/data", {.layout = h5tile::Layout::Virtual, .ranks = tiles, .sync = false})
            .wait();
      },
      fresh(virtual_file)));

  // Host-side writes of the same array, to tell the file system's share from staging's.
  {
    std::vector<float> host(n);
    cuda(cudaMemcpy(host.data(), device_src, bytes, cudaMemcpyDeviceToHost), "d2h");
    // The write limits: a plain pwrite loop (one thread, 16 MiB calls) into one new file, and
    // the same split over 16 threads.
    for (const unsigned writers : {1U, threads}) {
      results.push_back(measure(
          fmt::format("limit: plain pwrite loop from host, {} thread(s)", writers), 1, false,
          [&] {
            const auto path = fs::path(dir) / "pwrite.bin";
            const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            std::vector<std::thread> ts;
            for (unsigned t = 0; t < writers; ++t) {
              ts.emplace_back([&, t] {
                const std::uint64_t lo = bytes * t / writers;
                const std::uint64_t hi = bytes * (t + 1) / writers;
                for (std::uint64_t pos = lo; pos < hi;) {
                  const auto w = ::pwrite(fd, reinterpret_cast<const char*>(host.data()) + pos,
                                          std::min<std::uint64_t>(16 << 20, hi - pos), static_cast<off_t>(pos));
                  if (w <= 0) break;
                  pos += static_cast<std::uint64_t>(w);
                }
              });
            }
            for (auto& t : ts) t.join();
            ::close(fd);
          },
          fresh(fs::path(dir) / "pwrite.bin")));
    }
    fs::remove(fs::path(dir) / "pwrite.bin");
    const h5tile::ArrayView host_view{host.data(), h5tile::DType(h5tile::DTypeKind::Float32), shape, {}};
    for (const unsigned ranks : {1U, 4U, threads}) {
      results.push_back(measure(
          fmt::format("h5tile write from host, contiguous, {} ranks", ranks), 1, false,
          [&] {
            h5tile::to_file(host_view, fs::path(dir) / "host.h5", "/data",
                            {.layout = h5tile::Layout::Contiguous, .ranks = ranks, .sync = false})
                .wait();
          },
          fresh(fs::path(dir) / "host.h5")));
    }
    results.push_back(measure(
        "h5tile write from host, virtual", 1, false,
        [&] {
          h5tile::to_file(host_view, fs::path(dir) / "host.h5", "/data",
                          {.layout = h5tile::Layout::Virtual, .ranks = tiles, .sync = false})
              .wait();
        },
        fresh(fs::path(dir) / "host.h5")));
  }

  // Limits: parallel pread of the raw bytes into pinned memory; pinned host -> device copy.
  void* pinned = nullptr;
  cuda(cudaHostAlloc(&pinned, bytes, cudaHostAllocPortable), "cudaHostAlloc");
  const auto offset = contiguous_offset(contiguous, "/data");
  results.push_back(measure("limit: parallel pread -> pinned host", repeats, true, [&] {
    const int fd = ::open(contiguous.c_str(), O_RDONLY);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        const std::uint64_t lo = bytes * t / threads;
        const std::uint64_t hi = bytes * (t + 1) / threads;
        for (std::uint64_t pos = lo; pos < hi;) {
          const auto r = ::pread(fd, static_cast<char*>(pinned) + pos, std::min<std::uint64_t>(16 << 20, hi - pos),
                                 static_cast<off_t>(offset + pos));
          if (r <= 0) break;
          pos += static_cast<std::uint64_t>(r);
        }
      });
    }
    for (auto& t : ts) t.join();
    ::close(fd);
  }));
  // The disk's direct-read bandwidth: one O_DIRECT read loop of 16 MiB aligned blocks (dd iflag=direct).
  results.push_back(measure("limit: O_DIRECT read loop (dd iflag=direct)", 1, false, [&] {
    const int fd = ::open(contiguous.c_str(), O_RDONLY | O_DIRECT);
    const std::uint64_t block = 16 << 20;
    for (std::uint64_t pos = 0; pos + block <= bytes; pos += block) {
      if (::pread(fd, pinned, block, static_cast<off_t>(pos)) <= 0) break;
    }
    ::close(fd);
  }));
  void* device_dst = nullptr;
  cuda(cudaMalloc(&device_dst, bytes), "cudaMalloc");
  results.push_back(measure("limit: pinned host -> device copy", repeats, false,
                            [&] { cuda(cudaMemcpy(device_dst, pinned, bytes, cudaMemcpyHostToDevice), "h2d"); }));
  cuda(cudaFreeHost(pinned), "cudaFreeHost");

  h5tile::settings::set_gds(h5tile::settings::Gds::Off);
  results.push_back(measure("h5tile from_file -> device, contiguous", repeats, true,
                            [&] { (void)h5tile::from_file(contiguous, "/data", {.threads = threads, .device = 0}); }));
  // Cold data read around the page cache (O_DIRECT for what the cache lacks; see settings.hpp).
  h5tile::settings::set_direct_io(h5tile::settings::DirectIo::On);
  results.push_back(measure("h5tile from_file -> device, contiguous, direct_io on", repeats, true,
                            [&] { (void)h5tile::from_file(contiguous, "/data", {.threads = threads, .device = 0}); }));
  h5tile::settings::set_direct_io(h5tile::settings::DirectIo::Auto);
  results.push_back(measure("h5tile from_file -> device, virtual", repeats, true, [&] {
    (void)h5tile::from_file(virtual_file, "/data", {.threads = threads, .device = 0});
  }));
  h5tile::settings::set_gds(h5tile::settings::Gds::Auto);
  results.push_back(measure("h5tile from_file -> device, GDS auto", repeats, false,
                            [&] { (void)h5tile::from_file(contiguous, "/data", {.threads = threads, .device = 0}); }));
  const auto report = h5tile::last_device_io();
  results.push_back(measure("h5tile from_file -> host, then cudaMemcpy", repeats, false, [&] {
    const auto host = h5tile::from_file(contiguous, "/data", {.threads = threads});
    cuda(cudaMemcpy(device_dst, host.data(), bytes, cudaMemcpyHostToDevice), "h2d");
  }));
  results.push_back(measure("HDF5 H5Dread -> host, then cudaMemcpy", repeats, true, [&] {
    std::vector<float> host(n);
    const hid_t f = H5Fopen(contiguous.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t d = H5Dopen2(f, "/data", H5P_DEFAULT);
    H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, host.data());
    H5Dclose(d);
    H5Fclose(f);
    cuda(cudaMemcpy(device_dst, host.data(), bytes, cudaMemcpyHostToDevice), "h2d");
  }));
  // Byte-for-byte check of the device read against the source.
  const auto back = h5tile::from_file(virtual_file, "/data", {.threads = threads, .device = 0});
  std::vector<std::uint32_t> a(n);
  std::vector<std::uint32_t> b(n);
  cuda(cudaMemcpy(a.data(), back.data(), bytes, cudaMemcpyDeviceToHost), "d2h");
  cuda(cudaMemcpy(b.data(), device_src, bytes, cudaMemcpyDeviceToHost), "d2h");
  const bool equal = a == b;

  for (const auto& r : results) {
    fmt::print("{{\"name\": \"{}\", \"bytes\": {}, \"warm_s\": {:.4f}, \"cold_s\": {:.4f}}}\n", r.name, bytes, r.warm,
               r.cold);
  }
  fmt::print("\n{:.2f} GB float32 [{}, {}], {} threads, {} tiles; device read equals source: {}\n", gb, shape[0],
             shape[1], threads, tiles, equal ? "yes" : "NO");
  fmt::print("GDS auto used '{}' ({})\n", report.path, report.gds_reason);
  fmt::print("{:<50}{:>12}{:>12}\n", "engine", "warm GB/s", "cold GB/s");
  for (const auto& r : results) {
    fmt::print("{:<50}{:>12.2f}{:>12}\n", r.name, gb / r.warm, r.cold > 0 ? fmt::format("{:.2f}", gb / r.cold) : "-");
  }
  cudaFree(device_src);
  cudaFree(device_dst);
  return equal ? 0 : 1;
}
