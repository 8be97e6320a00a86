#pragma once
// The settings' getters and setters in the _h5tile extension (python/h5tile/settings.py shows
// them as h5tile.settings).
#include <nanobind/nanobind.h>

namespace h5tile::python {

void bind_settings(nanobind::module_& m);

}  // namespace h5tile::python
