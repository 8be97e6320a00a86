// How fast HDF5 lists where the chunks of a dataset are: one H5Dget_chunk_info_by_coord call per
// chunk (what h5tile does before HDF5 1.14) against one H5Dchunk_iter pass over the index
// (HDF5 >= 1.14, what h5tile does there). Plain HDF5 calls, no h5tile.
//
//   h5tile_chunk_lookup [FILE] [CHUNKS_PER_AXIS]   (default: chunk_lookup.h5, 128: 16384 chunks;
//   256 takes minutes with 1.10: the lookups one by one take time in chunks^2)
//
// Writes a 2-d int32 dataset of CHUNKS_PER_AXIS^2 chunks of 16 x 16 twice, with the chunk indexes
// the two format bounds give: 1.8 (version 1 B-tree: what h5tile writes) and latest (version 2
// B-tree for 2 unlimited axes, or an extensible array / fixed array for fixed shapes).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <hdf5.h>

namespace {

constexpr hsize_t kChunk = 16;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void write_file(const std::string& path, hsize_t per_axis, H5F_libver_t low) {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, low, H5F_LIBVER_LATEST);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  const hsize_t dims[2] = {per_axis * kChunk, per_axis * kChunk};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk[2] = {kChunk, kChunk};
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);  // every chunk allocated, as h5tile's chunked writer does
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  const hid_t dset = H5Dcreate2(file, "x", H5T_NATIVE_INT32, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Dclose(dset);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  H5Pclose(fapl);
}

// H5Dchunk_iter: 1.14, and its backports to 1.12.3 and 1.10.10 (as src/hdf5/chunk_directory.hpp).
#define CHUNK_ITER                                                                                   \
  (H5_VERSION_GE(1, 14, 0) || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 12 && H5_VERS_RELEASE >= 3) || \
   (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 10))

#if CHUNK_ITER
int count_chunk(const hsize_t* /*offset*/, unsigned /*filter_mask*/, haddr_t addr, hsize_t /*size*/, void* data) {
  auto* sum = static_cast<unsigned long long*>(data);
  *sum += addr;
  return H5_ITER_CONT;
}
#endif

void measure(const std::string& path, hsize_t per_axis, const char* label) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dset = H5Dopen2(file, "x", H5P_DEFAULT);
  unsigned long long by_coord_sum = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (hsize_t i = 0; i < per_axis; ++i) {
    for (hsize_t j = 0; j < per_axis; ++j) {
      const hsize_t offset[2] = {i * kChunk, j * kChunk};
      unsigned mask = 0;
      haddr_t addr = HADDR_UNDEF;
      hsize_t size = 0;
      H5Dget_chunk_info_by_coord(dset, offset, &mask, &addr, &size);
      by_coord_sum += addr;
    }
  }
  const double by_coord = seconds_since(t0);
  const double n = static_cast<double>(per_axis * per_axis);
  std::printf("%-22s %8.0f chunks  by_coord %8.3f s (%6.2f us/chunk)", label, n, by_coord, by_coord / n * 1e6);
#if CHUNK_ITER
  unsigned long long iter_sum = 0;
  t0 = std::chrono::steady_clock::now();
  H5Dchunk_iter(dset, H5P_DEFAULT, count_chunk, &iter_sum);
  const double iter = seconds_since(t0);
  std::printf("  chunk_iter %8.3f s (%6.2f us/chunk, %5.0fx)%s\n", iter, iter / n * 1e6, by_coord / iter,
              iter_sum == by_coord_sum ? "" : "  ADDRESSES DIFFER");
#else
  std::printf("  (H5Dchunk_iter needs HDF5 1.10.10, 1.12.3 or 1.14)\n");
#endif
  H5Dclose(dset);
  H5Fclose(file);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "chunk_lookup.h5";
  const hsize_t per_axis = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 128;
  unsigned major = 0;
  unsigned minor = 0;
  unsigned release = 0;
  H5get_libversion(&major, &minor, &release);
  std::printf("HDF5 %u.%u.%u\n", major, minor, release);
  write_file(path, per_axis, H5F_LIBVER_V18);
  measure(path, per_axis, "format 1.8 (B-tree v1)");
  write_file(path, per_axis, H5F_LIBVER_LATEST);
  measure(path, per_axis, "latest (fixed array)");
  std::remove(path.c_str());
  return 0;
}
