// Cold reads of one file into device memory by several strategies, each after dropping the page
// cache (run as root), to find what the fastest cold file -> GPU reader does on a given disk.
// Standalone (CUDA runtime only): h5tile's staging pipeline is one of the strategies it models.
//
//   nvcc -O2 -std=c++17 -o cold_device_strategies bench/cold_device_strategies.cpp
//   sudo ./cold_device_strategies FILE [--rounds N] [--mib M] STRATEGY...
//
// A strategy is KIND:THREADS:PIECE_MIB:IO[:AHEAD_MIB], IO one of b (buffered) or d (O_DIRECT):
//   pipe   THREADS threads take pieces in file order (an atomic counter), pread each into one of
//          their two pinned buffers and copy it up asynchronously on their own stream (h5tile's
//          staging pipeline);
//   split  each thread reads its own contiguous 1/THREADS of the file, in order, with its own
//          file descriptor (THREADS independent sequential streams);
//   ra     pipe, plus one thread that asks the kernel to read AHEAD_MIB ahead (readahead(2)) of
//          the pieces taken so far;
//   seqfa  pipe with posix_fadvise(SEQUENTIAL) on the descriptor.
// Prints one line per strategy: the median GB/s over the rounds and every round's figure.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct Strategy {
  std::string text, kind;
  int threads = 16;
  std::size_t piece = 4 << 20;
  bool direct = false;
  std::size_t ahead = 256 << 20;
};

Strategy parse(const std::string& s) {
  Strategy st;
  st.text = s;
  std::vector<std::string> f;
  std::size_t a = 0;
  for (;;) {
    const auto b = s.find(':', a);
    f.push_back(s.substr(a, b - a));
    if (b == std::string::npos) break;
    a = b + 1;
  }
  if (f.size() < 4) {
    std::fprintf(stderr, "bad strategy %s (KIND:THREADS:PIECE_MIB:IO[:AHEAD_MIB])\n", s.c_str());
    std::exit(2);
  }
  st.kind = f[0];
  st.threads = std::stoi(f[1]);
  st.piece = std::stoull(f[2]) << 20;
  st.direct = f[3] == "d";
  if (f.size() > 4) st.ahead = std::stoull(f[4]) << 20;
  return st;
}

void drop_caches() {
  ::sync();
  std::ofstream("/proc/sys/vm/drop_caches") << "3\n";
}

struct Slot {
  void* host = nullptr;
  cudaStream_t stream{};
  cudaEvent_t done{};
  bool pending = false;
};

// Reads [lo, hi) of fd into device memory at dev + lo, piece by piece, through `slots` (two).
void read_span(int fd, std::uint64_t lo, std::uint64_t hi, std::size_t piece, char* dev, Slot* slots) {
  int k = 0;
  for (auto off = lo; off < hi; off += piece, k ^= 1) {
    Slot& s = slots[k];
    if (s.pending) check(cudaEventSynchronize(s.done), "event sync");
    const auto n = std::min<std::uint64_t>(piece, hi - off);
    std::size_t got = 0;
    while (got < n) {
      const auto r = ::pread(fd, static_cast<char*>(s.host) + got, n - got, static_cast<off_t>(off + got));
      if (r <= 0) {
        std::perror("pread");
        std::exit(1);
      }
      got += static_cast<std::size_t>(r);
    }
    check(cudaMemcpyAsync(dev + off, s.host, n, cudaMemcpyHostToDevice, s.stream), "copy");
    check(cudaEventRecord(s.done, s.stream), "record");
    s.pending = true;
  }
}

