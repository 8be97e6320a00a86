#include "layout/sidecar.hpp"

#include <chrono>
#include <random>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/posix_file.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

namespace {

constexpr const char* kInProgress = ".in-progress";

std::uint32_t host_hash() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::uint32_t h = 2166136261U;  // FNV-1a
  for (const char* c = name; *c != '\0'; ++c) {
    h = (h ^ static_cast<unsigned char>(*c)) * 16777619U;
  }
  return h;
}

}  // namespace

std::string new_generation() {
  std::random_device device;
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::uint64_t random = (static_cast<std::uint64_t>(device()) << 32) ^ device() ^ (now * 0x9E3779B97F4A7C15ULL);
  return fmt::format("{:016x}-{}-{:08x}", random, ::getpid(), host_hash());
}

bool writer_alive(const std::string& generation) {
  unsigned long long random = 0;
  int pid = 0;
  unsigned host = 0;
  if (std::sscanf(generation.c_str(), "%16llx-%d-%8x", &random, &pid, &host) != 3 || host != host_hash() || pid <= 0) {
    return true;  // another host, or not ours: assume alive
  }
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

void mark_in_progress(const fs::path& target, const std::string& dataset, const std::string& generation) {
  const auto dir = sidecar_dir(target) / dataset_dir(dataset) / generation;
  fs::create_directories(dir);
  const PosixFile marker(dir / kInProgress, O_WRONLY | O_CREAT | O_TRUNC, 0644);
}

void clear_in_progress(const fs::path& target, const std::string& dataset, const std::string& generation) noexcept {
  std::error_code ec;
  fs::remove(sidecar_dir(target) / dataset_dir(dataset) / generation / kInProgress, ec);
}

CommitLock::CommitLock(const fs::path& target) {
  const auto path = target.parent_path() / fmt::format(".{}.lock", target.filename().string());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    throw IoError(fmt::format("cannot create the lock file '{}': {}", path.string(), std::strerror(err)), err);
  }
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

CommitLock::~CommitLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

void remove_dead_temps(const fs::path& target) noexcept {
  try {
    const auto prefix = fmt::format(".{}.", target.filename().string());
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(target.parent_path().empty() ? "." : target.parent_path(), ec)) {
      const auto name = entry.path().filename().string();
      if (name.size() > prefix.size() + 4 && name.compare(0, prefix.size(), prefix) == 0 &&
          name.compare(name.size() - 4, 4, ".tmp") == 0 &&
          !writer_alive(name.substr(prefix.size(), name.size() - prefix.size() - 4))) {
        fs::remove(entry.path(), ec);
      }
    }
  } catch (...) {
    // Best effort: a leftover temporary file is never read.
  }
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
    std::error_code exists_ec;
    if (fs::exists(p / kInProgress, exists_ec) && writer_alive(p.filename().string())) {
      continue;  // a live writer's generation
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
