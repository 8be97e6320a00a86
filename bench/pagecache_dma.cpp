// Probe: can a warm file reach device memory faster than pread into pinned buffers + copy?
// Three ways of moving the same cached file into one device buffer, in one process:
//   staging   threads pread pieces into pinned buffers, then cudaMemcpyAsync (h5tile's path)
//   register  threads mmap the file read-only and cudaHostRegister each piece of the mapping
//             (cudaHostRegisterReadOnly), so the GPU copies straight out of the page cache,
//             then unregister it
//   whole     one registration of the whole mapping, then one copy (registration and copy
//             timed apart)
// Every result is compared with the file's bytes. Median of --repeats after a warm-up.
//   usage: h5tile_pagecache_dma FILE GIB [--threads N] [--piece MIB] [--repeats R]
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cuda_timing.hpp"

namespace {
using h5tile::bench::cuda;
using h5tile::bench::seconds;

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Runs body(offset, length) over pieces of [0, bytes) from `threads` threads.
void pieces(std::size_t bytes, std::size_t piece, unsigned threads,
            const std::function<void(unsigned, std::size_t, std::size_t)>& body) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex error_mutex;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        for (;;) {
          const auto pos = next.fetch_add(piece);
          if (pos >= bytes) return;
          body(t, pos, std::min(piece, bytes - pos));
        }
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        error = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Warm file -> device: pread+pinned staging vs DMA from registered page-cache pages"};
  std::string path;
  double gib = 8;
  unsigned threads = 16;
  std::size_t piece_mib = 64;
  int repeats = 5;
  app.add_option("file", path, "file to create (if missing) and read")->required();
  app.add_option("gib", gib, "size in GiB")->required();
  app.add_option("--threads", threads, "reading threads");
  app.add_option("--piece", piece_mib, "piece size in MiB");
  app.add_option("--repeats", repeats, "timed runs per method");
  CLI11_PARSE(app, argc, argv);
  const auto bytes = static_cast<std::size_t>(gib * (1ULL << 30)) & ~std::size_t{0xFFFFF};
  const std::size_t piece = piece_mib << 20;

  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    const int w = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (w < 0) throw std::runtime_error("cannot create " + path);
    std::vector<std::uint32_t> block(1 << 20);
    for (std::size_t pos = 0; pos < bytes; pos += block.size() * 4) {
      for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<std::uint32_t>(pos / 4 + i) * 2654435761U;
      if (::pwrite(w, block.data(), block.size() * 4, static_cast<off_t>(pos)) !=
          static_cast<ssize_t>(block.size() * 4)) {
        throw std::runtime_error("short write");
      }
    }
    ::close(w);
    fd = ::open(path.c_str(), O_RDONLY);
  }
  int supported = 0;
  cuda(cudaDeviceGetAttribute(&supported, cudaDevAttrHostRegisterReadOnlySupported, 0), "attribute");
  fmt::print("{:.2f} GB, {} threads, {} MiB pieces; cudaHostRegisterReadOnly supported: {}\n", bytes / 1e9, threads,
             piece_mib, supported);

  void* dst = nullptr;
  cuda(cudaMalloc(&dst, bytes), "cudaMalloc");
  auto* d = static_cast<std::byte*>(dst);
  std::vector<std::byte> expect(bytes);
  for (std::size_t pos = 0; pos < bytes;) {  // (one pread moves at most 2 GiB)
    const auto n =
        ::pread(fd, expect.data() + pos, std::min<std::size_t>(bytes - pos, 1 << 30), static_cast<off_t>(pos));
    if (n <= 0) throw std::runtime_error("short read");
    pos += static_cast<std::size_t>(n);
  }
  std::vector<std::byte> back(bytes);
  auto check = [&](const char* name) {
    cuda(cudaMemcpy(back.data(), dst, bytes, cudaMemcpyDeviceToHost), "d2h");
    const bool same = std::memcmp(back.data(), expect.data(), bytes) == 0;
    cuda(cudaMemset(dst, 0, bytes), "memset");
    if (!same) fmt::print("  {}: RESULT DIFFERS FROM THE FILE\n", name);
    return same;
  };

  // staging: 2 pinned buffers of `piece` per thread, each with a stream.
  std::vector<void*> pinned(2 * threads);
  std::vector<cudaStream_t> streams(2 * threads);
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    cuda(cudaHostAlloc(&pinned[i], piece, cudaHostAllocPortable), "cudaHostAlloc");
    cuda(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), "stream");
  }
  std::vector<unsigned> turn(threads, 0);
  auto staging = [&] {
    pieces(bytes, piece, threads, [&](unsigned t, std::size_t pos, std::size_t n) {
      const auto k = 2 * t + (turn[t]++ & 1);
      cuda(cudaStreamSynchronize(streams[k]), "sync");
      if (::pread(fd, pinned[k], n, static_cast<off_t>(pos)) != static_cast<ssize_t>(n))
        throw std::runtime_error("pread");
      cuda(cudaMemcpyAsync(d + pos, pinned[k], n, cudaMemcpyHostToDevice, streams[k]), "h2d");
    });
    for (auto* s : streams) cuda(cudaStreamSynchronize(s), "sync");
  };

  auto* map = static_cast<std::byte*>(::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0));
  if (map == MAP_FAILED) throw std::runtime_error("mmap");
  auto registered = [&] {
    pieces(bytes, piece, threads, [&](unsigned t, std::size_t pos, std::size_t n) {
      cuda(cudaHostRegister(map + pos, n, cudaHostRegisterReadOnly | cudaHostRegisterPortable), "cudaHostRegister");
      cuda(cudaMemcpyAsync(d + pos, map + pos, n, cudaMemcpyHostToDevice, streams[2 * t]), "h2d");
      cuda(cudaStreamSynchronize(streams[2 * t]), "sync");
      cuda(cudaHostUnregister(map + pos), "cudaHostUnregister");
    });
  };

  struct Row {
    std::string name;
    std::vector<double> t;
    bool same = true;
  };
  std::vector<Row> rows;
  auto run = [&](const std::string& name, const std::function<void()>& f) {
    Row r{name};
    try {
      (void)seconds(f);
      r.same = check(name.c_str());
      for (int i = 0; i < repeats; ++i) r.t.push_back(seconds(f));
    } catch (const std::exception& e) {
      fmt::print("  {}: {}\n", name, e.what());
      (void)cudaGetLastError();
    }
    rows.push_back(r);
  };
  run("staging: pread -> pinned -> device", staging);
  run("register pieces of the mapping, copy", registered);
  // whole: registration and copy apart
  std::vector<double> reg;
  std::vector<double> copy;
  std::vector<double> unreg;
  try {
    for (int i = 0; i < repeats; ++i) {
      reg.push_back(seconds([&] {
        cuda(cudaHostRegister(map, bytes, cudaHostRegisterReadOnly | cudaHostRegisterPortable), "cudaHostRegister");
      }));
      copy.push_back(seconds([&] { cuda(cudaMemcpy(d, map, bytes, cudaMemcpyHostToDevice), "h2d"); }));
      unreg.push_back(seconds([&] { cuda(cudaHostUnregister(map), "cudaHostUnregister"); }));
    }
    check("whole");
  } catch (const std::exception& e) {
    fmt::print("  whole: {}\n", e.what());
  }
  fmt::print("{:<40} {:>8} {:>8}\n", "method", "GB/s", "x stage");
  const double base = rows[0].t.empty() ? 0 : bytes / median(rows[0].t) / 1e9;
  for (const auto& r : rows) {
    if (r.t.empty()) continue;
    const double gbs = bytes / median(r.t) / 1e9;
    fmt::print("{:<40} {:8.2f} {:8.2f}{}\n", r.name, gbs, gbs / base, r.same ? "" : "  (WRONG)");
  }
  if (!reg.empty()) {
    fmt::print("whole mapping: register {:.3f} s, copy {:.3f} s ({:.2f} GB/s), unregister {:.3f} s -> {:.2f} GB/s\n",
               median(reg), median(copy), bytes / median(copy) / 1e9, median(unreg),
               bytes / (median(reg) + median(copy) + median(unreg)) / 1e9);
  }
  return 0;
}
