#pragma once
// The one way a write reaches its target, shared by to_file (every layout) and consolidate:
// a new generation; the new main file built under a temporary name beside the target (a copy
// of the old file in Append mode); the commit, which renames it over the target under the
// commit lock and then cleans up; or, where anything failed, the removal of everything this
// write made, so that the previous file and its tiles stay as they were.
//
// A target that is an object (s3://) is written the same way by the layouts, through the
// commit's handles to the main file (start_main_file, reopen_main, open_main_read_only,
// open_sink): the file is the object's multipart upload (io/object_upload.hpp), its metadata built
// by HDF5 in memory (hdf5/upload_driver.hpp), and the commit is the upload's completion. Ranks in
// several processes (WriteConfig::processes) join rank 0's upload: the layout divides the object
// by the rank that writes its bytes (divide()), each rank sends its own parts and hands their
// ETags to rank 0 (handoff(), receive()), and rank 0 completes the upload.

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/options.hpp>

#include "hdf5/file.hpp"
#include "io/byte_sink.hpp"
#include "io/object_upload.hpp"
#include "io/posix/posix_file.hpp"
#include "layout/write_plan.hpp"

namespace h5tile::detail {

class WriteCommit {
 public:
  // Starts a write of `dataset` to `target` (absolute, normalised; or an s3:// URL) as `config`
  // says (its mode, sync, keep_previous, alignment; for a URL its remote options): picks a new
  // generation and, where the write has tiles of its own (`with_tiles`), creates its folder
  // marked as being written; for a URL, starts the upload. Call on one rank; other ranks join
  // with `joining()`.
  WriteCommit(std::filesystem::path target, std::string dataset, const WriteConfig& config, bool with_tiles);
  // Joins a write that another rank started, given its joining() (for a URL: the upload itself
  // where the config says `processes`, else a rank of the same process shares the starter's, and a
  // rank of another process cannot write into the main object: RuntimeError at its first use).
  WriteCommit(std::filesystem::path target, std::string dataset, const WriteConfig& config, bool with_tiles,
              const std::string& joining);
  // What the other ranks pass to join this write: its generation (and its upload).
  [[nodiscard]] std::string joining() const;

  [[nodiscard]] const std::filesystem::path& target() const noexcept { return target_; }
  [[nodiscard]] const std::string& dataset() const noexcept { return dataset_; }
  [[nodiscard]] const std::string& generation() const noexcept { return generation_; }
  // Where the new main file is built (a local target).
  [[nodiscard]] std::filesystem::path temp() const;
  // The target as messages show it.
  [[nodiscard]] std::string shown() const;
  // Whether the target is an object being uploaded.
  [[nodiscard]] bool uploads() const noexcept { return upload_ != nullptr || elsewhere_ || !join_id_.empty(); }

  // Creates the new main file under its temporary name, open for adding the dataset: empty,
  // or in Append mode a copy of the target without `dataset`; new objects in formats of `low` or
  // later (write_access). Call close() on it once complete. In Append mode it records which
  // file it copied (or that there was none), for publish() to check.
  // `divided`: ranks in several processes will divide the object by the bytes each writes
  // (divide()): its data then starts at a multiple of 5 MiB, past HDF5's metadata.
  [[nodiscard]] WritableFile start_main_file(H5F_libver_t low = H5F_LIBVER_V18, bool divided = false) const;
  // The new main file (made by start_main_file and closed) opened again to add to it, with the
  // access of start_main_file. Call close() on it.
  [[nodiscard]] WritableFile reopen_main() const;
  // The new main file (made and closed) opened read-only, to learn where HDF5 put things.
  [[nodiscard]] FileHandle open_main_read_only() const;
  // Where this rank writes raw bytes into the new main file at the offsets HDF5 gave them.
  [[nodiscard]] std::shared_ptr<const ByteSink> open_sink() const;
  // A target that is an object: the URL of an object that this write makes beside it (`relative`
  // to the target's folder: a tile of layout virtual), recorded first, so that abandon() deletes it
  // (made or not) where the write fails. A rank of another process (MPI, Dask workers) may call
  // it too: abandon() then finds its objects by listing the generation's prefix. The objects
  // beside appear as each completes, the target last, at publish().
  [[nodiscard]] std::string object_beside(const std::filesystem::path& relative) const;
  // How to reach the target where it is an object (the config's remote options).
  [[nodiscard]] const RemoteOptions& remote() const noexcept { return config_.remote; }

