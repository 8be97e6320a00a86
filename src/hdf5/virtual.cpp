#include "hdf5/virtual.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/file.hpp"

namespace h5tile::detail {
namespace {

template <class Getter>
std::string get_string(Getter&& getter) {
  const auto size = getter(nullptr, 0);
  if (size < 0) {
    check(static_cast<hid_t>(size), "H5Pget_virtual name");
  }
  std::string text(static_cast<std::size_t>(size) + 1, '\0');
  getter(text.data(), text.size());
  text.resize(static_cast<std::size_t>(size));
  return text;
}

}  // namespace

bool is_virtual(hid_t dcpl) {
  const Hdf5Lock lock;
  return H5Pget_layout(dcpl) == H5D_VIRTUAL;
}

void add_virtual_mapping(hid_t dcpl, hid_t vspace, const std::string& file, const std::string& dataset, hid_t src_space,
                         std::string_view what) {
  const Hdf5Lock lock;
  check(H5Pset_virtual(dcpl, vspace, file.c_str(), dataset.c_str(), src_space), what);
}

SpaceHandle decode_space(const std::vector<std::byte>& encoded, std::string_view what) {
  const Hdf5Lock lock;
  if (encoded.empty()) throw InvalidArgument(fmt::format("{}: an empty encoded dataspace", what));
  return SpaceHandle(check(H5Sdecode(encoded.data()), what));
}

std::size_t virtual_count(hid_t dcpl) {
  const Hdf5Lock lock;
  std::size_t count = 0;
  check(H5Pget_virtual_count(dcpl, &count), "H5Pget_virtual_count");
  return count;
}

std::string virtual_file_name(hid_t dcpl, std::size_t i) {
  const Hdf5Lock lock;
  return get_string([&](char* buf, std::size_t n) { return H5Pget_virtual_filename(dcpl, i, buf, n); });
}

std::string virtual_dataset_name(hid_t dcpl, std::size_t i) {
  const Hdf5Lock lock;
  return get_string([&](char* buf, std::size_t n) { return H5Pget_virtual_dsetname(dcpl, i, buf, n); });
}

SpaceHandle virtual_space(hid_t dcpl, std::size_t i) {
  const Hdf5Lock lock;
  return SpaceHandle(check(H5Pget_virtual_vspace(dcpl, i), "H5Pget_virtual_vspace"));
}

SpaceHandle virtual_source_space(hid_t dcpl, std::size_t i) {
  const Hdf5Lock lock;
  return SpaceHandle(check(H5Pget_virtual_srcspace(dcpl, i), "H5Pget_virtual_srcspace"));
}

bool selects_all(hid_t space) {
  const Hdf5Lock lock;
  return H5Sget_select_type(space) == H5S_SEL_ALL;
}

std::optional<Box> selection_box(hid_t space) {
  const Hdf5Lock lock;
  switch (H5Sget_select_type(space)) {
    case H5S_SEL_ALL: return Box::whole(shape_of(space));
    case H5S_SEL_NONE: {
      auto box = Box::whole(shape_of(space));
      std::fill(box.extent.begin(), box.extent.end(), 0);
      return box;
    }
    case H5S_SEL_HYPERSLABS: break;
    default: return std::nullopt;
  }
  const hssize_t points = H5Sget_select_npoints(space);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (points <= 0 || rank <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;  // unlimited selections report no count
  }
  std::vector<hsize_t> start(static_cast<std::size_t>(rank));
  std::vector<hsize_t> end(static_cast<std::size_t>(rank));
  if (H5Sget_select_bounds(space, start.data(), end.data()) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  Box box;
  for (int a = 0; a < rank; ++a) {
    box.offset.push_back(start[static_cast<std::size_t>(a)]);
    box.extent.push_back(end[static_cast<std::size_t>(a)] - start[static_cast<std::size_t>(a)] + 1);
  }
  if (box.count() != static_cast<std::uint64_t>(points)) {
    return std::nullopt;  // strided or irregular
  }
  return box;
}

}  // namespace h5tile::detail
