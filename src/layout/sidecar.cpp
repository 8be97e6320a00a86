#include "layout/sidecar.hpp"

#include <chrono>
#include <random>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/posix_file.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

std::string new_generation() {
  std::random_device device;
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::uint64_t random = (static_cast<std::uint64_t>(device()) << 32) ^ device() ^ (now * 0x9E3779B97F4A7C15ULL);
  return fmt::format("{:016x}", random);
}

fs::path sidecar_dir(const fs::path& target) { return target.parent_path() / (target.filename().string() + ".tiles"); }

fs::path dataset_dir(const std::string& dataset) {
  // '%' starts a printf-style pattern in virtual dataset source names: keep it out.
  std::string name = dataset.substr(1);
  for (auto& c : name) {
    if (c == '%') {
      c = '_';
    }
  }
  return fs::path(name);
}

fs::path tile_relative(const fs::path& target, const std::string& dataset, const std::string& generation,
                       std::uint64_t index) {
  return fs::path(target.filename().string() + ".tiles") / dataset_dir(dataset) / generation /
         fmt::format("tile-{:05}.h5", index);
}

fs::path temp_main(const fs::path& target, const std::string& generation) {
  return target.parent_path() / fmt::format(".{}.{}.tmp", target.filename().string(), generation);
}

void publish_file(const fs::path& temp, const fs::path& target, bool sync) {
  if (sync) {
    const PosixFile file(temp, O_RDONLY);
    if (::fsync(file.fd()) != 0) {
      const int err = errno;
      throw IoError(fmt::format("cannot flush '{}': {}", temp.string(), std::strerror(err)), err);
    }
  }
  fs::rename(temp, target);
  if (sync) {
    sync_directory(target.parent_path());
  }
}

namespace {

// Removes everything under `dir` except `keep` and the folders leading to it.
void prune(const fs::path& dir, const fs::path& keep) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto& p = entry.path();
    if (p == keep) {
      continue;
    }
    const auto rel = keep.lexically_relative(p);
    if (!keep.empty() && !rel.empty() && *rel.begin() != "..") {
      prune(p, keep);  // an ancestor of what we keep
    } else {
      fs::remove_all(p, ec);
    }
  }
}

void remove_empty_dirs(const fs::path& dir, const fs::path& stop) {
  std::error_code ec;
  for (auto d = dir; d != stop.parent_path() && fs::is_directory(d, ec) && fs::is_empty(d, ec); d = d.parent_path()) {
    fs::remove(d, ec);
  }
}

}  // namespace

void remove_stale(const fs::path& target, const std::string& dataset, const std::string& keep_generation,
                  bool whole_file) noexcept {
  try {
    const auto sidecar = sidecar_dir(target);
    const auto ds_dir = sidecar / dataset_dir(dataset);
    const auto keep = keep_generation.empty() ? fs::path() : ds_dir / keep_generation;
    std::error_code ec;
    if (!fs::is_directory(sidecar, ec)) {
      return;
    }
    if (whole_file) {
      prune(sidecar, keep);
    } else if (fs::is_directory(ds_dir, ec)) {
      prune(ds_dir, keep);
    }
    remove_empty_folders(target, dataset);
  } catch (...) {
    // Best effort: see the header.
  }
}

void remove_empty_folders(const fs::path& target, const std::string& dataset) noexcept {
  try {
    const auto sidecar = sidecar_dir(target);
    remove_empty_dirs(sidecar / dataset_dir(dataset), sidecar);
    remove_empty_dirs(sidecar, sidecar);
  } catch (...) {
    // Best effort.
  }
}

}  // namespace h5tile::detail
