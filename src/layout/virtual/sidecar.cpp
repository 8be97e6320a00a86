#include "layout/virtual/sidecar.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "core/path_status.hpp"

#include "io/posix/posix_file.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

namespace {

constexpr const char* kInProgress = ".in-progress";
// In a generation that a commit replaced, kept for readers that opened the file before the commit.
constexpr const char* kSuperseded = ".superseded";
// In a generation, the exact name of the dataset it was written for (absent from generations in
// a legacy folder, legacy_dataset_dir, which '/a%b' and '/a_b' share).
constexpr const char* kOwner = ".dataset";
// The longest dataset name read back from kOwner (HDF5 names may be longer: then unknown).
constexpr std::size_t kMaxOwnerBytes = 65536;

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

namespace {

[[noreturn]] void refuse_link(const fs::path& path) {
  throw IoError(fmt::format("refusing to write tiles through '{}': it is a symbolic link or not a folder "
                            "(h5tile creates its tile folders itself; remove it, or write elsewhere)",
                            path.string()),
                ELOOP);
}

// mkdir(2) of one folder (mode 0777 less the umask); an existing one must be a real folder.
// Returns false when it existed.
bool make_folder(const fs::path& path) {
  if (::mkdir(path.c_str(), 0777) == 0) {
    return true;
  }
  const int err = errno;
  struct stat st {};
  if (err == EEXIST && ::lstat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      refuse_link(path);
    }
    return false;
  }
  throw IoError(fmt::format("cannot create the folder '{}': {}", path.string(), std::strerror(err)), err);
}

}  // namespace

void make_generation_folder(const fs::path& target, const std::string& dataset, const std::string& generation) {
  // Folder by folder from the target's own folder down, never through a symbolic link: a link
  // planted at `out.h5.tiles` (or below) could otherwise send the tiles, and the clean-up of
  // stale generations, anywhere the writer may write.
  const auto sidecar = sidecar_dir(target);
  const auto folder = (sidecar / dataset_dir(dataset) / generation).lexically_normal();
  const auto inside = folder.lexically_relative(sidecar.lexically_normal());
  if (inside.empty() || *inside.begin() == ".." || *inside.begin() == "." || generation.empty() ||
      fs::path(generation).has_parent_path() || generation == "." || generation == "..") {
    throw InvalidArgument(fmt::format("the tile folder '{}' of dataset '{}' would not lie inside '{}'", folder.string(),
                                      dataset, sidecar.string()));
  }
  auto dir = target.parent_path();
  for (const auto& part : fs::path(target.filename().string() + ".tiles") / dataset_dir(dataset)) {
    dir /= part;
    (void)make_folder(dir);
  }
  dir /= generation;
  if (!make_folder(dir)) {
    throw FileExists(fmt::format("the tile folder '{}' exists already", dir.string()));
  }
}

void mark_in_progress(const fs::path& target, const std::string& dataset, const std::string& generation) {
  make_generation_folder(target, dataset, generation);
  const auto dir = sidecar_dir(target) / dataset_dir(dataset) / generation;
  const PosixFile marker(dir / kInProgress, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW);
  const PosixFile owner(dir / kOwner, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW);
  owner.write_at(dataset.data(), dataset.size(), 0);
}

void clear_in_progress(const fs::path& target, const std::string& dataset, const std::string& generation) noexcept {
  try {
    std::error_code ec;
    fs::remove(sidecar_dir(target) / dataset_dir(dataset) / generation / kInProgress, ec);
  } catch (...) {
    // A name that has no tile folder (dataset_dir refuses it) has no mark to clear.
  }
}

CommitLock::CommitLock(const fs::path& target) {
  // flock(2) on the target's folder itself: nothing is created, so nothing is left beside the
  // file. Where a file system cannot lock a folder (NFS emulates flock with byte-range locks,
  // which need a file open for writing), a lock file beside the target serves instead.
  const auto folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ >= 0) {
    int rc = 0;
    while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc == 0) {
      return;
    }
    ::close(fd_);
  }
  const auto path = target.parent_path() / fmt::format(".{}.lock", target.filename().string());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
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
          !writer_alive(name.substr(prefix.size(), name.size() - prefix.size() - 4)) && entry.is_regular_file(ec) &&
          !entry.is_symlink(ec)) {
        fs::remove(entry.path(), ec);
      }
    }
  } catch (...) {
    // Best effort: a leftover temporary file is never read.
  }
}

fs::path sidecar_dir(const fs::path& target) { return target.parent_path() / (target.filename().string() + ".tiles"); }

