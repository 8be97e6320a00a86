// The floor under any reader that learns a virtual dataset's mapping through the HDF5 library:
// the bare calls (open the file and dataset, get its creation property list, ask for every
// mapping's selections and names, close), timed apart, next to h5tile's own open of the same
// dataset (describe, and a read of one element, which also checks every source). Medians of 9.
//   usage: h5tile_vds_mapping_floor FILE [DATASET]   (e.g. the 4096-tile file of
//          h5tile_vds_scaling)
#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <h5tile/h5tile.hpp>

namespace {
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [DATASET]\n", argv[0]);
    return 2;
  }
  const std::string file = argv[1];
  const std::string dataset = argc > 2 ? argv[2] : "/data";
  constexpr int kRuns = 9;
  std::vector<double> open_file, open_dataset, plist, mappings, close, total, describe, one_element;
  std::size_t count = 0;
  std::vector<char> name(4096);
  for (int run = 0; run < kRuns; ++run) {
    const auto t0 = Clock::now();
    auto t = Clock::now();
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    open_file.push_back(since(t));
    t = Clock::now();
    const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
    open_dataset.push_back(since(t));
    t = Clock::now();
    const hid_t dcpl = H5Dget_create_plist(d);
    plist.push_back(since(t));
    if (f < 0 || d < 0 || dcpl < 0 || H5Pget_layout(dcpl) != H5D_VIRTUAL) {
      std::fprintf(stderr, "%s:%s is not a readable virtual dataset\n", file.c_str(), dataset.c_str());
      return 1;
    }
    t = Clock::now();
    H5Pget_virtual_count(dcpl, &count);
    for (std::size_t i = 0; i < count; ++i) {
      const hid_t vspace = H5Pget_virtual_vspace(dcpl, i);
      const hid_t sspace = H5Pget_virtual_srcspace(dcpl, i);
      hsize_t start[H5S_MAX_RANK];
      hsize_t end[H5S_MAX_RANK];
      (void)H5Sget_select_bounds(vspace, start, end);
      (void)H5Pget_virtual_filename(dcpl, i, name.data(), name.size());
      (void)H5Pget_virtual_dsetname(dcpl, i, name.data(), name.size());
      H5Sclose(sspace);
      H5Sclose(vspace);
    }
    mappings.push_back(since(t));
    t = Clock::now();
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Fclose(f);
    close.push_back(since(t));
    total.push_back(since(t0));
    t = Clock::now();
    const auto info = h5tile::describe(file, dataset);
    describe.push_back(since(t));
    t = Clock::now();
    const auto rank = info.shape.size();
    (void)h5tile::read_box(file, dataset, h5tile::Box{h5tile::Shape(rank, 0), h5tile::Shape(rank, 1)});
    one_element.push_back(since(t));
  }
  std::printf("%zu mappings; medians of %d runs (s)\n", count, kRuns);
  std::printf(
      "HDF5 calls: H5Fopen %.4f, H5Dopen %.4f, H5Dget_create_plist %.4f, mappings %.4f, close %.4f; "
      "total %.4f\n",
      median(open_file), median(open_dataset), median(plist), median(mappings), median(close), median(total));
  std::printf(
      "h5tile: describe %.4f (%.2fx the HDF5 calls); open with every source checked + read of one "
      "element %.4f (%.2fx)\n",
      median(describe), median(describe) / median(total), median(one_element), median(one_element) / median(total));
  return 0;
}
