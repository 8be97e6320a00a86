#pragma once
// Layout Chunked, written: one self-contained file with one unfiltered chunked dataset whose
// chunks are all allocated when rank 0 creates it; every rank then writes its tiles' parts of
// each chunk in place, each chunk stored whole and row-major at the address HDF5 gave it.

#include <memory>

#include "layout/layout_writer.hpp"

namespace h5tile::detail {

[[nodiscard]] std::unique_ptr<LayoutWriter> make_chunked_writer(const WritePlan& plan, const WriteConfig& config);

}  // namespace h5tile::detail
