#pragma once
// Layout Contiguous, written: one self-contained file whose dataset's space is allocated when
// rank 0 creates it; every rank then writes its tiles straight into their places with pwrite.

#include <memory>

#include "layout/layout_writer.hpp"

namespace h5tile::detail {

[[nodiscard]] std::unique_ptr<LayoutWriter> make_contiguous_writer(const WritePlan& plan, const WriteConfig& config);

}  // namespace h5tile::detail
