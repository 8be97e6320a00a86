#pragma once
// How `info` shows an attribute of a group: one line of text ("@units = 'm/s'") or a JSON object.

#include <string>

#include <nlohmann/json.hpp>

#include <h5tile/objects.hpp>

namespace h5tile::cli {

// "@name = value" for text mode (a scalar as it is, an array as [a, b, ...] showing its first
// values, strings in quotes, an empty attribute as "(empty, float32)", one h5tile does not read as
// "(not read: why)"). Not yet passed through printable(): print_line does that.
[[nodiscard]] std::string attribute_line(const Attribute& attribute);

// {"name", "dtype", "shape", "value"} (a scalar's value, else the values in row-major order), or
// {"name", "empty": dtype} or {"name", "unsupported": why}.
[[nodiscard]] nlohmann::json attribute_json(const Attribute& attribute);

}  // namespace h5tile::cli
