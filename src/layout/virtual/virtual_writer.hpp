#pragma once
// Layout Virtual, written: one small file per tile in the generation folder of the sidecar
// (layout/sidecar.hpp), written by the rank that holds the tile, and a virtual dataset in the
// new main file that maps every tile, with the tile index (layout/tile_index.hpp). With filters
// (compression), each tile file holds a filtered chunked dataset whose chunks the rank
// compresses on its workers, and the main file has no tile index (no raw bytes to point at).

#include <memory>

#include "layout/layout_writer.hpp"

namespace h5tile::detail {

[[nodiscard]] std::unique_ptr<LayoutWriter> make_virtual_writer(const WritePlan& plan, const WriteConfig& config);

}  // namespace h5tile::detail
