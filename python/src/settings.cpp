// h5tile.settings: the process-wide defaults of include/h5tile/settings.hpp, through the core's
// table (settings_table) and its generic get_setting / set_setting; h5tile/settings.py makes each
// setting's getter and setter from the table.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/variant.h>

#include <string>
#include <string_view>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

#include "settings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace h5tile::python {
namespace {

std::string_view kind_name(h5tile::settings::Kind kind) {
  using h5tile::settings::Kind;
  switch (kind) {
    case Kind::Count: return "count";
    case Kind::Size: return "size";
    case Kind::Flag: return "flag";
    case Kind::Mode: return "mode";
    case Kind::Seconds: return "seconds";
    case Kind::Text: return "text";
  }
  return "?";
}

}  // namespace

void bind_settings(nb::module_& m) {
  namespace s = h5tile::settings;
  m.def(
      "parse_size", [](std::string_view text) { return s::parse_size(text); }, "text"_a);
  m.def("check_environment", &s::check_environment);
  m.def("host_pool_held_bytes", &s::host_pool_held_bytes);
  m.def(
      "get_setting", [](std::string_view name) { return s::get(name); }, "name"_a);
  m.def(
      "set_setting", [](std::string_view name, const s::Value& value) { s::set(name, value); }, "name"_a, "value"_a);
  m.def(
      "settings_table",
      [] {
        nb::list rows;
        for (const auto& setting : s::all()) {
          nb::dict row;
          row["name"] = std::string(setting.name);
          row["variable"] = std::string(setting.variable);
          row["kind"] = std::string(kind_name(setting.kind));
          row["least"] = setting.least;
          row["most"] = setting.most;
          row["values"] = std::string(setting.values);
          row["default"] = std::string(setting.fallback);
          row["doc"] = std::string(setting.doc);
          rows.append(row);
        }
        return rows;
      },
      "Every setting as the core's table lists it (settings.table() in h5tile.settings).");
}

}  // namespace h5tile::python
