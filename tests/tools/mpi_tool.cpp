// Test tool for h5tile under mpirun. Every rank holds rows of a global uint32 array [ROWS,
// COLS] whose element i is (i * 2654435761 + 12345) mod 2^32, split unevenly by rank.
//
//   mpi_tool write FILE LAYOUT ROWS COLS [flags]   each rank writes its rows (write_tiles)
//   mpi_tool read FILE                             each rank reads its tile (read_tile) and
//                                                  the whole array (from_file); checks both
// flags: --device         tiles in (and reads into) the rank's default GPU
//        --no-whole       read: skip reading and checking the whole array on every rank
//        --batched ROWS   read: also read the whole dataset in blocks of ROWS rows
//        --fail-rank K    rank K's writes fail part-way (RLIMIT_FSIZE), a real I/O error
//        --bad-path-rank K  rank K passes a different path
//        --gzip LEVEL     write: gzip + shuffle + fletcher32 at LEVEL, in chunks of --chunk-rows
//        --chunk-rows R   write: chunks of R rows (and every column); ranks split the rows on
//                         multiples of R unless --unaligned
// Prints one line per rank: "rank R: ok ..." or "rank R: error TYPE: message". Exit 1 on error.
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <h5tile/h5tile.hpp>
#include <h5tile/mpi.hpp>

#include "gpu/backend.hpp"

namespace {

std::uint32_t pattern(std::uint64_t i) { return static_cast<std::uint32_t>(i * 2654435761ULL + 12345ULL); }

std::string type_of(const std::exception& e) {
  if (dynamic_cast<const h5tile::InvalidArgument*>(&e)) return "InvalidArgument";
  if (dynamic_cast<const h5tile::IoError*>(&e)) return "IoError";
  if (dynamic_cast<const h5tile::Error*>(&e)) return "Error";
  return "other";
}

int flag_value(const std::vector<std::string>& args, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) return std::stoi(args[i + 1]);
  }
  return -1;
}

bool has(const std::vector<std::string>& args, const std::string& flag) {
  for (const auto& a : args) {
    if (a == flag) return true;
  }
  return false;
}

