#include "hdf5/file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace fs = std::filesystem;

std::string normalize_dataset_name(const std::string& name) {
  std::string out;
  std::size_t pos = (!name.empty() && name[0] == '/') ? 1 : 0;
  if (pos == name.size()) {
    throw InvalidArgument(fmt::format("dataset name '{}' is empty: give a path such as '/data'", name));
  }
  while (pos <= name.size()) {
    const auto slash = std::min(name.find('/', pos), name.size());
    const auto part = name.substr(pos, slash - pos);
    if (part.empty() || part == "." || part == "..") {
      throw InvalidArgument(fmt::format(
          "dataset name '{}' has an empty, '.' or '..' component: give a path such as '/group/data'", name));
    }
    out += "/" + part;
    pos = slash + 1;
  }
  return out;
}

std::string where(const fs::path& path, const std::string& dataset) {
  return fmt::format("dataset '{}' in '{}'", dataset, path.string());
}

FileHandle open_file(const fs::path& path, bool writable) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) {
    throw FileNotFound(fmt::format("file '{}' does not exist", path.string()));
  }
  if (fs::is_directory(status)) {
    throw NotHdf5File(fmt::format("'{}' is a directory, not an HDF5 file", path.string()));
  }
  if (::access(path.c_str(), writable ? (R_OK | W_OK) : R_OK) != 0) {
    const int err = errno;
    throw IoError(fmt::format("cannot open '{}': {}", path.string(), std::strerror(err)), err);
  }
  const Hdf5Lock lock;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw NotHdf5File(fmt::format("'{}' is not an HDF5 file (no HDF5 signature found)", path.string()));
  }
  const hid_t id = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {
    throw NotHdf5File(fmt::format("cannot open HDF5 file '{}': {}", path.string(), take_hdf5_error()));
  }
  return FileHandle(id);
}

std::optional<OpenedFile> file_holding(hid_t object) {
  const Hdf5Lock lock;
  const FileHandle file(check(H5Iget_file_id(object), "H5Iget_file_id"));
  const PlistHandle fapl(check(H5Fget_access_plist(file.get()), "H5Fget_access_plist"));
  if (H5Pget_driver(fapl.get()) != H5FD_SEC2) {
    return std::nullopt;  // the handle is not an int descriptor
  }
  void* handle = nullptr;
  check(H5Fget_vfd_handle(file.get(), fapl.get(), &handle), "H5Fget_vfd_handle");
  const ssize_t length = H5Fget_name(file.get(), nullptr, 0);
  check(static_cast<hid_t>(length), "H5Fget_name");
  std::string name(static_cast<std::size_t>(length) + 1, '\0');
  check(static_cast<hid_t>(H5Fget_name(file.get(), name.data(), name.size())), "H5Fget_name");
  name.resize(static_cast<std::size_t>(length));
  const int fd = ::fcntl(*static_cast<const int*>(handle), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    throw IoError(fmt::format("cannot duplicate HDF5's descriptor of '{}': {}", name, std::strerror(err)), err);
  }
  return OpenedFile{fd, std::move(name)};
}

std::vector<std::string> datasets_in(hid_t group) {
  const Hdf5Lock lock;
  std::vector<std::string> names;
  auto collect = [](hid_t g, const char* name, const H5L_info_t*, void* out) -> herr_t {
    const hid_t obj = H5Oopen(g, name, H5P_DEFAULT);
    if (obj >= 0) {
      if (H5Iget_type(obj) == H5I_DATASET) {
        static_cast<std::vector<std::string>*>(out)->emplace_back(name);
      }
      H5Oclose(obj);
    } else {
      H5Eclear2(H5E_DEFAULT);  // a dangling link: not a dataset
    }
    return 0;
  };
  hsize_t idx = 0;
  if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &idx, collect, &names) < 0) {
    H5Eclear2(H5E_DEFAULT);
  }
  return names;
}

