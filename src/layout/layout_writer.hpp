#pragma once
// How a layout writes a dataset: the one interface behind which each on-disk layout
// (layout/virtual, layout/contiguous, layout/chunked) keeps its writing. api/ plans the write
// across ranks and drives these steps; it never knows how a layout writes.
//
//   rank 0:     create(commit)           -> text every rank receives
//   every rank: write(comm, ..., created, ...) -> one WrittenTile per tile of the rank
//   rank 0:     finish(commit, all)      (every rank's WrittenTiles, in plan order)
//   rank 0:     commit.publish(...)

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <h5tile/communicator.hpp>
#include <h5tile/dataset_info.hpp>

#include "engine/progress.hpp"
#include "layout/commit.hpp"
#include "layout/write_plan.hpp"

namespace h5tile::detail {

class LayoutWriter {
 public:
  LayoutWriter() = default;
  LayoutWriter(const LayoutWriter&) = delete;
  LayoutWriter& operator=(const LayoutWriter&) = delete;
  virtual ~LayoutWriter() = default;

  // Rank 0, before any tile is written: prepares what the ranks write into (the new main file,
  // for layouts whose tiles go into it). Returns what the other ranks need to know of it.
  [[nodiscard]] virtual std::string create(const WriteCommit& commit) = 0;
  // Every rank: writes its `tiles` (plan.boxes[first...]), given what create returned. A writer
  // whose ranks must exchange what they wrote (compressed chunks of one file) does so through
  // `comm`, each step with agree() or on_root(), so that every rank makes the same calls.
  [[nodiscard]] virtual std::vector<WrittenTile> write(Communicator& comm, const WriteCommit& commit,
                                                       const std::string& created, std::span<const Tile> tiles,
                                                       std::size_t first, Progress& progress) = 0;
  // Rank 0, once every rank's tiles are written: completes the new main file.
  virtual void finish(const WriteCommit& commit, const std::vector<WrittenTile>& written) = 0;
};

// The writer of `config.layout` for `plan` (a 0-d or empty dataset is stored in the main file
// whatever the layout).
[[nodiscard]] std::unique_ptr<LayoutWriter> make_layout_writer(const WritePlan& plan, const WriteConfig& config);

// Whether a write of `plan` in `layout` has tiles of its own (a generation folder).
[[nodiscard]] bool writes_tile_files(const WritePlan& plan, Layout layout);

}  // namespace h5tile::detail