int run(h5tile::MpiCommunicator& comm, const std::vector<std::string>& args) {
  const int rank = comm.rank();
  const int size = comm.size();
  const bool device = has(args, "--device");
  const int gpu = device ? comm.default_device() : -1;
  if (device && gpu < 0) throw h5tile::RuntimeError("--device given but no CUDA device is visible");
  if (args.at(0) == "write") {
    const std::string file = args.at(1);
    const auto layout = h5tile::layout_from_name(args.at(2));
    const std::uint64_t rows = std::stoull(args.at(3));
    const std::uint64_t cols = std::stoull(args.at(4));
    const int chunk_rows = flag_value(args, "--chunk-rows");
    // Rows split unevenly by rank; on multiples of the chunk's rows where chunks are asked for.
    const std::uint64_t unit = chunk_rows > 0 && !has(args, "--unaligned") ? static_cast<std::uint64_t>(chunk_rows) : 1;
    const std::uint64_t units = (rows + unit - 1) / unit;
    const auto boundary = [&](int r) {
      return std::min(rows, unit * (units * static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(size)));
    };
    const std::uint64_t lo = boundary(rank);
    const std::uint64_t hi = boundary(rank + 1);
    std::vector<std::uint32_t> mine((hi - lo) * cols);
    for (std::uint64_t i = 0; i < mine.size(); ++i) mine[i] = pattern(lo * cols + i);
    h5tile::ArrayView view{mine.data(), h5tile::dtype_of<std::uint32_t>(), {hi - lo, cols}, {}};
    h5tile::Array on_device(h5tile::dtype_of<std::uint32_t>(), {hi - lo, cols}, gpu);
    if (device) {
      // Copy the tile to the GPU in pieces of rows that fit one staging buffer.
      const auto staging = h5tile::detail::gpu::staging_for(h5tile::settings::staging_bytes(),
                                                            h5tile::settings::task_size(), h5tile::settings::threads());
      const std::uint64_t piece_rows = std::max<std::uint64_t>(1, staging.piece_bytes / (cols * 4));
      const std::uint64_t pieces = (hi - lo + piece_rows - 1) / piece_rows;
      h5tile::detail::gpu::stage_to_device(
          gpu, pieces, 4,
          [&](std::size_t p) {
            const auto first = p * piece_rows;
            return h5tile::detail::gpu::DeviceRegion{on_device.data() + first * cols * 4,
                                                     {static_cast<std::int64_t>(cols * 4), 4},
                                                     {std::min(piece_rows, hi - lo - first), cols}};
          },
          [&](std::size_t p, std::byte* host) {
            const auto first = p * piece_rows;
            std::memcpy(host, mine.data() + first * cols, std::min(piece_rows, hi - lo - first) * cols * 4);
          },
          8, staging);
      view = on_device.view();
    }
    if (rank == flag_value(args, "--fail-rank")) {
      ::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{4096, 4096};  // files of this rank stop growing at 4 KiB: pwrite fails (EFBIG)
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    const std::string path = rank == flag_value(args, "--bad-path-rank") ? file + ".other" : file;
    const h5tile::Tile tile{h5tile::Box{{lo, 0}, {hi - lo, cols}}, view};
    const auto t0 = std::chrono::steady_clock::now();
    h5tile::WriteOptions options{.layout = layout};
    if (chunk_rows > 0) options.chunk = {static_cast<std::uint64_t>(chunk_rows), cols};
    if (const int level = flag_value(args, "--gzip"); level >= 0) {
      options.compression = {h5tile::Compressor::Gzip, level, true, true};
    }
    h5tile::write_tiles(comm, {rows, cols}, {&tile, 1}, path, "/data", options);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("rank %d: ok wrote rows [%llu:%llu) in %.3f s\n", rank, static_cast<unsigned long long>(lo),
                static_cast<unsigned long long>(hi), s);
    return 0;
  }
  if (args.at(0) == "read") {
    const std::string file = args.at(1);
    const auto t0 = std::chrono::steady_clock::now();
    const auto tile = h5tile::read_tile(comm, file, "/data", {.device = gpu});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<std::uint32_t> got(tile.data.nbytes() / 4);
    if (device) {
      h5tile::detail::gpu::copy_to_host(got.data(), tile.data.data(), tile.data.nbytes());
    } else {
      std::memcpy(got.data(), tile.data.data(), tile.data.nbytes());
    }
    const auto cols = tile.box.extent.size() > 1 ? tile.box.extent[1] : 1;
    const auto total_cols = h5tile::describe(file, "/data").shape[1];
    bool ok = true;
    for (std::uint64_t i = 0; i < tile.box.extent[0] && ok; ++i)
      for (std::uint64_t j = 0; j < cols && ok; ++j)
        ok = got[i * cols + j] == pattern((tile.box.offset[0] + i) * total_cols + tile.box.offset[1] + j);
    std::size_t whole_size = 0;
    if (!has(args, "--no-whole")) {
      const auto whole = h5tile::from_file(file, "/data");
      const auto w = whole.as<std::uint32_t>();
      for (std::uint64_t i = 0; i < w.size() && ok; ++i) ok = w[i] == pattern(i);
      whole_size = w.size();
    }
    std::string batched;
    if (const int chunk_rows = flag_value(args, "--batched"); chunk_rows > 0) {
      const auto b0 = std::chrono::steady_clock::now();
      std::uint64_t bytes = 0;
      for (auto& block : h5tile::from_file_batched(file, "/data", {static_cast<std::uint64_t>(chunk_rows), total_cols},
                                                   {.device = gpu})) {
        bytes += block.data.nbytes();
      }
      const double bs = std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
      batched = " batched " + std::to_string(bytes) + " bytes in " + std::to_string(bs) + " s";
    }
    std::printf("rank %d: %s tile %s of %zu elements in %.3f s, whole array of %zu elements%s\n", rank,
                ok ? "ok" : "MISMATCH", h5tile::to_string(tile.box).c_str(), got.size(), seconds, whole_size,
                batched.c_str());
    return ok ? 0 : 1;
  }
  throw h5tile::InvalidArgument("unknown command " + args.at(0));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    h5tile::MpiCommunicator comm;
    try {
      status = run(comm, std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
      std::printf("rank %d: error %s: %s\n", comm.rank(), type_of(e).c_str(), e.what());
      status = 1;
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return status;
}