  // Ranks in several processes writing one object (WriteConfig::processes): the bytes each rank
  // writes (main-file offsets; those before, between and after them are rank 0's), the same on
  // every rank, which then sends the parts of its own (ObjectUpload::divide). Where a rank's run
  // is shorter than S3's smallest part and the other ranks write at most kGatheredBytes, they
  // give their bytes to rank 0 instead (open_sink() keeps them, handoff() carries them). Call on
  // every rank before it writes a raw byte. Nothing for other writes. Throws InvalidArgument
  // where neither will do (plan_parts), the same on every rank.
  void divide(const std::vector<RankBytes>& ranges, int rank) const;
  // Every rank, once its bytes are written: what rank 0 needs of them to commit (the ETags of
  // the parts this rank sent, or the bytes it kept, where it joined an upload; empty otherwise).
  [[nodiscard]] std::string handoff() const;
  // Rank 0: every rank's handoff(), before publish().
  void receive(const std::vector<std::string>& handoffs) const;
  // A rank whose write failed: stops sending its parts of a joined upload (those on their way
  // finish first), so that none arrives after rank 0 aborts the upload. Nothing otherwise.
  void stop_sending() const noexcept;
  // The most bytes that ranks other than rank 0 give it (divide()): they travel in a gather.
  static constexpr std::uint64_t kGatheredBytes = std::uint64_t{64} << 20;

  // Makes the new main file the target (one rename under the commit lock, after fsync when
  // the config's `sync`, and followed by fsync of its folder), then clears the in-progress mark and removes
  // what earlier writes left (see remove_stale; the config's `keep_previous` keeps the generation just
  // replaced for readers of the old file). A failure of the folder's fsync, after the rename,
  // is thrown once the clean-up is done (keeping the replaced generation as with
  // `keep_previous`): the write is in place then, and its generation is never removed.
  // In Append mode, a target that another write replaced since start_main_file copied it is a
  // RuntimeError, before the rename: renaming the copy over it would silently drop what that
  // write added.
  void publish();

  // Removes everything this write made (its temporary main file and its generation's tiles; an
  // upload is aborted), unless publish() renamed the new file over the target: then that file
  // maps the generation, and nothing is removed.
  void abandon() const noexcept;

  // The objects a write to an object target makes beside it, shared by its ranks.
  struct ObjectsBeside {
    std::mutex mutex;
    std::vector<std::string> urls;
  };

 private:
  std::filesystem::path target_;
  std::string dataset_;
  WriteConfig config_;
  bool with_tiles_;
  std::string generation_;
  bool published_ = false;  // the rename is done: the target maps this generation
  // Append mode: the target start_main_file copied (exists false: there was none). Set by that
  // const function, which a layout writer calls through a const commit.
  mutable std::optional<FileIdentity> copied_;
  // The upload; RuntimeError for a rank of a process other than the one that started it.
  [[nodiscard]] const std::shared_ptr<ObjectUpload>& upload() const;

  mutable std::shared_ptr<ObjectUpload> upload_;  // a target that is an object: its upload
  std::string join_id_;                           // ... that this rank joins at its first use (upload())
  mutable std::mutex join_mutex_;
  class KeptBytes;  // (commit.cpp) a joined rank's bytes for rank 0 (divide())
  mutable std::shared_ptr<KeptBytes> kept_;
  std::shared_ptr<ObjectsBeside> beside_;  // ... and the objects beside it
  // The URL of `relative` (to the target's folder) where the target is an object.
  [[nodiscard]] std::string url_beside(const std::filesystem::path& relative) const;
  bool elsewhere_ = false;  // ... started by a rank of another process
};

}  // namespace h5tile::detail
