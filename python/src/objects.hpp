#pragma once
// h5py's object model underneath h5tile.File, h5tile.Group and h5tile.Dataset's attrs
// (python/h5tile/_objects.py, _attributes.py): the listing of a file's objects and the reads and
// writes of attributes, in the _h5tile extension.
#include <nanobind/nanobind.h>

namespace h5tile::python {

void bind_objects(nanobind::module_& m);

}  // namespace h5tile::python
