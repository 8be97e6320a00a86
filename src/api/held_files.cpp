#include "api/held_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/objects.hpp>

#include "api/dataset_reader.hpp"
#include "api/pending_writes.hpp"
#include "api/write_checks.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "hdf5/reserve.hpp"

namespace h5tile {
namespace fs = std::filesystem;

namespace detail {
namespace {

// One held file: the open, how many holds it has, the process that opened it (a child of fork()
// must not write through its parent's open) and the file it is (device and inode: a path
// renamed over since names another file).
struct Held {
  FileHandle file;
  int descriptor = -1;                            // HDF5's of `file` (hdf5_descriptor), looked up once
  std::map<std::string, DatasetHandle> datasets;  // kept open by held_dataset; closed before `file`
  unsigned holds = 0;
  bool lent = false;  // lend_for_writing: `file` closed, another HDF5 library in this process writes it
  pid_t pid = 0;
  dev_t device = 0;
  ino_t inode = 0;
};

struct Registry {
  std::mutex mutex;
  std::map<fs::path, Held> files;  // by write_key
  // write_key of the paths changed while files are held, as given (write_key stats each folder
  // on the way: a row appended at a time would pay it every call). A path whose folders changed
  // since still names the file it names now: each change compares its inode with the held one's.
  std::map<std::string, fs::path> keys;
};

Registry& registry() {
  static Registry r;
  return r;
}

// The device and inode of `path`, or nullopt where stat(2) fails.
std::optional<std::pair<dev_t, ino_t>> identity_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::pair{st.st_dev, st.st_ino};
}

// Opens `path` read-write into `held`.
void open_into(Held& held, const fs::path& path) {
  held.file = open_local_file(path, true);
  held.descriptor = hdf5_descriptor(held.file.get());
  const auto identity = identity_of(path);
  held.device = identity ? identity->first : 0;
  held.inode = identity ? identity->second : 0;
  held.pid = ::getpid();
}

// The entry of `key` (write_key) (the caller holds the registry's lock), or nullptr. Throws
// InvalidArgument in a child of fork() for a file its parent holds: HDF5 in the child would hand
// back the parent's open, as it was at the fork, and its flushes would undo the parent's writes.
Held* held_here(const fs::path& key, const fs::path& path) {
  auto& files = registry().files;
  const auto it = files.find(key);
  if (it == files.end()) return nullptr;
  if (it->second.pid != ::getpid()) {
    throw InvalidArgument(
        fmt::format("cannot change '{}' in this process: its parent process holds it open for "
                    "writing (an h5tile.File in a write mode, open when it forked); change it "
                    "in the parent, or close it there before the fork",
                    path.string()));
  }
  return &it->second;
}

}  // namespace

FileChange::FileChange(const fs::path& path) : path_(path) {
  check_not_remote(path);
  settle_before_open(path);
  release_kept(path);
  const std::lock_guard lock(registry().mutex);
  if (registry().files.empty()) {  // the common case without holds: no key to make (it stats folders)
    file_ = open_local_file(path, true);
    return;
  }
  auto& keys = registry().keys;
  const auto known = keys.find(path.native());
  key_ = known != keys.end() ? known->second : keys.emplace(path.native(), write_key(path)).first->second;
  Held* held = held_here(key_, path);
  if (held == nullptr) {
    file_ = open_local_file(path, true);
    return;
  }
  if (held->lent) {
    throw InvalidArgument(
        fmt::format("cannot change '{}' through h5tile now: it is lent to h5py, whose low-level "
                    "identifiers (.id) write it; the h5tile.File takes it back first",
                    path.string()));
  }
  if (!held->file || identity_of(path) != std::pair{held->device, held->inode}) {
    // The path names another file now (a rename over it): the new one is opened first (where
    // that fails, the hold stays on the old one), then the old is flushed and let go.
    Held fresh;
    open_into(fresh, path);
    held->datasets.clear();
    if (held->file) flush_file(held->file.get(), path);  // (none where taking it back failed)
    held->file = std::move(fresh.file);
    held->descriptor = fresh.descriptor;
    held->device = fresh.device;
    held->inode = fresh.inode;
  }
  file_ = reopen_file(held->file.get());
  descriptor_ = held->descriptor;
  held_ = true;
}

DatasetHandle FileChange::dataset(const std::string& name) {
  if (!held_) return open_dataset_to_change(file_.get(), name, path_);
  const std::lock_guard lock(registry().mutex);
  Held* held = held_here(key_, path_);
  if (held == nullptr) return open_dataset_to_change(file_.get(), name, path_);  // released meanwhile
  auto it = held->datasets.find(name);
  if (it == held->datasets.end()) {
    auto opened = open_dataset_to_change(file_.get(), name, path_);
    // One in another file (an external link) is not kept: that file may be replaced meanwhile.
    if (file_name_of(opened.get()) != file_name_of(file_.get())) return opened;
    it = held->datasets.emplace(name, std::move(opened)).first;
  }
  return share_dataset(it->second.get());
}

void FileChange::forget_datasets(const std::string& name) {
  if (!held_) return;
  const std::lock_guard lock(registry().mutex);
  Held* held = held_here(key_, path_);
  if (held == nullptr) return;
  if (name.empty()) {
    held->datasets.clear();
  } else {
    held->datasets.erase(name);
  }
}

void FileChange::finish() {
  if (!held_) flush_file(file_.get(), path_);
}

void FileChange::finish(hid_t dataset) {
  if (held_) flush_dataset(dataset);
  finish();
}

void flush_held(const fs::path& path) {
  const std::lock_guard lock(registry().mutex);
  if (registry().files.empty()) return;
  if (Held* held = held_here(write_key(path), path); held != nullptr && !held->lent) {
    flush_file(held->file.get(), path);
  }
}

}  // namespace detail

