// Decided: gzip chunks stay decoded by libdeflate (ISA-L's igzip inflated them 0.77-0.85x as fast).
//
// Inflates the stored chunks of one gzip + shuffle dataset with libdeflate and with ISA-L's
// igzip (Debian's libisal-dev), one thread, three rounds, and prints each one's speed. Not built
// with the project (ISA-L is no dependency of h5tile). The chunks come from h5py, out of the file
// bench/fancy_read.py writes (4096 x 4096 float32, 256 x 256 chunks, gzip 4 + shuffle):
//
//   python3 -c 'import h5py, numpy as np
//   ds = h5py.File("fancy.h5")["x"]; parts = [ds.id.read_direct_chunk((i * 256, j * 256))[1]
//                                             for i in range(16) for j in range(16)]
//   open("chunks.bin", "wb").write(b"".join(parts)); np.array([len(p) for p in parts], np.int64).tofile("sizes.bin")'
//   g++ -O2 bench/probes/inflate_libraries.cpp -o inflate_libraries -ldeflate -lisal && ./inflate_libraries
//
// 2026-12-05, CPU machine (2 cores): libdeflate 1.25-1.39 GB/s, igzip 1.04-1.08 GB/s of output.
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

int main() {
  std::ifstream chunks_file("chunks.bin", std::ios::binary);
  const std::vector<unsigned char> chunks((std::istreambuf_iterator<char>(chunks_file)), {});
  std::ifstream sizes_file("sizes.bin", std::ios::binary);
  std::vector<std::int64_t> sizes(256);
  sizes_file.read(reinterpret_cast<char*>(sizes.data()), static_cast<std::streamsize>(sizes.size() * 8));
  std::vector<unsigned char> out(256 * 1024);
  libdeflate_decompressor* decompressor = libdeflate_alloc_decompressor();
  using Clock = std::chrono::steady_clock;
  for (int round = 0; round < 3; ++round) {
    const auto t0 = Clock::now();
    std::size_t offset = 0, total = 0;
    for (const auto size : sizes) {
      std::size_t produced = 0;
      if (libdeflate_zlib_decompress(decompressor, chunks.data() + offset, static_cast<std::size_t>(size), out.data(),
                                     out.size(), &produced) != LIBDEFLATE_SUCCESS) {
        return 1;
      }
      total += produced;
      offset += static_cast<std::size_t>(size);
    }
    const auto t1 = Clock::now();
    offset = 0;
    for (const auto size : sizes) {
      inflate_state state;
      isal_inflate_init(&state);
      state.crc_flag = ISAL_ZLIB;
      state.next_in = const_cast<unsigned char*>(chunks.data() + offset);
      state.avail_in = static_cast<std::uint32_t>(size);
      state.next_out = out.data();
      state.avail_out = static_cast<std::uint32_t>(out.size());
      if (isal_inflate_stateless(&state) != ISAL_DECOMP_OK) return 1;
      offset += static_cast<std::size_t>(size);
    }
    const auto t2 = Clock::now();
    const double a = std::chrono::duration<double>(t1 - t0).count(), b = std::chrono::duration<double>(t2 - t1).count();
    std::printf("libdeflate %.2f GB/s, igzip %.2f GB/s (igzip / libdeflate %.2f)\n", total / a / 1e9, total / b / 1e9,
                a / b);
  }
  libdeflate_free_decompressor(decompressor);
}
