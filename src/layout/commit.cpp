#include "layout/commit.hpp"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/posix_file.hpp"
#include "layout/file_writer.hpp"
#include "layout/virtual/sidecar.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

WriteCommit::WriteCommit(fs::path target, std::string dataset, Mode mode, bool with_tiles)
    : WriteCommit(std::move(target), std::move(dataset), mode, with_tiles, new_generation()) {
  if (with_tiles_) {
    mark_in_progress(target_, dataset_, generation_);
  }
}

WriteCommit::WriteCommit(fs::path target, std::string dataset, Mode mode, bool with_tiles, std::string generation)
    : target_(std::move(target)),
      dataset_(std::move(dataset)),
      mode_(mode),
      with_tiles_(with_tiles),
      generation_(std::move(generation)) {}

fs::path WriteCommit::temp() const { return temp_main(target_, generation_); }

WritableFile WriteCommit::start_main_file() const {
  if (mode_ == Mode::Append && fs::exists(target_)) {
    copy_to_new_file(target_, temp());
    return open_for_update(temp(), dataset_);
  }
  return create_file(temp());
}

void WriteCommit::publish(bool sync, bool keep_previous) {
  const CommitLock lock(target_);
  // Read while the target is still the file this commit replaces: the generations of writers
  // killed after their own rename, before they cleared their mark, that it maps. They hold the
  // tiles of that file (which readers may have open), not a dead writer's leftovers.
  const auto replaced = dead_writers_mapped_by(target_);
  publish_file(temp(), target_, sync);
  published_ = true;
  std::optional<IoError> unsynced;
  if (sync) {
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
  remove_stale(target_, dataset_, with_tiles_ ? generation_ : std::string(), mode_ != Mode::Append,
               keep_previous || unsynced.has_value(), replaced);
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
    fs::remove_all(sidecar_dir(target_) / dataset_dir(dataset_) / generation_, ec);
    remove_empty_folders(target_, dataset_);
  }
}

}  // namespace h5tile::detail
