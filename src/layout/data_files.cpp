#include "layout/data_files.hpp"

#include <sys/stat.h>

#include <optional>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;
namespace {

// Where HDF5 1.10 looks for an external storage file named `stored` of a dataset in `file`,
// given HDF5_EXTFILE_PREFIX's value.
fs::path external_storage_path(const std::string& stored, const fs::path& file, std::string prefix) {
  const fs::path name(stored);
  if (name.is_absolute()) {
    return name;
  }
  if (prefix.empty() || prefix == ".") {
    return fs::absolute(name);  // the working folder
  }
  constexpr std::string_view kOrigin = "${ORIGIN}";
  if (const auto at = prefix.find(kOrigin); at != std::string::npos) {
    prefix.replace(at, kOrigin.size(), fs::absolute(file).parent_path().string());
  }
  return fs::absolute(fs::path(prefix) / name);
}

bool same_file(const fs::path& a, const fs::path& b) {
  struct stat sa {};
  struct stat sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

void check_data_files_inside(const fs::path& path, const fs::path& file, const std::string& name, hid_t dataset,
                             hid_t dcpl, const std::string& extfile_prefix) {
  std::optional<FolderCheck> folder;
  const auto inside = [&](const fs::path& p) {
    if (!folder) folder.emplace(path);
    return folder->inside(p);
  };
  // Opened by its own name (the common case, one string compare): no link was followed.
  const fs::path opened = file_name_of(dataset);
  if (opened != file && !same_file(opened, file) && !inside(opened)) {
    throw VirtualSourceError(
        fmt::format("{} is reached through an external link to '{}', outside the folder of '{}'; reading it needs "
                    "allow_external_sources (h5tile refuses it by default)",
                    where(file, name), opened.string(), path.string()));
  }
  for (const auto& stored : external_storage_names(dcpl)) {
    const auto data = external_storage_path(stored, opened, extfile_prefix);
    if (!inside(data)) {
      throw VirtualSourceError(
          fmt::format("{} keeps its data in HDF5 external storage '{}' (resolved to '{}'), outside the folder of "
                      "'{}'; reading it needs allow_external_sources (h5tile refuses it by default)",
                      where(file, name), stored, data.string(), path.string()));
    }
  }
}

}  // namespace h5tile::detail