namespace {

// The folders of a dataset's name, one per component, each checked here whatever the callers
// checked before: a component that is empty, '.' or '..' (or holds a NUL, which the file
// system would cut the name at) could lead a write, or a clean-up, out of the sidecar. Built
// from the checked components only, the folder cannot leave it, whatever the name.
fs::path confined_folder(std::string name, const std::string& dataset, bool legacy) {
  if (legacy) {
    std::replace(name.begin(), name.end(), '%', '_');
  }
  fs::path dir;
  std::size_t pos = (!name.empty() && name.front() == '/') ? 1 : 0;
  while (pos <= name.size()) {
    const auto slash = std::min(name.find('/', pos), name.size());
    const auto part = name.substr(pos, slash - pos);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string::npos) {
      throw InvalidArgument(
          fmt::format("dataset name '{}' has an empty, '.' or '..' component (or a NUL): it cannot "
                      "name a tile folder inside the file's '.tiles' folder",
                      dataset));
    }
    dir /= part;
    pos = slash + 1;
  }
  return dir;
}

}  // namespace

fs::path dataset_dir(const std::string& dataset) {
  // The dataset's path itself: one folder per group, so that distinct datasets never share a
  // folder. A '%' in its names is escaped where the mapping stores the path (virtual_map.hpp).
  return confined_folder(dataset, dataset, false);
}

fs::path legacy_dataset_dir(const std::string& dataset) { return confined_folder(dataset, dataset, true); }

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
  check_replaceable_path(target);  // again: a device or FIFO may have taken the name since the write began
  fs::rename(temp, target);
}

namespace {

bool is_generation_name(const std::string& name) {
  unsigned long long random = 0;
  int pid = 0;
  unsigned host = 0;
  int used = 0;
  return name.size() > 26 && std::sscanf(name.c_str(), "%16llx-%d-%8x%n", &random, &pid, &host, &used) == 3 &&
         static_cast<std::size_t>(used) == name.size();
}

bool is_real_folder(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// What the clean-up of a tiles folder may unlink: regular files and symbolic links (the link
// goes, never what it points to). A device, FIFO or socket is never removed, whoever put it there.
bool is_removable_file(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode));
}

// Removes `path` and what it holds as fs::remove_all would, but only regular files, links and the
// folders they leave empty: a folder still holding a special file stays (with it).
void remove_tree(const fs::path& path) {
  std::error_code ec;
  if (!is_real_folder(path)) {
    if (is_removable_file(path)) fs::remove(path, ec);
    return;
  }
  for (const auto& entry : fs::directory_iterator(path, ec)) remove_tree(entry.path());
  ::rmdir(path.c_str());
}

std::string canonical_path(const fs::path& path) {
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(path), ec).string();
}

// Whose generations a clean-up of one dataset's folder may remove: the dataset's own, and
// those of datasets below it (a group that the dataset replaced). A generation that names no
// owner goes only when the committed file maps none of its files: in a legacy folder
// (legacy_dataset_dir) '/a%b' and '/a_b' share one.
class Ownership {
 public:
  Ownership(const fs::path& target, const std::string& dataset, const std::string& vds_prefix)
      : target_(target), dataset_(dataset), vds_prefix_(vds_prefix) {}

  [[nodiscard]] bool removable(const fs::path& generation) {
    if (const auto owner = owner_of(generation)) {
      return *owner == dataset_ ||
             (owner->size() > dataset_.size() && owner->starts_with(dataset_) && (*owner)[dataset_.size()] == '/');
    }
    if (!mapped_) {
      mapped_.emplace();
      try {
        std::set<std::string> parents;
        for (const auto& source : mapped_source_files(target_, vds_prefix_))
          parents.insert(source.parent_path().string());
        for (const auto& parent : parents) mapped_->insert(canonical_path(parent));
      } catch (...) {
        scan_failed_ = true;  // unknown: keep every generation without an owner
      }
    }
    return !scan_failed_ && !mapped_->contains(canonical_path(generation));
  }

 private:
  // The dataset named in the generation's kOwner, or nullopt when it has none (or an empty or
  // unreadable one: a writer killed before it wrote the name).
  static std::optional<std::string> owner_of(const fs::path& generation) {
    const int fd = ::open((generation / kOwner).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return std::nullopt;
    std::string name(kMaxOwnerBytes, '\0');
    const auto got = ::read(fd, name.data(), name.size());
    ::close(fd);
    if (got <= 0 || static_cast<std::size_t>(got) == name.size()) return std::nullopt;
    name.resize(static_cast<std::size_t>(got));
    return name;
  }

  const fs::path& target_;
  const std::string& dataset_;
  const std::string& vds_prefix_;
  std::optional<std::set<std::string>> mapped_;  // folders of the committed file's sources
  bool scan_failed_ = false;
};

// Removes what is stale under `dir` (a dataset's folder, or a folder of dataset folders):
// every generation but `keep`, except a live writer's, another dataset's (with `ownership`,
// for the clean-up of one dataset), and, with `keep_previous`, those that this commit
// supersedes (marked, and removed by the next commit), among them a dead writer's that the
// replaced file maps (in `mapped_by_replaced`). Never follows a link.
void prune(const fs::path& dir, const fs::path& keep, bool keep_previous, Ownership* ownership,
           const std::set<std::string>& mapped_by_replaced) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto& p = entry.path();
    if (p == keep) {
      continue;
    }
    if (!is_real_folder(p)) {
      remove_tree(p);  // a stray file, or a link; never a device, FIFO or socket
      continue;
    }
    const auto name = p.filename().string();
    if (!is_generation_name(name)) {
      prune(p, keep, keep_previous, ownership, mapped_by_replaced);  // a folder of a dataset or of a group
      // Emptied (its dataset is no longer in the file, and nothing of it is kept for readers):
      // it goes too. rmdir(2) only removes an empty folder, so a writer's new generation stays.
      ::rmdir(p.c_str());
      continue;
    }
    if (ownership != nullptr && !ownership->removable(p)) {
      continue;  // another dataset's tiles
    }
    std::error_code exists_ec;
    if (fs::exists(p / kInProgress, exists_ec)) {
      if (writer_alive(name)) {
        continue;  // a live writer's generation
      }
      if (!mapped_by_replaced.contains(name)) {
        remove_tree(p);  // its writer died before its rename: no file maps it
        continue;
      }
      // Its writer died after its rename: the file this commit replaces maps it. It is
      // superseded (or removed) as any replaced generation is.
      fs::remove(p / kInProgress, ec);
    }
    if (keep_previous && !fs::exists(p / kSuperseded, exists_ec)) {
      const PosixFile marker(p / kSuperseded, O_WRONLY | O_CREAT | O_NOFOLLOW);
      continue;
    }
    remove_tree(p);
  }
}

