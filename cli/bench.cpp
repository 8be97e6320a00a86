// `h5tile bench`: h5tile next to the limits of the storage (plain pread/pwrite loops) and plain
// HDF5 calls, in one run on the same data, on the user's own file system. bench/peers.py adds
// h5py to the same table.
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <h5tile/h5tile.hpp>

#include "common.hpp"

namespace h5tile::cli {
namespace {
namespace fs = std::filesystem;

struct BenchOptions {
  std::string dir = "h5tile-bench";
  std::string size = "1G";
  unsigned ranks = 0;
  int repeats = 3;
  bool cold = false;
  bool json = false;
  bool keep = false;
  bool writes_only = false;
};
BenchOptions bench_options;

struct Row {
  // "write" (until durable), "write0" (until the call returns), "read" (into a buffer whose
  // pages are mapped already) or "read-new" (into newly allocated memory, which the kernel
  // zero-fills page by page as the read first touches it)
  std::string group;
  std::string name;
  double seconds = 0;
  bool is_limit = false;
};

bool drop_caches() {
  ::sync();
  std::ofstream f("/proc/sys/vm/drop_caches");
  return f && (f << "3\n") && f.flush();
}

double median_seconds(int repeats, bool cold, const std::function<void()>& prepare, const std::function<void()>& f) {
  std::vector<double> t;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    if (prepare) prepare();
    if (cold) drop_caches();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A plain loop of 16 MiB pread or pwrite calls over `bytes`, split over `threads`.
void posix_loop(const fs::path& path, std::byte* buffer, std::uint64_t bytes, unsigned threads, bool writing,
                bool direct = false, bool sync = true) {
  const int fd = writing ? ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644)
                         : ::open(path.c_str(), O_RDONLY | (direct ? O_DIRECT : 0));
  if (fd < 0) throw RuntimeError(fmt::format("bench: cannot open '{}'", path.string()));
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      const std::uint64_t lo = bytes * t / threads / 4096 * 4096;
      const std::uint64_t hi = t + 1 == threads ? bytes : bytes * (t + 1) / threads / 4096 * 4096;
      for (std::uint64_t pos = lo; pos < hi;) {
        const auto n = std::min<std::uint64_t>(16 << 20, hi - pos);
        const auto r = writing ? ::pwrite(fd, buffer + pos, n, static_cast<off_t>(pos))
                               : ::pread(fd, buffer + pos, n, static_cast<off_t>(pos));
        if (r <= 0) break;
        pos += static_cast<std::uint64_t>(r);
      }
    });
  }
  for (auto& t : ts) t.join();
  if (writing && sync) ::fsync(fd);
  ::close(fd);
}

