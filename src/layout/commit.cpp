#include "layout/commit.hpp"

#include <fcntl.h>

#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "comm/collective.hpp"
#include "hdf5/create.hpp"
#include "hdf5/upload_driver.hpp"
#include "io/http/url.hpp"
#include "io/posix/posix_file.hpp"
#include "io/remote.hpp"
#include "layout/file_writer.hpp"
#include "layout/virtual/sidecar.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

namespace {

// The uploads being written (and the objects each write makes beside its target), by generation,
// for the ranks that join them (threads of the process that started them).
struct Started {
  std::weak_ptr<ObjectUpload> upload;
  std::weak_ptr<WriteCommit::ObjectsBeside> beside;
};
std::mutex started_mutex;
std::map<std::string, Started>& started_uploads() {
  static std::map<std::string, Started> started;
  return started;
}

// Files h5tile uploads have no alignment: it would only leave gaps between compressed chunks.
constexpr std::uint64_t kUploadAlignment = 1;

// What a rank's handoff() holds.
enum class Handoff : std::uint64_t { Etags = 0, Bytes = 1 };

}  // namespace

// A joined rank's raw bytes kept in memory for rank 0, which writes them into its upload.
class WriteCommit::KeptBytes final : public ByteSink {
 public:
  explicit KeptBytes(std::string name) : name_(std::move(name)) {}
  [[nodiscard]] std::string name() const override { return name_; }
  void write_at(const void* buffer, std::size_t size, std::uint64_t offset) const override {
    const std::lock_guard lock(mutex_);
    pieces_.emplace_back(offset, std::string(static_cast<const char*>(buffer), size));
  }
  void pack(Packer& out) const {
    const std::lock_guard lock(mutex_);
    out.u64(pieces_.size());
    for (const auto& [offset, bytes] : pieces_) out.u64(offset).str(bytes);
  }

 private:
  std::string name_;
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<std::uint64_t, std::string>> pieces_;
};

WriteCommit::WriteCommit(fs::path target, std::string dataset, const WriteConfig& config, bool with_tiles)
    : target_(std::move(target)),
      dataset_(std::move(dataset)),
      config_(config),
      with_tiles_(with_tiles),
      generation_(new_generation()) {
  if (is_url(target_.native())) {
    upload_ = start_upload(target_.native(), config_.remote, config_.mode == Mode::Exclusive, config_.object_bytes);
    beside_ = std::make_shared<ObjectsBeside>();
    const std::lock_guard lock(started_mutex);
    std::erase_if(started_uploads(), [](const auto& entry) { return entry.second.upload.expired(); });
    started_uploads()[generation_] = {upload_, beside_};
  } else if (with_tiles_) {
    mark_in_progress(target_, dataset_, generation_);
  }
}

WriteCommit::WriteCommit(fs::path target, std::string dataset, const WriteConfig& config, bool with_tiles,
                         const std::string& joining)
    : target_(std::move(target)), dataset_(std::move(dataset)), config_(config), with_tiles_(with_tiles) {
  Unpacker in(joining);
  generation_ = in.str();
  auto upload_id = in.str();
  if (is_url(target_.native()) && config_.processes) {
    // Joined at its first use (upload()): inside the layout's write, where a failure is agreed on
    // with the other ranks; never where the layout has rank 0 write everything.
    join_id_ = std::move(upload_id);
  } else if (is_url(target_.native())) {
    const std::lock_guard lock(started_mutex);
    if (const auto found = started_uploads().find(generation_); found != started_uploads().end()) {
      upload_ = found->second.upload.lock();
      beside_ = found->second.beside.lock();
    }
    // Not found: a rank of another process. It fails at its first use of the main file, inside
    // the write's collective steps, so that every rank fails together (and rank 0 aborts).
    elsewhere_ = !upload_;
  }
}

const std::shared_ptr<ObjectUpload>& WriteCommit::upload() const {
  if (elsewhere_) {
    throw RuntimeError(
        fmt::format("cannot write '{}': one self-contained object is written by the ranks of one process "
                    "(threads); from several processes (MPI, Dask workers), write layout 'virtual' (a tile object "
                    "per rank) or a local file",
                    redacted(target_.native())));
  }
  if (!join_id_.empty()) {
    const std::lock_guard lock(join_mutex_);
    if (!upload_) upload_ = join_upload(target_.native(), config_.remote, join_id_, config_.object_bytes);
  }
  return upload_;
}