// Whether `relative` (a folder below the sidecar) leads down through real folders only.
bool real_folders_down(const fs::path& sidecar, const fs::path& relative) {
  auto dir = sidecar;
  for (const auto& part : relative) {
    dir /= part;
    if (!is_real_folder(dir)) {
      return false;
    }
  }
  return true;
}

void remove_empty_dirs(const fs::path& dir, const fs::path& stop) {
  std::error_code ec;
  for (auto d = dir; d != stop.parent_path() && fs::is_directory(d, ec) && fs::is_empty(d, ec); d = d.parent_path()) {
    fs::remove(d, ec);
  }
}

}  // namespace

void remove_stale(const fs::path& target, const std::string& dataset, const std::string& keep_generation,
                  bool whole_file, bool keep_previous, const std::string& vds_prefix,
                  const std::set<std::string>& mapped_by_replaced) noexcept {
  try {
    const auto sidecar = sidecar_dir(target);
    const auto ds_dir = sidecar / dataset_dir(dataset);
    const auto keep = keep_generation.empty() ? fs::path() : ds_dir / keep_generation;
    if (!is_real_folder(sidecar)) {
      return;  // none, or a link that h5tile did not make: never clean up through it
    }
    if (whole_file) {
      prune(sidecar, keep, keep_previous, nullptr, mapped_by_replaced);
    } else {
      Ownership ownership(target, dataset, vds_prefix);
      if (real_folders_down(sidecar, dataset_dir(dataset))) {
        prune(ds_dir, keep, keep_previous, &ownership, mapped_by_replaced);
      }
      // The folder that h5tile used for the dataset before its names were exact.
      const auto legacy = legacy_dataset_dir(dataset);
      if (legacy != dataset_dir(dataset) && real_folders_down(sidecar, legacy)) {
        prune(sidecar / legacy, keep, keep_previous, &ownership, mapped_by_replaced);
        remove_empty_dirs(sidecar / legacy, sidecar);
      }
    }
    remove_empty_folders(target, dataset);
  } catch (...) {
    // Best effort: see the header.
  }
}

namespace {

// The generation folders under `dir` (a folder of the sidecar) still marked in progress whose
// writer died on this host, found through real folders only.
void find_dead_marked(const fs::path& dir, std::vector<fs::path>& found) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto& p = entry.path();
    if (!is_real_folder(p)) {
      continue;
    }
    const auto name = p.filename().string();
    if (!is_generation_name(name)) {
      find_dead_marked(p, found);
    } else if (std::error_code exists_ec; fs::exists(p / kInProgress, exists_ec) && !writer_alive(name)) {
      found.push_back(p);
    }
  }
}

}  // namespace

std::set<std::string> dead_writers_mapped_by(const fs::path& target, const std::string& vds_prefix) noexcept {
  std::set<std::string> names;
  try {
    const auto sidecar = sidecar_dir(target);
    std::vector<fs::path> dead;
    if (is_real_folder(sidecar)) {
      find_dead_marked(sidecar, dead);
    }
    std::error_code ec;
    if (dead.empty() || !fs::exists(target, ec)) {
      return names;  // none; or no file that could map one
    }
    std::set<std::string> mapped;  // the folders of the target's sources
    try {
      for (const auto& source : mapped_source_files(target, vds_prefix)) {
        mapped.insert(canonical_path(source.parent_path()));
      }
    } catch (...) {
      for (const auto& p : dead) names.insert(p.filename().string());  // unknown: keep them all
      return names;
    }
    for (const auto& p : dead) {
      if (mapped.contains(canonical_path(p))) names.insert(p.filename().string());
    }
  } catch (...) {
    // Out of memory: nothing known to be mapped (as before this check existed).
  }
  return names;
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