double run(const Strategy& st, const char* path, std::uint64_t size, char* dev) {
  // The threads' pinned buffers (two each) and streams, made before the clock starts: a reader
  // keeps them across calls (h5tile's staging pool does).
  std::vector<Slot> slots(2 * st.threads);
  for (auto& s : slots) {
    check(cudaHostAlloc(&s.host, st.piece, cudaHostAllocPortable), "cudaHostAlloc");
    check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "stream");
    check(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming), "event");
  }
  drop_caches();
  const int flags = O_RDONLY | (st.direct ? O_DIRECT : 0);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> fds(st.kind == "split" ? st.threads : 1);
  for (auto& fd : fds) {
    fd = ::open(path, flags);
    if (fd < 0) {
      std::perror("open");
      std::exit(1);
    }
    if (st.kind == "seqfa" || st.kind == "split") ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> finished{false};
  std::thread ahead;
  if (st.kind == "ra") {
    ahead = std::thread([&] {
      std::uint64_t asked = 0;
      while (!finished.load() && asked < size) {
        const auto want = std::min<std::uint64_t>(size, next.load() * st.piece + st.ahead);
        if (want > asked) {
          ::readahead(fds[0], static_cast<off64_t>(asked), want - asked);
          asked = want;
        } else {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      }
    });
  }
  std::vector<std::thread> workers;
  const std::uint64_t pieces = (size + st.piece - 1) / st.piece;
  for (int t = 0; t < st.threads; ++t) {
    workers.emplace_back([&, t] {
      Slot* mine = &slots[2 * t];
      if (st.kind == "split") {
        const std::uint64_t per = (pieces + st.threads - 1) / st.threads * st.piece;
        const auto lo = std::min<std::uint64_t>(size, per * t);
        read_span(fds[t], lo, std::min<std::uint64_t>(size, lo + per), st.piece, dev, mine);
      } else {
        for (auto i = next++; i < pieces; i = next++) {
          read_span(fds[0], i * st.piece, std::min<std::uint64_t>(size, (i + 1) * st.piece), st.piece, dev, mine);
        }
      }
      for (int k = 0; k < 2; ++k) check(cudaStreamSynchronize(mine[k].stream), "stream sync");
    });
  }
  for (auto& w : workers) w.join();
  finished = true;
  if (ahead.joinable()) ahead.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto fd : fds) ::close(fd);
  for (auto& s2 : slots) {
    cudaFreeHost(s2.host);
    cudaStreamDestroy(s2.stream);
    cudaEventDestroy(s2.done);
  }
  return static_cast<double>(size) / s / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FILE [--rounds N] [--mib M] STRATEGY...\n", argv[0]);
    return 2;
  }
  const char* path = argv[1];
  int rounds = 2;
  std::uint64_t limit = 0;
  std::vector<Strategy> strategies;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds") {
      rounds = std::atoi(argv[++i]);
    } else if (a == "--mib") {
      limit = std::stoull(argv[++i]) << 20;
    } else {
      strategies.push_back(parse(a));
    }
  }
  struct stat st {};
  if (::stat(path, &st) != 0) {
    std::perror(path);
    return 1;
  }
  auto size = static_cast<std::uint64_t>(st.st_size) / 4096 * 4096;
  if (limit != 0) size = std::min(size, limit);
  check(cudaFree(nullptr), "context");
  char* dev = nullptr;
  check(cudaMalloc(&dev, size), "cudaMalloc");
  std::map<std::string, std::vector<double>> results;
  for (int r = 0; r < rounds; ++r) {
    // Each round starts at another strategy, so that no strategy always follows the same one.
    for (std::size_t k = 0; k < strategies.size(); ++k) {
      const auto& s = strategies[(k + r) % strategies.size()];
      results[s.text].push_back(run(s, path, size, dev));
    }
  }
  std::printf("%-24s %8s  rounds (GB/s), %.2f GB read cold each\n", "strategy", "median", size / 1e9);
  for (const auto& s : strategies) {
    auto v = results[s.text];
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end());
    std::printf("%-24s %8.2f ", s.text.c_str(), sorted[sorted.size() / 2]);
    for (auto x : v) std::printf(" %.2f", x);
    std::printf("\n");
  }
  cudaFree(dev);
  return 0;
}
