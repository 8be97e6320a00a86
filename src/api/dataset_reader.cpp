// DatasetReader: a dataset kept open between reads, checked by stat(2) before each read, and
// the registry through which h5tile's own writes let such datasets go first.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>

#include "api/chunk_cache.hpp"
#include "api/dataset_reader.hpp"
#include "api/pending_writes.hpp"
#include "api/probe.hpp"
#include "api/read_target.hpp"
#include "api/resolve.hpp"
#include "engine/progress.hpp"
#include "hdf5/file.hpp"
#include "io/http/url.hpp"
#include "layout/open_dataset.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

namespace {

// What stat(2) says of a file that a change to it changes: another file at the name (device,
// inode), other contents (size; modification and change times, to the nanosecond).
struct FileStamp {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::int64_t modified_ns = 0;
  std::int64_t changed_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

std::int64_t nanoseconds(const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

std::optional<FileStamp> stamp_of(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileStamp{st.st_dev, st.st_ino, st.st_size, nanoseconds(st.st_mtim), nanoseconds(st.st_ctim)};
}

// A file whose change time is this far in the past has times that a later change must alter:
// the kernel stamps a change with its coarse clock (one tick late), and file systems keep times
// to 1 ns (ext4, XFS, tmpfs, Btrfs) or as coarsely as 1 s (ext3, ext4's small inodes, HFS+) or
// 2 s (FAT). A change in the same tick as the last one would leave the times as they were (git's
// "racy clean" files), so a file changed more recently is not kept. The change time, unlike the
// modification time, cannot be set back (utime sets it to now).
constexpr std::int64_t kQuietNs = 2'000'000'000;

// A virtual dataset whose sources HDF5 opens is kept only up to this many files: each is a
// descriptor held while kept (a File keeps up to 32 datasets) and a stat before every read.
constexpr std::size_t kMostKeptFiles = 64;

// The stat of each file once per call that checks many readers (most keep the same files).
using StampMemo = std::map<fs::path, std::optional<FileStamp>>;

std::optional<FileStamp> stamp_of(const fs::path& file, StampMemo* memo) {
  if (memo == nullptr) return stamp_of(file);
  auto [it, added] = memo->try_emplace(file);
  if (added) it->second = stamp_of(file);
  return it->second;
}

bool quiet(const FileStamp& stamp) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return stamp.changed_ns + kQuietNs < nanoseconds(now);
}

// Whether `info`'s dataset is one of `shape` or one grown from it along unlimited axes only.
bool fits_grown(const Shape& shape, const DatasetInfo& info) {
  if (shape.size() != info.shape.size()) return false;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (info.shape[a] == shape[a]) continue;
    const bool unlimited = a < info.max_shape.size() && info.max_shape[a] == kUnlimitedExtent;
    if (!unlimited || info.shape[a] < shape[a]) return false;
  }
  return true;
}

}  // namespace

namespace detail {

// The dataset a reader keeps open, and the chunks decoded from it: dropped together, so that no
// chunk outlives the open (of a file as it was) that it was read through. For a URL, the remote
// file's source too, found once here rather than through HDF5 at every read.
struct KeptDataset {
  KeptDataset(std::unique_ptr<const OpenDataset> opened, std::uint64_t cache_bytes)
      : dataset(std::move(opened)),
        chunks(cache_bytes > 0 ? std::make_unique<ChunkCache>(cache_bytes) : nullptr),
        remote_file(dataset->remote_file()) {}
  std::unique_ptr<const OpenDataset> dataset;
  std::unique_ptr<ChunkCache> chunks;             // null where the dataset's reads are not cached
  std::shared_ptr<const ByteSource> remote_file;  // null for a local file
};

}  // namespace detail

