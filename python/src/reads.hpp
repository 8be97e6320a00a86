#pragma once
// The reads in the _h5tile extension: from_file, read_into, read_box and describe, and the readers
// kept between reads by h5tile.File's datasets (_Reader) and h5tile.dask's blocks (_Batched).
#include <nanobind/nanobind.h>

namespace h5tile::python {

void bind_reads(nanobind::module_& m);

}  // namespace h5tile::python