int run_bench() {
  const auto& o = bench_options;
  const std::uint64_t cols = 4096;
  const std::uint64_t rows = std::max<std::uint64_t>(1, size_of(o.size) / 4 / cols);
  const std::uint64_t bytes = rows * cols * 4;
  const unsigned all = o.ranks != 0 ? o.ranks : std::max(1U, std::thread::hardware_concurrency());
  const fs::path dir = o.dir;
  std::error_code ec;
  const bool made_dir = !fs::exists(dir, ec);
  fs::create_directories(dir);
  // What the benchmark writes, removed at the end (also after an error) unless --keep;
  // the folder too when the benchmark made it. Nothing else in the folder is touched.
  const std::vector<std::string> written{"plain.bin", "hdf5.h5", "contiguous.h5", "chunked.h5", "virtual.h5"};
  struct CleanUp {
    const fs::path& dir;
    const std::vector<std::string>& names;
    bool keep;
    bool made_dir;
    ~CleanUp() {
      if (keep) return;
      std::error_code e;
      for (const auto& name : names) {
        fs::remove(dir / name, e);
        fs::remove_all(dir / (name + ".tiles"), e);
        const auto stem = fs::path(name).stem().string();
        fs::remove(dir / (stem + "-nosync.h5"), e);
        fs::remove_all(dir / (stem + "-nosync.h5.tiles"), e);
      }
      if (made_dir) fs::remove(dir, e);  // only when empty
    }
  } const clean_up{dir, written, o.keep, made_dir};
  const bool cold = o.cold && drop_caches();

  Array data(DType(DTypeKind::Float32), {rows, cols});
  auto* words = reinterpret_cast<std::uint32_t*>(data.data());
  for (std::uint64_t i = 0; i < rows * cols; ++i) words[i] = static_cast<std::uint32_t>(i * 2654435761ULL);
  Array scratch(DType(DTypeKind::Float32), {rows, cols});
  std::fill_n(scratch.data(), scratch.nbytes(), std::byte{0});

  std::vector<Row> rows_out;
  auto add = [&](const std::string& group, const std::string& name, double s, bool limit = false) {
    rows_out.push_back({group, name, s, limit});
    if (!o.json) print_line(stderr, "  {:<8} {:<52} {:8.3f} s", group, name, s);
  };
  const auto raw = dir / "plain.bin";
  const auto hdf5 = dir / "hdf5.h5";
  // Writes: every engine once per round, in turn, so that a machine whose speed drifts (other
  // work) slows them all alike; each figure is the median of its runs.
  struct Case {
    std::string group;
    std::string name;
    bool is_limit = false;
    std::function<void()> prepare;  // untimed, before each run
    std::function<void()> run;
  };
  std::vector<Case> writes;
  writes.push_back({"write", "limit: plain pwrite loop + fsync, 1 thread", true, {}, [&] {
                      posix_loop(raw, data.data(), bytes, 1, true);
                    }});
  writes.push_back({"write0", "limit: plain pwrite loop, no fsync, 1 thread", true, [&] { fs::remove(raw); },
                    [&] { posix_loop(raw, data.data(), bytes, 1, true, false, false); }});
  writes.push_back({"write", "plain HDF5 H5Dwrite (contiguous) + fsync", false, {}, [&] {
                      const hid_t f = H5Fcreate(hdf5.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
                      const hsize_t dims[2] = {rows, cols};
                      const hid_t space = H5Screate_simple(2, dims, nullptr);
                      const hid_t d =
                          H5Dcreate2(f, "/data", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
                      H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data());
                      H5Dclose(d);
                      H5Sclose(space);
                      H5Fclose(f);
                      const int fd = ::open(hdf5.c_str(), O_RDONLY);
                      ::fsync(fd);
                      ::close(fd);
                    }});
  for (const auto layout : {Layout::Contiguous, Layout::Chunked, Layout::Virtual}) {
    const std::string name(layout_name(layout));
    for (const unsigned ranks : all == 1 ? std::vector<unsigned>{1} : std::vector<unsigned>{1, all}) {
      writes.push_back({"write",
                        fmt::format("h5tile to_file {}, {} rank(s), fsync", name, ranks),
                        false,
                        {},
                        [&, layout, ranks, name] {
                          to_file(data.view(), dir / fmt::format("{}.h5", name), "/data",
                                  {.layout = layout, .ranks = ranks, .sync = true})
                              .wait();
                        }});
    }
    // Until the call returns (no fsync), into a new file (untimed removal first).
    const auto fresh = dir / fmt::format("{}-nosync.h5", name);
    const auto remove_fresh = [fresh] {
      fs::remove(fresh);
      fs::remove_all(fresh.string() + ".tiles");
    };
    for (const unsigned ranks : all == 1 ? std::vector<unsigned>{1} : std::vector<unsigned>{1, all}) {
      writes.push_back(
          {"write0", fmt::format("h5tile to_file {}, {} rank(s), no fsync", name, ranks), false, remove_fresh,
           [&, layout, ranks, fresh] {
             to_file(data.view(), fresh, "/data", {.layout = layout, .ranks = ranks, .sync = false}).wait();
           }});
    }
  }
  // Before each run (untimed): the dirty pages every earlier run left (those without fsync leave
  // their whole file) are written out, so that their writeback does not fall into its time.
  // Each round runs the engines in another order (a fixed shuffle): what one run leaves to the
  // file system (blocks of a replaced file still to free or discard) slows the run after it, and
  // no engine should always follow the same one.
  std::vector<std::vector<double>> times(writes.size());
  std::vector<std::size_t> order(writes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffle_rng(20);
  for (int round = 0; round < std::max(1, o.repeats); ++round) {
    if (round > 0) std::shuffle(order.begin(), order.end(), shuffle_rng);
    for (const auto c : order) {
      const auto prepare = [&] {
        if (writes[c].prepare) writes[c].prepare();
        ::sync();
      };
      times[c].push_back(median_seconds(1, false, prepare, writes[c].run));
    }
  }
  for (std::size_t c = 0; c < writes.size(); ++c) {
    if (times[c].empty()) continue;
    std::sort(times[c].begin(), times[c].end());
    add(writes[c].group, writes[c].name, times[c][times[c].size() / 2], writes[c].is_limit);
  }
  for (const auto* name : {"contiguous", "chunked", "virtual"}) {
    fs::remove(dir / fmt::format("{}-nosync.h5", name));
    fs::remove_all(dir / fmt::format("{}-nosync.h5.tiles", name));
  }
  if (!o.writes_only) {
    // Reads (warm page cache unless --cold).
    add("read", "limit: plain pread loop, 1 thread",
        median_seconds(o.repeats, cold, {}, [&] { posix_loop(raw, scratch.data(), bytes, 1, false); }), true);
    add("read", fmt::format("limit: plain pread loop, {} threads", all),
        median_seconds(o.repeats, cold, {}, [&] { posix_loop(raw, scratch.data(), bytes, all, false); }), true);
    add("read-new", fmt::format("limit: plain pread loop into a new array, {} threads", all),
        median_seconds(o.repeats, cold, {},
                       [&] {
                         Array fresh(DType(DTypeKind::Float32), {rows, cols});  // allocated as from_file allocates
                         posix_loop(raw, fresh.data(), bytes, all, false);
                       }),
        true);
    add("read", "limit: O_DIRECT read loop (dd iflag=direct)",
        median_seconds(o.repeats, false, {}, [&] { posix_loop(raw, scratch.data(), bytes, 1, false, true); }), true);
    add("read", "plain HDF5 H5Dread", median_seconds(o.repeats, cold, {}, [&] {
          const hid_t f = H5Fopen(hdf5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
          const hid_t d = H5Dopen2(f, "/data", H5P_DEFAULT);
          H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, scratch.data());
          H5Dclose(d);
          H5Fclose(f);
        }));
    for (const auto layout : {Layout::Contiguous, Layout::Chunked, Layout::Virtual}) {
      const std::string name(layout_name(layout));
      for (const unsigned threads : {1U, all}) {
        add("read-new", fmt::format("h5tile from_file {}, {} thread(s)", name, threads),
            median_seconds(o.repeats, cold, {},
                           [&] { (void)from_file(dir / fmt::format("{}.h5", name), "/data", {.threads = threads}); }));
      }
      // Into the same buffer the limit loops read into (its pages already mapped).
      add("read", fmt::format("h5tile read_into {}, {} threads", name, all), median_seconds(o.repeats, cold, {}, [&] {
            read_into(dir / fmt::format("{}.h5", name), "/data", scratch.view(), {}, {.threads = all});
          }));
    }
    add("read-new", fmt::format("h5tile from_file_batched contiguous, 8 blocks"),
        median_seconds(o.repeats, cold, {}, [&] {
          for (auto& block : from_file_batched(dir / "contiguous.h5", "/data", {rows / 8 + 1, cols})) (void)block;
        }));
  }
  // The check, untimed: every file written (each layout) read back equals the source.
  bool equal = true;
  for (const auto* name : {"contiguous", "chunked", "virtual"}) {
    equal = equal &&
            std::equal(data.data(), data.data() + bytes, from_file(dir / fmt::format("{}.h5", name), "/data").data());
  }

  // The table: GB/s and the speed relative to the fastest plain loop ("limit:" row) of its group.
  nlohmann::json out{{"bytes", bytes},
                     {"shape", {rows, cols}},
                     {"ranks", all},
                     {"cold", cold},
                     {"h5tile_read_equals_source", equal},
                     {"results", nlohmann::json::array()}};
  std::map<std::string, double> best_limit;
  for (const auto& r : rows_out) {
    if (r.is_limit) best_limit[r.group] = std::max(best_limit[r.group], static_cast<double>(bytes) / r.seconds / 1e9);
  }
  if (!o.json) {
    print_line(stdout, "h5tile bench: float32 [{}, {}] = {}, {} ranks/threads, {} page cache, in {}", rows, cols,
               human_bytes(bytes), all, cold ? "cold" : "warm", dir.string());
    fmt::print("{:<9}{:<50}{:>10}{:>14}\n", "", "engine", "GB/s", "vs best loop");
  }
  for (const auto& r : rows_out) {
    const double gbps = static_cast<double>(bytes) / r.seconds / 1e9;
    const double ratio = gbps / best_limit[r.group];
    out["results"].push_back(
        {{"group", r.group}, {"name", r.name}, {"seconds", r.seconds}, {"gbps", gbps}, {"ratio_to_best_loop", ratio}});
    if (!o.json) print_line(stdout, "{:<9}{:<50}{:>10.2f}{:>13.2f}x", r.group, r.name, gbps, ratio);
  }
  if (o.json) {
    fmt::print("{}\n", json_text(out));
  } else {
    fmt::print("vs best loop: GB/s over the fastest 'limit:' loop of the group (above 1.00x: faster than that loop)\n");
    fmt::print("check: the files written (contiguous, chunked, virtual), read back untimed, equal the source: {}\n",
               equal ? "yes" : "NO");
    print_line(stdout, "{}",
               o.keep ? fmt::format("the files are kept in {}", dir.string())
                      : fmt::format("the files written in {} are removed (--keep keeps them)", dir.string()));
  }
  return equal ? kOk : kProblem;
}

}  // namespace

void add_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench",
                                 "Measure h5tile next to plain read/write loops (the storage limit) and "
                                 "plain HDF5 calls, on the same data, where you run it");
  cmd->add_option("--dir", bench_options.dir, "folder for the benchmark files (on the file system to measure)")
      ->capture_default_str();
  cmd->add_option("--size", bench_options.size, "array size: bytes, or with a binary suffix K, M, G or T (1.5G, 512m)")
      ->capture_default_str()
      ->check(size_check());
  cmd->add_option("--ranks", bench_options.ranks, "ranks and threads for the parallel runs (0: all cores)");
  cmd->add_option("--repeats", bench_options.repeats, "runs per figure (the median is shown)")->capture_default_str();
  cmd->add_flag("--cold", bench_options.cold, "drop the page cache before every read (needs root)");
  cmd->add_flag("--writes-only", bench_options.writes_only, "time the writes only (the write and write0 groups)");
  cmd->add_flag("--json", bench_options.json, "print JSON (for scripts)");
  cmd->add_flag("--keep", bench_options.keep, "keep the files written (default: removed at the end)");
  cmd->footer(
      "Examples:\n"
      "  h5tile bench --dir /scratch/$USER/bench --size 8G\n"
      "  sudo h5tile bench --cold --json > bench.json\n"
      "Groups: write (timed until the data is durable, fsync), write0 (until the call returns), read (into a\n"
      "buffer whose pages are mapped: read_into's case) and read-new (into a newly allocated array: from_file's\n"
      "case; the kernel zero-fills each new page). 'vs best loop' is each row's GB/s over the fastest plain\n"
      "loop ('limit:' row) of its group: above 1.00x the row is faster than that loop. The writes run in\n"
      "rounds, every engine once per round (in another order each round), each run after an untimed\n"
      "sync(2); each figure is the median over the rounds (--repeats).\n"
      "The files written are removed at the end unless --keep is given.\n"
      "bench/peers.py runs this and h5py on the same data.");
  cmd->callback([] { selected_command() = run_bench; });
}

}  // namespace h5tile::cli
