// Decided: a part of a shuffled chunk goes row by row from the byte streams straight into the read's
// memory (unshuffle_runs), with streaming stores for a read of 8 MiB or more: 0.89x the time of
// unshuffling aside and copying, for the gzip box.
//
// Decodes the 64 chunks of the box ds[1024:3072, 1024:3072] of bench/fancy_read.py's dataset
// (4096 x 4096 float32, 256 x 256 chunks, gzip 4 + shuffle) into a 2048 x 2048 result (16 MiB)
// on one thread, 40 rounds, each way in turn, and prints the minimum and median of each: inflate
// only; inflate and unshuffle aside (no copy: the floor); unshuffle aside then each row copied into
// the result (before); unshuffle_runs straight into the result's rows; the same with streaming
// stores (after). The stored chunks come from h5py (the same commands as inflate_libraries.cpp);
// with h5tile built into build/:
//
//   g++ -O2 -std=c++20 -Isrc -Iinclude bench/probes/unshuffle_into_rows.cpp build/libh5tile.a \
//       -o unshuffle_into_rows -ldeflate -lfmt -lzstd -llz4 -lblosc -llzf -lz && ./unshuffle_into_rows
//
// 2026-12-06, CPU machine (2 cores, the other idle), medians of two runs: inflate 15.85 / 16.45 ms,
// + unshuffle aside 16.89 / 17.44, + rows copied 21.15 / 21.89, unshuffle_runs 20.01 / 20.81,
// with streaming stores 18.82 / 19.55 ms. Through h5tile.File on both cores the streaming stores
// took the box from 14.27 to 12.50 ms (means of six alternating runs' medians).
#include <libdeflate.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "engine/codecs/codec.hpp"

using h5tile::detail::ChunkRuns;
using h5tile::detail::ElementRun;

int main() {
  std::ifstream chunks_file("chunks.bin", std::ios::binary);
  const std::vector<unsigned char> chunks((std::istreambuf_iterator<char>(chunks_file)), {});
  std::ifstream sizes_file("sizes.bin", std::ios::binary);
  std::vector<std::int64_t> sizes(256);
  sizes_file.read(reinterpret_cast<char*>(sizes.data()), static_cast<std::streamsize>(sizes.size() * 8));
  std::vector<std::size_t> offsets(256, 0);
  for (std::size_t i = 1; i < 256; ++i) offsets[i] = offsets[i - 1] + static_cast<std::size_t>(sizes[i - 1]);

  constexpr std::size_t side = 256, es = 4, chunk_bytes = side * side * es, row_bytes = 2048 * es;
  std::vector<std::byte> inflated(chunk_bytes);
  std::vector<std::byte> aside(chunk_bytes);
  std::vector<std::byte> result(2048 * row_bytes, std::byte{1});  // touched: as memory reused
  auto* inflater = libdeflate_alloc_decompressor();
  const char* names[] = {"inflate only", "inflate, unshuffle aside", "unshuffle aside, rows copied",
                         "unshuffle_runs into the rows", "the same, streaming stores"};
  std::vector<std::vector<double>> ms(5);
  for (int round = 0; round < 40; ++round) {
    for (int way = 0; way < 5; ++way) {
      const auto start = std::chrono::steady_clock::now();
      for (std::size_t ci = 4; ci < 12; ++ci) {
        for (std::size_t cj = 4; cj < 12; ++cj) {
          const std::size_t i = ci * 16 + cj;
          std::size_t produced = 0;
          if (libdeflate_zlib_decompress(inflater, chunks.data() + offsets[i], static_cast<std::size_t>(sizes[i]),
                                         inflated.data(), chunk_bytes, &produced) != LIBDEFLATE_SUCCESS) {
            std::fprintf(stderr, "chunk %zu does not inflate\n", i);
            return 1;
          }
          std::byte* corner = result.data() + (ci - 4) * side * row_bytes + (cj - 4) * side * es;
          if (way == 1 || way == 2) h5tile::detail::unshuffle(inflated.data(), aside.data(), chunk_bytes, es);
          if (way == 2) {
            for (std::size_t r = 0; r < side; ++r)
              std::memcpy(corner + r * row_bytes, aside.data() + r * side * es, side * es);
          }
          if (way >= 3) {
            std::vector<ElementRun> rows;
            for (std::size_t r = 0; r < side; ++r) rows.push_back({r * side, corner + r * row_bytes});
            h5tile::detail::unshuffle_runs(inflated.data(), side * side, ChunkRuns{rows, side, es, way == 4});
          }
        }
      }
      ms[way].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
  }
  for (int way = 0; way < 5; ++way) {
    std::sort(ms[way].begin(), ms[way].end());
    std::printf("%-30s min %6.2f  median %6.2f ms\n", names[way], ms[way].front(), ms[way][ms[way].size() / 2]);
  }
  libdeflate_free_decompressor(inflater);
}
