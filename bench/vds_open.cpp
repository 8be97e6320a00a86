// The open of a virtual dataset, apart from its read: a read of one element opens every source
// (checks included), and describe reads only the mapping. Prints both, every 5th of 20 runs.
//   h5tile_vds_open FILE   (e.g. the 4096-tile file that h5tile_vds_scaling writes)
#include <chrono>
#include <cstdio>
#include <h5tile/h5tile.hpp>
int main(int argc, char** argv) {
  float one = 0;
  const char* f = argc > 1 ? argv[1] : "vds-scaling/vds-4096.h5";
  for (int i = 0; i < 20; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    h5tile::read_into(f, "/data", h5tile::view(&one, {1, 1}), {0, 0});
    auto t1 = std::chrono::steady_clock::now();
    (void)h5tile::describe(f, "/data");
    auto t2 = std::chrono::steady_clock::now();
    if (i % 5 == 0) {
      std::printf("open + read of 1 element %.3f s, describe %.3f s\n", std::chrono::duration<double>(t1 - t0).count(),
                  std::chrono::duration<double>(t2 - t1).count());
    }
  }
}
