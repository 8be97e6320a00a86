// Writes an array with the installed h5tile, reads it back, and exits non-zero unless the data
// and shape read equal those written: proof that find_package(h5tile) gives a working library.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <numeric>
#include <vector>

#include <h5tile/h5tile.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer FOLDER (written into)\n");
    return 2;
  }
  try {
    const std::filesystem::path path = std::filesystem::path(argv[1]) / "consumer.h5";
    std::vector<std::int32_t> data(300 * 70);
    std::iota(data.begin(), data.end(), -1000);
    for (const auto layout : {h5tile::Layout::Virtual, h5tile::Layout::Contiguous, h5tile::Layout::Chunked}) {
      h5tile::to_file(h5tile::view(data.data(), {300, 70}), path, "/group/x", {.layout = layout, .ranks = 3}).wait();
      const h5tile::Array back = h5tile::from_file(path, "/group/x");
      const auto values = back.as<std::int32_t>();
      if (back.shape() != h5tile::Shape{300, 70} ||
          !std::equal(values.begin(), values.end(), data.begin(), data.end())) {
        std::fprintf(stderr, "consumer: the data read from '%s' differ from those written (layout %d)\n", path.c_str(),
                     static_cast<int>(layout));
        return 1;
      }
    }
    std::printf("consumer: to_file/from_file round trip of int32 [300, 70] equal (virtual, contiguous, chunked)\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: error: %s\n", e.what());
    return 1;
  }
}
