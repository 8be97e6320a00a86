// `h5tile demo`: the main job. Writes a generated array with several worker ranks, reads it
// back whole and in batches, checks every byte, and prints sizes, times and GB/s.
#include "common.hpp"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <h5tile/h5tile.hpp>

namespace h5tile::cli {
namespace {

struct DemoOptions {
  std::string size = "2G";
  unsigned ranks = 4;
  std::string path = "h5tile-demo/demo.h5";
  std::string dataset = "/data";
  std::string layout = "virtual";
  std::uint64_t columns = 1024;
  bool no_sync = false;
};

DemoOptions demo_options;

// The demo's values: element i is (i * 2654435761 + 12345) mod 2^32, which numpy can recompute.
std::uint32_t pattern(std::uint64_t i) { return static_cast<std::uint32_t>(i * 2654435761ULL + 12345ULL); }

void fill_pattern(std::vector<std::uint32_t>& data, unsigned threads) {
  std::vector<std::thread> workers;
  const auto n = data.size();
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (auto i = n * t / threads; i < n * (t + 1) / threads; ++i) {
        data[i] = pattern(i);
      }
    });
  }
  for (auto& w : workers) w.join();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run_demo() {
  const auto& o = demo_options;
  const auto bytes = size_of(o.size);
  // The demo holds the array twice (the source and what it reads back).
  const auto memory =
      static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  if (memory > 0 && bytes > memory / 2) {
    throw CLI::ValidationError("--size", fmt::format("{} ({}) is more than half of this machine's memory ({}): the "
                                                     "demo holds the array twice",
                                                     o.size, human_bytes(bytes), human_bytes(memory)));
  }
  const std::uint64_t rows = std::max<std::uint64_t>(1, bytes / 4 / o.columns);
  const Shape shape{rows, o.columns};
  const double gb = static_cast<double>(rows * o.columns * 4) / 1e9;
  print_line(stdout, "h5tile demo: uint32 array of shape [{}, {}] ({:.2f} GB), {} ranks, layout {}, file {}:{}", rows,
             o.columns, gb, o.ranks, o.layout, o.path, o.dataset);

  std::vector<std::uint32_t> source(rows * o.columns);
  fill_pattern(source, std::max(1U, std::thread::hardware_concurrency()));

  WriteOptions write{.layout = layout_from_name(o.layout), .ranks = o.ranks, .sync = !o.no_sync};
  auto start = std::chrono::steady_clock::now();
  {
    ProgressBar bar("write");
    write.progress = bar.callback();
    to_file(view(source.data(), shape), o.path, o.dataset, write).wait();
  }
  const double t_write = seconds_since(start);

  start = std::chrono::steady_clock::now();
  const Array whole = [&] {
    ProgressBar bar("read");
    return from_file(o.path, o.dataset, ReadOptions{.threads = o.ranks, .progress = bar.callback()});
  }();
  const double t_read = seconds_since(start);
  const bool whole_ok = whole.shape() == shape && whole.dtype() == DType(DTypeKind::UInt32) &&
                        std::memcmp(whole.data(), source.data(), whole.nbytes()) == 0;

  const Shape chunk{std::max<std::uint64_t>(1, rows / 7 + 1), o.columns};
  start = std::chrono::steady_clock::now();
  std::uint64_t blocks = 0;
  std::uint64_t checked = 0;
  bool batches_ok = true;
  for (Block& block : from_file_batched(o.path, o.dataset, chunk, ReadOptions{.threads = o.ranks})) {
    const auto* expected = source.data() + block.offset[0] * o.columns;
    batches_ok =
        batches_ok && block.offset[1] == 0 && std::memcmp(block.data.data(), expected, block.data.nbytes()) == 0;
    checked += block.data.nbytes();
    ++blocks;
  }
  const double t_batched = seconds_since(start);
  batches_ok = batches_ok && checked == rows * o.columns * 4;

  fmt::print("{:<22}{:>10}{:>10}  {}\n", "step", "seconds", "GB/s", "check");
  fmt::print("{:<22}{:>10.3f}{:>10.2f}  {}\n", write.sync ? "write (fdatasync)" : "write (no sync)", t_write,
             gb / t_write, "-");
  fmt::print("{:<22}{:>10.3f}{:>10.2f}  {}\n", "read whole", t_read, gb / t_read, whole_ok ? "equal" : "MISMATCH");
  fmt::print("{:<22}{:>10.3f}{:>10.2f}  {}\n", fmt::format("read {} batches", blocks), t_batched, gb / t_batched,
             batches_ok ? "equal" : "MISMATCH");
  return whole_ok && batches_ok ? 0 : 1;
}

}  // namespace

void add_demo(CLI::App& app) {
  auto* demo = app.add_subcommand("demo",
                                  "Write a generated array, read it back whole and in batches, check it, "
                                  "and print the throughput");
  demo->add_option("--size", demo_options.size, "array size: bytes, or with a binary suffix K, M, G or T (1.5G, 512m)")
      ->capture_default_str()
      ->check(size_check());
  demo->add_option("--ranks", demo_options.ranks, "worker ranks (threads) writing and reading")
      ->capture_default_str()
      ->check(CLI::Range(1U, 4096U));
  demo->add_option("--path", demo_options.path, "file to write (its folder is created)")->capture_default_str();
  demo->add_option("--dataset", demo_options.dataset, "dataset name")->capture_default_str();
  demo->add_option("--layout", demo_options.layout, "layout written")
      ->capture_default_str()
      ->check(CLI::IsMember({"virtual", "contiguous", "chunked"}));
  demo->add_option("--columns", demo_options.columns, "length of the second axis")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 30));
  demo->add_flag("--no-sync", demo_options.no_sync, "skip fdatasync (measure the page cache, not the disk)");
  demo->footer(
      "Examples:\n"
      "  h5tile demo                              2 GiB, 4 ranks, virtual layout\n"
      "  h5tile demo --size 8G --ranks 16 --path /scratch/me/demo.h5\n"
      "The values are (i * 2654435761 + 12345) mod 2^32 for element i, so that other tools can\n"
      "check the file (scripts/check_demo.py does, with h5py).");
  demo->callback([] { selected_command() = run_demo; });
}

}  // namespace h5tile::cli