struct DatasetReader::State {
  fs::path path;
  Location location;  // `path`, parsed once
  std::string dataset;
  ReadOptions options;
  // Shared by the reads of `kept`; exclusive to replace it (which waits for those reads, so that
  // HDF5 never opens the file anew while an old handle of the same inode is open: HDF5 would
  // share the old one's metadata).
  mutable std::shared_mutex use;
  std::unique_ptr<const KeptDataset> kept;
  std::vector<std::pair<fs::path, FileStamp>> stamps;  // of kept's files, when it was opened
  pid_t pid = 0;                                       // the process that opened it
  bool once = false;                                   // `kept` is for the read that opened it only (see reopen)
  std::uint64_t opens = 0;  // how many times a `kept` to keep was opened (DatasetReader::opens)
  // The shape and type of the dataset as the reader first opened it (or as expect() said): every
  // later open must find the same (a dataset grown along its unlimited axes still holds every box
  // of the old shape, as it was), or its reads fail. Under its own lock: checked by the reads that
  // open the file each time without `use`.
  std::mutex described_mutex;
  std::optional<std::pair<Shape, DType>> described;
  bool expected = false;  // `described` came from expect()

  // Throws where `info` is not the shape and type first opened (recording them at the first).
  void check_described(const DatasetInfo& info) {
    const std::lock_guard lock(described_mutex);
    if (!described) {
      described.emplace(info.shape, info.dtype);
      return;
    }
    if (described->second == info.dtype && fits_grown(described->first, info)) return;
    throw RuntimeError(fmt::format(
        "{} changed since it was {}: it was {} {}, it is now {} {} (the file was replaced or rewritten); open it "
        "again to read it as it is",
        where(path, dataset), expected ? "described" : "first opened by this reader", to_string(described->first),
        described->second.name(), to_string(info.shape), info.dtype.name()));
  }

  // Whether `kept` can be read: opened by this process, each of its files as it was then.
  [[nodiscard]] bool usable(StampMemo* memo = nullptr) const {
    if (!kept || once || pid != ::getpid()) return false;
    return std::all_of(stamps.begin(), stamps.end(),
                       [&](const auto& s) { return stamp_of(s.first, memo) == s.second; });
  }

  // Under `use` held exclusively: `kept` let go, and opened again where it can be kept.
  //
  // A local file is kept once it has been quiet a while, and each read compares its stat with
  // the one taken here. A URL's dataset is kept where every request it makes names the versions
  // it opened (a strong ETag, as If-Match): a read of an object changed since fails with ESTALE,
  // and read_with opens it anew. Each read first asks the server whether the object is still
  // that version (read_with), so a read answered from memory (decoded chunks, metadata blocks)
  // is of the object as it is too. Without ETags (WebHDFS, some servers), it serves the read
  // that opened it only (`once`): each read opens it again and so sees it as it is. So does a
  // local file that cannot be kept once opened (reached through external links, more than
  // kMostKeptFiles files); one changed a moment ago is not opened here: its reads open it each
  // (read_with's `read_each_time`, outside the lock). Every open checks the dataset's shape and
  // type (check_described).
  void reopen() {
    kept.reset();
    stamps.clear();
    once = false;
    const bool remote = location.remote();
    const auto before = remote ? std::nullopt : stamp_of(path);
    if (!remote && (!before || !quiet(*before))) return;
    auto opening = open_options(options);
    fit_to_path(opening, location, options.threads, false);  // inside a read, which started the report
    probe_if_wanted(options.probe, where(path, dataset), [&] { open_as_a_read_does(location, dataset, opening); });
    auto opened = std::make_unique<const OpenDataset>(location, dataset, opening);
    check_described(opened->info());
    const auto for_this_read = [&] {
      once = true;
      kept = std::make_unique<const KeptDataset>(std::move(opened), 0);
    };
    std::vector<std::pair<fs::path, FileStamp>> taken;
    if (remote) {
      once = !opened->pinned_remote();
      // Kept, its metadata blocks would stay (MiB each, up to 16); its reads need little of them.
      if (!once) opened->drop_remote_blocks();
    } else {
      const auto files = opened->kept_files();
      if (!files || files->size() > kMostKeptFiles || stamp_of(path) != before) return for_this_read();
      taken.emplace_back(path, *before);
      for (const auto& file : *files) {
        if (file == path) continue;
        // Taken after the open: a source replaced in between has a recent change time (a rename
        // sets it), so it is not kept.
        const auto stamp = stamp_of(file);
        if (!stamp || !quiet(*stamp)) return for_this_read();
        taken.emplace_back(file, *stamp);
      }
    }
    // verify_checksums checks the stored bytes at every read: none is served from memory; nor is
    // anything of an open for one read.
    const auto cache_bytes = options.verify_checksums || once ? 0 : chunk_cache_capacity(opened->info());
    kept = std::make_unique<const KeptDataset>(std::move(opened), cache_bytes);
    stamps = std::move(taken);
    pid = ::getpid();
    if (!once) ++opens;
  }
};

