// h5tile.settings: the process-wide defaults of include/h5tile/settings.hpp, one getter and one
// setter each (modes as the strings "auto", "on", "off").
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <string>
#include <string_view>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

#include "settings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace h5tile::python {
namespace {

template <class Mode>
std::string mode_name(Mode mode) {
  return mode == Mode::On ? "on" : mode == Mode::Off ? "off" : "auto";
}

template <class Mode>
Mode mode_from(std::string_view what, std::string_view name) {
  if (name == "auto") return Mode::Auto;
  if (name == "on") return Mode::On;
  if (name == "off") return Mode::Off;
  throw InvalidArgument(std::string(what) + " must be 'auto', 'on' or 'off', not '" + std::string(name) + "'");
}

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
  m.def("threads", &s::threads);
  m.def("set_threads", &s::set_threads, "n"_a);
  m.def("task_size", &s::task_size);
  m.def("set_task_size", &s::set_task_size, "size"_a);
  m.def("alignment", &s::alignment);
  m.def("set_alignment", &s::set_alignment, "size"_a);
  m.def("staging_bytes", &s::staging_bytes);
  m.def("set_staging_bytes", &s::set_staging_bytes, "size"_a);
  m.def("host_pool_bytes", &s::host_pool_bytes);
  m.def("set_host_pool_bytes", &s::set_host_pool_bytes, "size"_a);
  m.def("host_pool_held_bytes", &s::host_pool_held_bytes);
  m.def("raw_io", &s::raw_io);
  m.def("set_raw_io", &s::set_raw_io, "on"_a);
  m.def("early_reads", &s::early_reads);
  m.def("set_early_reads", &s::set_early_reads, "on"_a);
  m.def("probe", &s::probe);
  m.def("set_probe", &s::set_probe, "on"_a);
  m.def("remote_connections", &s::remote_connections);
  m.def("set_remote_connections", &s::set_remote_connections, "n"_a);
  m.def("remote_block_size", &s::remote_block_size);
  m.def("set_remote_block_size", &s::set_remote_block_size, "size"_a);
  m.def("remote_timeout", &s::remote_timeout);
  m.def("set_remote_timeout", &s::set_remote_timeout, "seconds"_a);
  m.def("lz4_block_size", &s::lz4_block_size);
  m.def("set_lz4_block_size", &s::set_lz4_block_size, "size"_a);
  m.def("remote_retries", &s::remote_retries);
  m.def("set_remote_retries", &s::set_remote_retries, "n"_a);
  m.def("probe_timeout", &s::probe_timeout);
  m.def("set_probe_timeout", &s::set_probe_timeout, "seconds"_a);
  m.def("direct_io", [] { return mode_name(s::direct_io()); });
  m.def(
      "set_direct_io", [](std::string_view mode) { s::set_direct_io(mode_from<s::DirectIo>("direct_io", mode)); },
      "mode"_a);
  m.def("cold_reads", [] {
    const auto mode = s::cold_reads();
    return std::string(mode == s::ColdReads::Parallel ? "parallel" : mode == s::ColdReads::Stream ? "stream" : "auto");
  });
  m.def(
      "set_cold_reads",
      [](std::string_view mode) {
        if (mode == "auto") return s::set_cold_reads(s::ColdReads::Auto);
        if (mode == "parallel") return s::set_cold_reads(s::ColdReads::Parallel);
        if (mode == "stream") return s::set_cold_reads(s::ColdReads::Stream);
        throw InvalidArgument("cold_reads must be 'auto', 'parallel' or 'stream', not '" + std::string(mode) + "'");
      },
      "mode"_a);
  m.def("cold_readers", &s::cold_readers);
  m.def("set_cold_readers", &s::set_cold_readers, "n"_a);
  m.def("cold_request_size", &s::cold_request_size);
  m.def("set_cold_request_size", &s::set_cold_request_size, "size"_a);
  m.def("gds", [] { return mode_name(s::gds()); });
  m.def(
      "set_gds", [](std::string_view mode) { s::set_gds(mode_from<s::Gds>("gds", mode)); }, "mode"_a);
  m.def("gpu_decode", [] { return mode_name(s::gpu_decode()); });
  m.def(
      "set_gpu_decode", [](std::string_view mode) { s::set_gpu_decode(mode_from<s::GpuDecode>("gpu_decode", mode)); },
      "mode"_a);
  m.def("nvcomp_library", &s::nvcomp_library);
  m.def("set_nvcomp_library", &s::set_nvcomp_library, "path"_a);
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
