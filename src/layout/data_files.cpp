#include "layout/data_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "core/path_status.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "io/http/url.hpp"
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

void check_regular_file(const fs::path& file, const std::string& what) {
  std::error_code ec;
  const auto status = fs::status(file, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    throw VirtualSourceError(
        fmt::format("{} '{}', which is {}, not a regular file: h5tile reads data only from "
                    "regular files (HDF5 would wait for ever on a FIFO, or read a device as a "
                    "file)",
                    what, file.string(), kind_of(status)));
  }
}

void check_data_files(const fs::path& path, const fs::path& file, const std::string& name, hid_t dataset, hid_t dcpl,
                      const std::string& extfile_prefix, bool allow_external) {
  std::optional<FolderCheck> folder;
  const auto inside = [&](const fs::path& p) {
    if (!folder) folder.emplace(path);
    return folder->inside(p);
  };
  // Opened by its own name (the common case, one string compare): no link was followed. HDF5
  // names a remote file as its driver does (object_name: the URL redacted, an s3:// key whole).
  const fs::path opened = file_name_of(dataset);
  const fs::path named = object_name(file.native());
  if (!allow_external && opened != named && !same_file(opened, file) && !inside(opened)) {
    throw VirtualSourceError(
        fmt::format("{} is reached through an external link to '{}', outside the folder of '{}'; reading it needs "
                    "allow_external_sources (h5tile refuses it by default)",
                    where(file, name), opened.string(), display_name(path.native())));
  }
  for (const auto& stored : external_storage_names(dcpl)) {
    const auto data = external_storage_path(stored, opened, extfile_prefix);
    check_regular_file(data, fmt::format("{} keeps its data in HDF5 external storage in", where(file, name)));
    if (!allow_external && !inside(data)) {
      throw VirtualSourceError(
          fmt::format("{} keeps its data in HDF5 external storage '{}' (resolved to '{}'), outside the folder of "
                      "'{}'; reading it needs allow_external_sources (h5tile refuses it by default)",
                      where(file, name), stored, data.string(), display_name(path.native())));
    }
  }
}

std::optional<fs::path> external_link_target(const fs::path& parent, const std::string& stored,
                                             const std::string& ext_prefix) {
  std::vector<fs::path> candidates;
  fs::path relative(stored);
  if (relative.is_absolute()) {
    candidates.push_back(relative);
    relative = relative.filename();
  }
  for (std::size_t begin = 0; begin < ext_prefix.size();) {
    const auto colon = std::min(ext_prefix.find(':', begin), ext_prefix.size());
    if (colon > begin) candidates.push_back(fs::path(ext_prefix.substr(begin, colon - begin)) / relative);
    begin = colon + 1;
  }
  std::error_code ec;
  candidates.push_back(fs::absolute(parent, ec).parent_path() / relative);
  candidates.push_back(relative);
  for (auto& candidate : candidates) {
    const auto status = fs::status(candidate, ec);
    if (fs::exists(status) && !fs::is_directory(status)) {
      return candidate;
    }
  }
  return std::nullopt;
}

ExternalLinkCheck external_link_check(const Location& file, bool allow_external, std::string ext_prefix) {
  if (file.remote()) {
    // A name in a remote file is not resolved against the server nor against local folders: the
    // link is refused before HDF5 opens anything for it (only the file itself is requested).
    return [url = file.shown()](const ExternalLink& link) {
      throw VirtualSourceError(
          fmt::format("an external link in '{}' of '{}' (to '{}' in '{}') is not followed: h5tile does not follow "
                      "external links of a remote file",
                      link.group, url, link.object, link.file));
    };
  }
  return [path = file.path(), allow_external, prefix = std::move(ext_prefix)](const ExternalLink& link) {
    const auto target = external_link_target(link.parent_file, link.file, prefix);
    if (!target) {
      return;  // nothing to open: HDF5 fails to follow it, saying so
    }
    const auto what = fmt::format("an external link in '{}' of '{}' to '{}' in '{}' leads to", link.group,
                                  link.parent_file, link.object, link.file);
    check_regular_file(*target, what);
    if (!allow_external && !FolderCheck(path).inside(*target)) {
      std::error_code ec;
      throw VirtualSourceError(fmt::format(
          "{} '{}', outside the folder of '{}'; reading it needs allow_external_sources (h5tile refuses it by "
          "default, before HDF5 opens it)",
          what, fs::weakly_canonical(fs::absolute(*target), ec).string(), display_name(path.native())));
    }
  };
}

}  // namespace h5tile::detail