void WriteCommit::stop_sending() const noexcept {
  if (!join_id_.empty() && upload_) upload_->abort();  // a joined upload: stops, sends no abort
}

std::string WriteCommit::joining() const {
  return Packer().str(generation_).str(upload_ && config_.processes ? upload_->upload_id() : std::string()).bytes();
}

void WriteCommit::divide(const std::vector<RankBytes>& ranges, int rank) const {
  if (!config_.processes) return;
  const auto& joined = upload();  // (joined here)
  const auto what = fmt::format("cannot write '{}' to '{}' from several processes", dataset_, shown());
  std::uint64_t others = 0;  // bytes of ranks other than 0
  for (const auto& r : ranges) others += r.rank != 0 ? r.end - r.begin : 0;
  // The same answer on every rank (the same ranges).
  std::optional<std::vector<RankBytes>> runs;
  try {
    runs = rank_runs(ranges, what);
  } catch (const InvalidArgument&) {  // ranks that share a chunk
    if (others > kGatheredBytes) throw;
  }
  const bool gather = others <= kGatheredBytes && (!runs || short_run(*runs) != nullptr);
  if (gather) {
    // Runs too short to be parts (or chunks that ranks share), and few bytes: rank 0 gets them and
    // uploads the object alone.
    if (!joined->completes()) kept_ = std::make_shared<KeptBytes>(joined->name());
    return;
  }
  joined->divide(parts_of_runs(*runs, joined->part_size(), what), rank);
}

std::string WriteCommit::handoff() const {
  // Rank 0, and a rank that never joined (rank 0 wrote everything): nothing to hand over.
  if (!config_.processes || !upload_ || upload_->completes()) return {};
  Packer out;
  if (kept_) {
    out.u64(static_cast<std::uint64_t>(Handoff::Bytes));
    kept_->pack(out);
    return out.bytes();
  }
  const auto etags = upload_->flush();
  out.u64(static_cast<std::uint64_t>(Handoff::Etags)).u64(etags.size());
  for (const auto& [number, etag] : etags) out.u64(number).str(etag);
  return out.bytes();
}

void WriteCommit::receive(const std::vector<std::string>& handoffs) const {
  if (!config_.processes || !upload_) return;
  for (const auto& bytes : handoffs) {
    if (bytes.empty()) continue;
    Unpacker in(bytes);
    if (static_cast<Handoff>(in.u64()) == Handoff::Bytes) {
      for (auto count = in.u64(); count > 0; --count) {
        const auto offset = in.u64();
        const auto piece = in.str();
        upload_->write_at(piece.data(), piece.size(), offset);
      }
      continue;
    }
    std::map<unsigned, std::string> etags;
    for (auto count = in.u64(); count > 0; --count) {
      const auto number = static_cast<unsigned>(in.u64());
      etags.emplace(number, in.str());
    }
    upload_->add_etags(etags);
  }
}

fs::path WriteCommit::temp() const { return temp_main(target_, generation_); }

std::string WriteCommit::shown() const {
  return upload_ ? upload_->name() : (uploads() ? redacted(target_.native()) : target_.string());
}

WritableFile WriteCommit::reopen_main() const {
  if (!uploads()) return reopen_file(temp(), config_.alignment);
  const auto fapl = write_access(kUploadAlignment);
  return {open_upload_file(upload(), fapl.get(), true), target_};
}

FileHandle WriteCommit::open_main_read_only() const {
  return uploads() ? open_upload_file(upload(), H5P_DEFAULT, false) : open_local_file(temp());
}

std::string WriteCommit::url_beside(const fs::path& relative) const {
  // Text, not path arithmetic: a path would fold the URL's "//".
  const auto& text = target_.native();
  return text.substr(0, text.rfind('/') + 1) + relative.native();
}

std::string WriteCommit::object_beside(const fs::path& relative) const {
  auto url = url_beside(relative);
  if (beside_) {  // a rank of another process records nothing: abandon() lists the generation's prefix
    const std::lock_guard lock(beside_->mutex);
    beside_->urls.push_back(url);
  }
  return url;
}

std::shared_ptr<const ByteSink> WriteCommit::open_sink() const {
  if (kept_) return kept_;
  if (uploads()) return upload();
  return std::make_shared<const PosixFile>(temp(), O_WRONLY);
}

