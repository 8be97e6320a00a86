// libFuzzer target: h5tile's opening, layout and mapping code fed with mutated HDF5 files.
//
// Each input is written as `main.h5` into a scratch folder that also holds the tile files the
// seed corpus maps (tests/fuzz/sources, copied there once), then h5tile lists, describes,
// verifies and reads every dataset in it. The property: whatever the bytes, h5tile either
// succeeds or throws an h5tile::Error; any other exception, a crash, a sanitizer report, a
// hang, a huge allocation or an HDF5 object left open is a finding. Run through scripts/fuzz.sh.

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <hdf5.h>

#include <h5tile/h5tile.hpp>

namespace fs = std::filesystem;

namespace {

// Datasets larger than this are described and verified but not read whole (a mutated shape
// can claim terabytes; the read would then fail cleanly, but only after asking for the memory).
constexpr std::uint64_t kMaxReadBytes = std::uint64_t{1} << 20;

fs::path scratch;

void exercise(const fs::path& path) {
  std::vector<std::string> names;
  try {
    names = h5tile::list_datasets(path);
  } catch (const h5tile::Error&) {
    return;
  }
  if (names.size() > 16) {
    names.resize(16);
  }
  for (const auto& name : names) {
    try {
      const auto info = h5tile::describe(path, name);
      std::uint64_t bytes = info.dtype.size();
      for (const auto extent : info.shape) {
        bytes = extent != 0 && bytes > kMaxReadBytes / extent ? kMaxReadBytes + 1 : bytes * extent;
      }
      (void)h5tile::verify(path, name, /*read_all=*/bytes <= kMaxReadBytes);
      if (bytes > kMaxReadBytes) {
        continue;
      }
      (void)h5tile::from_file(path, name, {.threads = 2, .verify_checksums = true});
      (void)h5tile::from_file(path, name, {.threads = 1, .allow_external_sources = true});
      if (!info.shape.empty()) {
        h5tile::Box box{h5tile::Shape(info.shape.size(), 0), info.shape};
        for (auto& e : box.extent) e = (e + 1) / 2;
        (void)h5tile::read_box(path, name, box);
      }
    } catch (const h5tile::Error&) {
      // A clear error for a bad file: what we want.
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* sources = std::getenv("H5TILE_FUZZ_SOURCES");
  scratch = fs::temp_directory_path() / ("h5tile-fuzz-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  // Removed when the fuzzer exits (scripts/fuzz.sh also points TMPDIR at a folder of the run's
  // own, removed at its end, for the runs that end in a crash or a signal).
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(scratch, ec);
  });
  if (sources != nullptr) {
    fs::copy(sources, scratch, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
  ::setenv("H5TILE_THREADS", "2", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = scratch / "main.h5";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  exercise(path);
  // Every HDF5 object h5tile opened must be closed again, whatever went wrong.
  const auto open_objects = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  if (open_objects != 0) {
    std::fprintf(stderr, "h5tile left %lld HDF5 object(s) open\n", static_cast<long long>(open_objects));
    std::abort();
  }
  return 0;
}
