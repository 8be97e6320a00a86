#include "layout/commit.hpp"

#include <utility>

#include "engine/posix_file.hpp"
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

WritableFile WriteCommit::start_main_file() const {
  if (config_.mode == Mode::Append && fs::exists(target_)) {
    copy_to_new_file(target_, temp(), config_.direct_reads);
    return open_for_update(temp(), dataset_, config_.alignment);
  }
  return create_file(temp(), config_.alignment);
}

void WriteCommit::publish() const {
  const CommitLock lock(target_);
  publish_file(temp(), target_, config_.sync);
  if (with_tiles_) {
    clear_in_progress(target_, dataset_, generation_);
  }
  remove_stale(target_, dataset_, with_tiles_ ? generation_ : std::string(), config_.mode != Mode::Append,
               config_.keep_previous, config_.vds_prefix);
  remove_dead_temps(target_);
}

void WriteCommit::abandon() const noexcept {
  std::error_code ec;
  fs::remove(temp(), ec);
  if (with_tiles_) {
    fs::remove_all(sidecar_dir(target_) / dataset_dir(dataset_) / generation_, ec);
    remove_empty_folders(target_, dataset_);
  }
}

}  // namespace h5tile::detail
