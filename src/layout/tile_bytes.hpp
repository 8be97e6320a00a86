#pragma once
// Moving a tile's bytes from memory (host or device) into a raw dataset in a file: the step
// every layout's writer shares.

#include <filesystem>
#include <functional>
#include <span>

#include <h5tile/array.hpp>
#include <h5tile/dataset_info.hpp>

#include "engine/progress.hpp"
#include "engine/raw_transfer.hpp"
#include "io/byte_sink.hpp"
#include "layout/commit.hpp"
#include "layout/write_plan.hpp"

namespace h5tile::detail {

// Called on the thread that wrote it once `part` (a box inside the box written, in dataset
// coordinates) is in the file: to start its writeback, to hash it while it is hot.
using PartWritten = std::function<void(const Box& part)>;

// Writes the tile whose memory `data` holds into `box` of `file` (the whole of a tile file, the
// tile's box of a shared file, or its part of a chunk): from host memory in tasks of about
// `config.task_size` bytes on `config.threads` threads, or through `config.staging` from a
// device; `written` (where given) is called for each part once it is written. The parts are
// runs of the row-major order of `box`.
void write_tile_bytes(const RawDataset& file, const Box& box, const ArrayView& data, Progress& progress,
                      const WriteConfig& config, const PartWritten& written = {});

// Starts the writeback of the bytes of `file` that `part` (just written) holds
// (PosixFile::start_writeback): the whole pages of a part that is one run of the file; nothing
// for a part with gaps, whose span holds other ranks' bytes (those wait for the final sync).
void start_writeback(const RawDataset& file, const Box& part);

// Where `config.sync`: a PartWritten that starts the writeback of each part (start_writeback),
// so that the disk works while the rest is written and the sync that ends the write has less
// left to wait for. Otherwise none (a write without sync leaves the writeback to the kernel).
[[nodiscard]] PartWritten writeback_of(const RawDataset& file, const WriteConfig& config);

// The part `part` (dataset coordinates, inside `box`) of a tile whose memory `data` holds `box`.
[[nodiscard]] ArrayView sub_view(const ArrayView& data, const Box& box, const Box& part);

// For layouts whose tiles all go into the new main file: opens the commit's sink (the main file
// or the object being uploaded), calls `write_tile` for each of this rank's `tiles`, then
// flushes this rank's bytes when `sync` (with MPI, another node's page cache is not rank 0's to
// flush).
void write_tiles_into(const WriteCommit& commit, std::span<const Tile> tiles, bool sync,
                      const std::function<void(const ByteSink& out, const Tile& tile)>& write_tile);

// A view's memory with its byte strides.
[[nodiscard]] StridedBytes memory_of(const ArrayView& view);

}  // namespace h5tile::detail