namespace {

// Every DatasetReader's state, for release_kept.
struct Registry {
  std::mutex mutex;
  std::vector<std::weak_ptr<DatasetReader::State>> states;
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: readers may outlive static destruction
  return *r;
}

// Reads through the kept dataset where it is still the file's, else opens it again (kept where
// it can be, else for this read only); `read_each_time` where it is not opened to be kept.
template <class ReadKept, class ReadEachTime>
void read_with(DatasetReader::State& state, const ReadKept& read_kept, const ReadEachTime& read_each_time) {
  start_call_report(state.location);
  pending_writes().wait_for(state.path);
  const KeptDataset* changed = nullptr;  // a kept remote object found changed by this read
  {
    const std::shared_lock lock(state.use);
    if (state.usable()) {
      try {
        // A URL kept open is asked first whether it is still the version opened (one byte): parts
        // of a read may come from memory (its first block, decoded chunks) and ask the server
        // nothing, and then every read after a change would still give the old version, beside
        // reads that asked and gave the new one (the blocks of one Dask compute).
        if (state.kept->remote_file) state.kept->remote_file->validate();
        read_kept(*state.kept);
        return;
      } catch (const IoError& e) {
        if (e.error_number() != ESTALE || !state.kept->remote_file) throw;
        changed = state.kept.get();  // read again from the object as it is now
      }
    }
  }
  // Every kept open of a changed file goes first (this one's too): HDF5 must not meet an old open
  // of the inode it opens.
  release_changed_kept();
  std::unique_lock lock(state.use);
  if (changed != nullptr && state.kept.get() == changed) state.kept.reset();
  if (!state.usable()) state.reopen();
  if (!state.kept) {  // not opened (changed a moment ago): read as read_box does, checked
    lock.unlock();
    read_each_time();
    return;
  }
  if (state.once) {  // opened for this read alone
    const std::unique_ptr<const KeptDataset> opened = std::move(state.kept);
    state.once = false;
    lock.unlock();
    read_kept(*opened);
    return;
  }
  read_kept(*state.kept);  // still exclusive: one read, then others share it
}

// A read of a part of one chunk of a cached dataset into host memory is copied out of the decoded
// chunk, which is read (clipped to the dataset) and kept where it is not cached yet; any other
// read goes to the dataset.
void read_target(const KeptDataset& kept, const ReadOptions& options, const ReadTarget& target) {
  Progress progress(options.progress, target.bytes);
  const auto& opened = *kept.dataset;
  const auto& info = opened.info();
  const auto threads = threads_or_setting(options.threads);
  const auto chunk =
      kept.chunks && target.device < 0 ? chunk_holding(target.region, info.chunk, info.shape) : std::nullopt;
  if (!chunk) {
    opened.read_into(target.region, target.out, target.device, threads, &progress);
    return;
  }
  const auto element_size = info.dtype.size();
  if (kept.chunks->copy_out(*chunk, target.region, element_size, target.out)) {
    progress.add(target.bytes);
    return;
  }
  if (*chunk == target.region) {  // the whole chunk: read where it goes, not kept
    opened.read_into(target.region, target.out, target.device, threads, &progress);
    return;
  }
  auto decoded = std::make_shared<Array>(info.dtype, chunk->extent, -1);
  opened.read_into(*chunk, decoded->data(), -1, threads, &progress);
  copy_box(decoded->data(), *chunk, target.region, element_size, target.out);
  kept.chunks->put(*chunk, std::move(decoded));
}

}  // namespace

