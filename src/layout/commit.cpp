#include "layout/commit.hpp"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/posix/posix_file.hpp"
#include "layout/file_writer.hpp"
#include "layout/virtual/sidecar.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

WriteCommit::WriteCommit(fs::path target, std::string dataset, const WriteConfig& config, bool with_tiles)
    : WriteCommit(std::move(target), std::move(dataset), config, with_tiles, new_generation()) {
  if (with_tiles_) {
    mark_in_progress(target_, dataset_, generation_);
  }
}

WriteCommit::WriteCommit(fs::path target, std::string dataset, const WriteConfig& config, bool with_tiles,
                         std::string generation)
    : target_(std::move(target)),
      dataset_(std::move(dataset)),
      config_(config),
      with_tiles_(with_tiles),
      generation_(std::move(generation)) {}

fs::path WriteCommit::temp() const { return temp_main(target_, generation_); }

WritableFile WriteCommit::start_main_file(H5F_libver_t low) const {
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
