#pragma once
// Layout Virtual, written: one small file per tile in the generation folder of the sidecar
// (layout/sidecar.hpp), written by the rank that holds the tile, and a virtual dataset in the
// new main file that maps every tile, with the tile index (layout/tile_index.hpp).

#include <memory>

#include "layout/layout_writer.hpp"

namespace h5tile::detail {

[[nodiscard]] std::unique_ptr<LayoutWriter> make_virtual_writer(const WritePlan& plan, const WriteConfig& config);

}  // namespace h5tile::detail