void hold_for_writing(const fs::path& path) {
  detail::check_not_remote(path);
  detail::settle_before_open(path);
  detail::release_kept(path);
  const std::lock_guard lock(detail::registry().mutex);
  auto& files = detail::registry().files;
  const auto key = detail::write_key(path);
  auto it = files.find(key);
  if (it != files.end()) (void)detail::held_here(key, path);  // refused in a child of fork()
  if (it == files.end()) {
    detail::Held held;
    detail::open_into(held, path);
    it = files.emplace(key, std::move(held)).first;
    detail::registry().keys.clear();  // bounded: made anew for each set of held files
  }
  ++it->second.holds;
}

void flush_writes(const fs::path& path) { detail::flush_held(path); }

void lend_for_writing(const fs::path& path) {
  detail::release_kept(path);  // readers' kept opens of it: HDF5 shares them with the held one
  const std::lock_guard lock(detail::registry().mutex);
  detail::Held* held = detail::registry().files.empty() ? nullptr : detail::held_here(detail::write_key(path), path);
  if (held == nullptr) {
    throw InvalidArgument(
        fmt::format("cannot lend '{}' to h5py: this process does not hold it open for writing", path.string()));
  }
  if (held->lent) return;
  held->datasets.clear();
  if (const long open = detail::identifiers_open_on(held->file.get()); open != 1) {
    throw InvalidArgument(
        fmt::format("cannot lend '{}' to h5py: h5tile has {} other object(s) of it open (a read or "
                    "write in progress in another thread, or another h5tile.File holding it for writing "
                    "under another name: a symbolic or hard link); try again when it ends",
                    path.string(), open - 1));
  }
  detail::flush_file(held->file.get(), path);
  held->file.reset();
  held->descriptor = -1;
  held->lent = true;
}

void take_back_for_writing(const fs::path& path) {
  const std::lock_guard lock(detail::registry().mutex);
  if (detail::registry().files.empty()) return;
  detail::Held* held = detail::held_here(detail::write_key(path), path);
  if (held == nullptr || !held->lent) return;
  held->lent = false;  // where the open fails (the file removed), the next change opens the path anew
  detail::open_into(*held, path);
}

bool held_for_writing(const fs::path& path) {
  const std::lock_guard lock(detail::registry().mutex);
  const auto& files = detail::registry().files;
  if (files.empty()) return false;
  const auto it = files.find(detail::write_key(path));
  return it != files.end() && it->second.pid == ::getpid();
}

void release_for_writing(const fs::path& path) {
  const std::lock_guard lock(detail::registry().mutex);
  auto& files = detail::registry().files;
  const auto it = files.find(detail::write_key(path));
  if (it == files.end()) return;
  if (it->second.pid != ::getpid()) {
    (void)it->second.file.release();
    files.erase(it);
    return;
  }
  if (--it->second.holds > 0) return;
  if (it->second.lent || !it->second.file) {  // nothing of h5tile's to flush: lent, or not reopened
    files.erase(it);
    detail::registry().keys.clear();
    return;
  }
  const auto file = std::move(it->second.file);
  files.erase(it);
  detail::registry().keys.clear();
  detail::flush_file(file.get(), path);  // closed as `file` goes
}

}  // namespace h5tile