namespace detail {

namespace {

// Every reader's state that keeps a dataset open and `wanted` picks; the registry's lock is not
// held once this returns, so that each state can be locked alone (never two at once).
template <class Wanted>
std::vector<std::shared_ptr<DatasetReader::State>> kept_states(const Wanted& wanted) {
  std::vector<std::shared_ptr<DatasetReader::State>> states;
  const std::lock_guard lock(registry().mutex);
  for (const auto& weak : registry().states) {
    if (auto state = weak.lock(); state && wanted(*state)) states.push_back(std::move(state));
  }
  return states;
}

void let_go(DatasetReader::State& state) {
  state.kept.reset();
  state.stamps.clear();
}

}  // namespace

void release_kept(const fs::path& path) {
  std::optional<fs::path> key;  // made only where a reader exists (it stats the folders)
  for (const auto& state : kept_states([&](const auto& s) {
         if (!key) key = write_key(path);
         return write_key(s.path) == *key;
       })) {
    const std::unique_lock lock(state->use);
    let_go(*state);
  }
}

void release_changed_kept() {
  // Each state checked under its own lock, one at a time; each file stat'ed once.
  StampMemo memo;
  for (const auto& state : kept_states([](const auto&) { return true; })) {
    {
      const std::shared_lock lock(state->use);  // beside its reads: most states are unchanged
      if (!state->kept || state->usable(&memo)) continue;
    }
    const std::unique_lock lock(state->use);
    if (state->kept && !state->usable(&memo)) let_go(*state);
  }
}

void settle_before_open(const fs::path& path) {
  pending_writes().wait_for(path);
  release_changed_kept();
}

}  // namespace detail

DatasetReader::DatasetReader(fs::path path, std::string dataset, ReadOptions options)
    : state_(std::make_shared<State>()) {
  state_->location = Location::of(path);
  state_->path = std::move(path);
  state_->dataset = std::move(dataset);
  state_->options = std::move(options);
  const std::lock_guard lock(registry().mutex);
  auto& states = registry().states;
  std::erase_if(states, [](const auto& weak) { return weak.expired(); });
  states.push_back(state_);
}

DatasetReader::DatasetReader(DatasetReader&&) noexcept = default;
DatasetReader& DatasetReader::operator=(DatasetReader&&) noexcept = default;
DatasetReader::~DatasetReader() = default;

Array DatasetReader::read_box(const Box& box) const {
  auto& s = *state_;
  std::optional<Array> out;
  read_with(
      s,
      [&](const KeptDataset& kept) {
        read_target(kept, s.options, new_array_target(*kept.dataset, box, s.options.device, out));
      },
      [&] {
        open_and_read(s.location, s.dataset, s.options, [&](const OpenDataset& opened) {
          s.check_described(opened.info());
          return new_array_target(opened, box, s.options.device, out);
        });
      });
  return std::move(*out);
}

void DatasetReader::read_into(const ArrayView& out, const Shape& offset) const {
  auto& s = *state_;
  read_with(
      s,
      [&](const KeptDataset& kept) { read_target(kept, s.options, caller_memory_target(*kept.dataset, out, offset)); },
      [&] {
        open_and_read(s.location, s.dataset, s.options, [&](const OpenDataset& opened) {
          s.check_described(opened.info());
          return caller_memory_target(opened, out, offset);
        });
      });
}

void DatasetReader::expect(const Shape& shape, const DType& dtype) {
  auto& s = *state_;
  const std::unique_lock lock(s.use);
  {
    const std::lock_guard described(s.described_mutex);  // read_each_time checks outside `use`
    s.described.emplace(shape, dtype);
    s.expected = true;
  }
  let_go(s);  // an open kept already is opened again by the next read, and checked there
}

void DatasetReader::close() {
  if (!state_) return;
  const std::unique_lock lock(state_->use);
  let_go(*state_);
}

bool DatasetReader::is_open() const {
  if (!state_) return false;
  const std::shared_lock lock(state_->use);
  return state_->kept != nullptr && state_->pid == ::getpid();
}

std::size_t DatasetReader::cached_chunks() const {
  if (!state_) return 0;
  const std::shared_lock lock(state_->use);
  const auto& kept = state_->kept;
  return kept && kept->chunks && state_->pid == ::getpid() ? kept->chunks->chunks() : 0;
}

std::uint64_t DatasetReader::opens() const {
  if (!state_) return 0;
  const std::shared_lock lock(state_->use);
  return state_->opens;
}

}  // namespace h5tile