namespace {

// HDF5 rejects a message of a newer format version than it knows with "bad version number for
// <message>" (1.10: the version 3 hyperslab selections of HDF5 >= 1.12 in a virtual dataset);
// the name exists, so "not found" would mislead.
bool written_by_newer_hdf5(const std::string& reason) { return reason.find("version number") != std::string::npos; }

std::string hdf5_runtime_version() {
  unsigned major = 0;
  unsigned minor = 0;
  unsigned release = 0;
  H5get_libversion(&major, &minor, &release);
  return fmt::format("{}.{}.{}", major, minor, release);
}

std::string list_for_message(const std::vector<std::string>& names) {
  constexpr std::size_t kMax = 20;
  if (names.empty()) {
    return "no datasets";
  }
  std::vector<std::string> shown(names.begin(),
                                 names.begin() + static_cast<std::ptrdiff_t>(std::min(kMax, names.size())));
  auto text = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > kMax) {
    text += fmt::format(" and {} more", names.size() - kMax);
  }
  return text;
}

}  // namespace

DatasetHandle open_dataset(hid_t file, const std::string& name, const fs::path& path) {
  const Hdf5Lock lock;
  // Walk the path so that the message names the first missing part.
  std::string prefix;
  std::size_t pos = 1;
  while (pos <= name.size()) {
    const auto slash = std::min(name.find('/', pos), name.size());
    const auto parent = prefix.empty() ? std::string("/") : prefix;
    prefix = name.substr(0, slash);
    const htri_t exists = H5Lexists(file, prefix.c_str(), H5P_DEFAULT);
    if (exists <= 0) {
      H5Eclear2(H5E_DEFAULT);
      std::string datasets = "it is not a group";
      const hid_t g = H5Oopen(file, parent.c_str(), H5P_DEFAULT);
      if (g >= 0) {
        if (H5Iget_type(g) == H5I_GROUP) {
          datasets = fmt::format("datasets in '{}': {}", parent, list_for_message(datasets_in(g)));
        }
        H5Oclose(g);
      }
      H5Eclear2(H5E_DEFAULT);
      throw DatasetNotFound(fmt::format("{} does not exist: '{}' has no member '{}' ({})", where(path, name), parent,
                                        name.substr(pos, slash - pos), datasets));
    }
    pos = slash + 1;
  }
  const hid_t obj = H5Oopen(file, name.c_str(), H5P_DEFAULT);
  if (obj < 0) {
    const auto reason = take_hdf5_error();
    if (written_by_newer_hdf5(reason)) {
      throw Hdf5Error(
          fmt::format("cannot open {}: it was written in a format newer than HDF5 {} reads ({}); it "
                      "needs a newer HDF5: use h5tile built against a current HDF5 (1.14 or later)",
                      where(path, name), hdf5_runtime_version(), reason));
    }
    throw DatasetNotFound(fmt::format("cannot open {}: {}", where(path, name), reason));
  }
  const auto type = H5Iget_type(obj);
  if (type == H5I_DATASET) {
    return DatasetHandle(obj);
  }
  std::string message;
  if (type == H5I_GROUP) {
    message = fmt::format("'{}' in '{}' is a group, not a dataset; it holds {}", name, path.string(),
                          list_for_message(datasets_in(obj)));
  } else {
    message = fmt::format("'{}' in '{}' is a named datatype, not a dataset", name, path.string());
  }
  H5Oclose(obj);
  throw NotADataset(message);
}

std::vector<hsize_t> hsizes(const Shape& shape) { return {shape.begin(), shape.end()}; }

Shape shape_of(hid_t space) {
  const Hdf5Lock lock;
  const int rank = check(H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) {
    check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "H5Sget_simple_extent_dims");
  }
  return {dims.begin(), dims.end()};
}

SpaceHandle make_space(const Shape& shape) {
  const Hdf5Lock lock;
  if (shape.empty()) {
    return SpaceHandle(check(H5Screate(H5S_SCALAR), "H5Screate(scalar)"));
  }
  const auto dims = hsizes(shape);
  return SpaceHandle(check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple"));
}

void select_box(hid_t space, const Box& box) {
  if (box.rank() == 0) {
    return;
  }
  const Hdf5Lock lock;
  if (box.count() == 0) {
    check(H5Sselect_none(space), "H5Sselect_none");
    return;
  }
  const auto start = hsizes(box.offset);
  const auto count = hsizes(box.extent);
  check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
        "H5Sselect_hyperslab");
}

}  // namespace h5tile::detail