WritableFile WriteCommit::start_main_file(H5F_libver_t low, bool divided) const {
  if (uploads()) {
    if (config_.mode == Mode::Append) {
      throw InvalidArgument(
          fmt::format("cannot add '{}' to '{}': an object is written whole (mode 'a' needs a "
                      "local file)",
                      dataset_, shown()));
    }
    // Divided by rank (several processes): the data starts at a part's smallest size (a multiple
    // of it), so that the head, HDF5's metadata, is a part of its own, rank 0's (divide()).
    const auto fapl = config_.processes && divided ? write_access(kMinPartBytes, low, upload()->meta_block_bytes() + 1)
                                                   : write_access(kUploadAlignment, low);
    return {create_upload_file(upload(), fapl.get()), target_};
  }
  if (config_.mode == Mode::Append) {
    copied_ = identity_of(target_);
    if (copied_->exists) {
      copied_ = copy_to_new_file(target_, temp(), config_.direct_reads);
      return open_for_update(temp(), dataset_, config_.alignment, low);
    }
  }
  return create_file(temp(), config_.alignment, low);
}

void WriteCommit::publish() {
  if (uploads()) {
    upload()->finish();  // the object appears whole, or not at all
    published_ = true;
    return;
  }
  const CommitLock lock(target_);
  // An append renames a copy of the target with one dataset added: where another write (another
  // process, or a path naming the same file by another spelling) replaced the target since that
  // copy, the rename would silently drop what that write added.
  if (copied_ && identity_of(target_) != *copied_) {
    throw RuntimeError(
        fmt::format("'{}' was replaced by another write while this write was adding '{}' to it: nothing was written "
                    "(the other write's file stays); write again",
                    target_.string(), dataset_));
  }
  // Read while the target is still the file this commit replaces: the generations of writers
  // killed after their own rename, before they cleared their mark, that it maps. They hold the
  // tiles of that file (which readers may have open), not a dead writer's leftovers.
  const auto replaced = dead_writers_mapped_by(target_, config_.vds_prefix);
  publish_file(temp(), target_, config_.sync);
  published_ = true;
  std::optional<IoError> unsynced;
  if (config_.sync) {
    try {
      sync_directory(target_.parent_path());
    } catch (const IoError& e) {
      unsynced.emplace(fmt::format("'{}' is written and in place, but the rename may not survive a power loss: {}",
                                   target_.string(), e.what()),
                       e.error_number());
    }
  }
  if (with_tiles_) {
    clear_in_progress(target_, dataset_, generation_);
  }
  // Where the rename may not be durable, the generation that the previous file maps is kept
  // (superseded) whatever `keep_previous` says: a power loss could bring that file back.
  remove_stale(target_, dataset_, with_tiles_ ? generation_ : std::string(), config_.mode != Mode::Append,
               config_.keep_previous || unsynced.has_value(), config_.vds_prefix, replaced);
  remove_dead_temps(target_);
  if (unsynced) {
    throw *unsynced;
  }
}

void WriteCommit::abandon() const noexcept {
  if (published_) {
    return;  // the target is this write's file now: its generation is in use
  }
  if (uploads()) {
    // A completion whose answer was lost may have made the object, which then maps this write's
    // tiles: they stay (and the failure stands), rather than leave a visible object without them.
    // The abort is sent either way (after a completion the server answers it 404).
    const bool maybe_made = upload_ && upload_->may_have_completed();
    if (upload_) upload_->abort();
    if (maybe_made) return;
    // The objects this process made beside the target, then whatever the generation's prefix
    // holds (tiles of ranks in other processes; listing may be refused where deleting is not).
    // What cannot be deleted is left behind: the failed write's message stands (docs/REMOTE.md).
    if (beside_) {
      const std::lock_guard lock(beside_->mutex);
      for (const auto& url : beside_->urls) {
        try {
          delete_object(url, config_.remote);
        } catch (...) {
        }
      }
    }
    if (with_tiles_) {
      try {
        delete_objects_under(url_beside(tile_relative(target_, dataset_, generation_, 0).parent_path()) + "/",
                             config_.remote);
      } catch (...) {
      }
    }
    return;
  }
  std::error_code ec;
  fs::remove(temp(), ec);
  if (with_tiles_) {
    try {
      fs::remove_all(sidecar_dir(target_) / dataset_dir(dataset_) / generation_, ec);
    } catch (...) {
      // dataset_dir refuses a name that has no tile folder: this write made none.
    }
    remove_empty_folders(target_, dataset_);
  }
}

}  // namespace h5tile::detail
