// `h5tile info FILE[:DATASET]`: what a file or dataset holds.
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/h5tile.hpp>

#include "attribute_text.hpp"
#include "common.hpp"

namespace h5tile::cli {
namespace {

struct InfoOptions {
  std::string target;
  bool json = false;
};
InfoOptions info_options;

nlohmann::json to_json(const std::string& name, const DatasetInfo& d) {
  auto j = json_name(name);
  j["dtype"] = d.dtype.name();
  if (!d.charset.empty()) j["charset"] = d.charset;
  if (!d.numpy_type.empty()) j["numpy_type"] = nlohmann::json::parse(d.numpy_type);
  if (d.null_space) {
    j["shape"] = nullptr;  // as h5py's shape None
  } else {
    j["shape"] = d.shape;
  }
  j["layout"] = d.layout;
  j["stored_bytes"] = d.stored_bytes;
  if (!d.chunk.empty()) j["chunk"] = d.chunk;
  if (!d.filters.empty()) j["filters"] = d.filters;
  if (!d.decoder.empty()) j["decoder"] = d.decoder;
  if (!d.decoder_reason.empty()) j["decoder_reason"] = d.decoder_reason;
  if (d.layout == "virtual") j["virtual_sources"] = d.virtual_sources;
  return j;
}

nlohmann::json to_json(const VirtualSource& v) {
  nlohmann::json j{{"file", redacted_path(v.file)}, {"dataset", v.dataset}, {"found", v.found}};
  if (v.region) j["region"] = {{"offset", v.region->offset}, {"extent", v.region->extent}};
  if (v.source_region) j["source_region"] = {{"offset", v.source_region->offset}, {"extent", v.source_region->extent}};
  return j;
}

// "[0:100, 0:20] <- v.h5.tiles/data/G/tile-00000.h5:/tile", like `h5ls -v`'s "Maps:" lines.
std::string source_line(const VirtualSource& v) {
  return fmt::format("{} <- {}:{}{}{}", v.region ? to_string(*v.region) : std::string("(not a box)"),
                     redacted_path(v.file), v.dataset.empty() ? "?" : v.dataset,
                     v.source_region ? " " + to_string(*v.source_region) : "", v.found ? "" : "  (missing)");
}

std::string line(const std::string& name, const DatasetInfo& d) {
  std::string storage = d.layout;
  if (d.layout == "chunked") {
    storage += fmt::format(" [{}]", fmt::join(d.chunk, ", "));
    if (!d.filters.empty()) storage += fmt::format(" {}", fmt::join(d.filters, "+"));
    if (d.decoder == "h5tile") storage += " (decoded by h5tile, in parallel)";
    if (d.decoder == "hdf5") {
      storage += d.decoder_reason.empty() ? std::string(" (decoded by HDF5)")
                                          : fmt::format(" (decoded by HDF5: {})", d.decoder_reason);
    }
  } else if (d.layout == "virtual") {
    storage += fmt::format(" ({} sources)", d.virtual_sources);
  }
  // Strings: "S8 (ascii)", "object (variable-length utf-8 strings)".
  std::string dtype = d.dtype.name();
  if (d.dtype.kind() == DTypeKind::Bytes) dtype += fmt::format(" ({})", d.charset);
  if (d.dtype.kind() == DTypeKind::VarString) dtype += fmt::format(" (variable-length {} strings)", d.charset);
  if (!d.numpy_type.empty()) dtype += fmt::format(" ({})", d.numpy_type);  // compound, enum, array: as NumPy's
  const auto shape = d.null_space ? std::string("null dataspace") : fmt::format("[{}]", fmt::join(d.shape, ", "));
  return fmt::format("{}  {} {}  {}  {} on disk", name, dtype, shape, storage, human_bytes(d.stored_bytes));
}

// How a dataset of a file's listing that cannot be described shows: "unreachable" (a link name
// such as ".." that h5tile's dataset paths cannot spell; h5py reaches it), "unsupported" (a type
// h5tile does not read) or "error" (anything else: the dataset is damaged, or its probe failed).
struct NotDescribed {
  std::string kind;
  std::string reason;
};

NotDescribed not_described(const std::string& name) {
  try {
    throw;
  } catch (const UnsupportedType& e) {
    return {"unsupported", e.what()};
  } catch (const DatasetNotFound& e) {
    return {"error", e.what()};
  } catch (const NotADataset& e) {
    return {"error", e.what()};
  } catch (const InvalidArgument& e) {
    return {unreachable_by_path(name) ? "unreachable" : "error", e.what()};
  } catch (const std::exception& e) {
    return {"error", e.what()};
  }
}

int run_info() {
  auto target = parse_target(info_options.target);
  // "f.h5:/" is the file; "f.h5:/grp/" the group.
  while (!target.dataset.empty() && target.dataset.back() == '/') target.dataset.pop_back();
  // What is listed: one dataset, or every dataset of the file or of a group ("root").
  std::vector<std::string> names;
  std::string root;
  std::optional<DatasetInfo> asked;                      // the one dataset asked for, described once
  std::map<std::string, std::vector<std::string>> also;  // a dataset's other names (its hard links)
  const auto list_every_dataset = [&] {
    std::vector<std::string> firsts;
    for (auto& every : list_dataset_names(target.file)) {
      firsts.push_back(every.front());
      if (every.size() > 1) also[every.front()].assign(every.begin() + 1, every.end());
    }
    return firsts;
  };
  bool listing = target.dataset.empty();
  if (!listing) {
    try {
      asked = describe(target.file, target.dataset);
      names.push_back(target.dataset);
    } catch (const NotADataset&) {
      // A group: its datasets, as a file's listing shows them (an empty group or another kind
      // of object keeps the error).
      root = target.dataset;
      for (auto& name : list_every_dataset()) {
        if (name.size() > root.size() + 1 && name.compare(0, root.size() + 1, root + "/") == 0) {
          names.push_back(std::move(name));
        }
      }
      if (names.empty()) throw;
      listing = true;
    }
  } else {
    names = list_every_dataset();
  }
  nlohmann::json out{{"file", redacted_path(target.file)}, {"datasets", nlohmann::json::array()}};
  if (!root.empty()) out["group"] = root;
  if (!info_options.json) print_line(stdout, "{}{}", redacted_path(target.file), root.empty() ? "" : ":" + root);
  if (!root.empty()) {  // a group: its attributes, then its datasets
    const auto attributes = read_attributes(target.file, root);
    if (info_options.json) out["attributes"] = nlohmann::json::array();
    for (const auto& a : attributes) {
      if (info_options.json) {
        out["attributes"].push_back(attribute_json(a));
      } else {
        print_line(stdout, "  {}", attribute_line(a));
      }
    }
  }
  std::set<std::string> groups_shown;
  std::size_t errors = 0;
  for (const auto& name : names) {
    // The tree: each group once, before its first dataset, indented by depth (below the root).
    const auto relative = std::string_view(name).substr(root.size());
    std::size_t depth = 0;
    for (auto slash = relative.find('/', 1); slash != std::string::npos; slash = relative.find('/', slash + 1)) {
      const auto group = std::string(relative.substr(0, slash));
      ++depth;
      if (!info_options.json && listing && groups_shown.insert(group).second) {
        print_line(stdout, "{}{}/", std::string(2 * depth, ' '), group.substr(group.rfind('/') + 1));
      }
    }
    const std::string indent(2 * (listing ? depth + 1 : 1), ' ');
    const auto shown = listing ? name.substr(name.rfind('/') + 1) : name;
    try {
      const auto d = asked ? *asked : describe(target.file, name);
      // One dataset asked for: a virtual one's sources too, one line each.
      const auto sources =
          !listing && d.layout == "virtual" ? list_virtual_sources(target.file, name) : std::vector<VirtualSource>{};
      const auto other_names = also.find(name);
      if (info_options.json) {
        auto j = to_json(name, d);
        if (other_names != also.end()) j["also"] = other_names->second;
        if (!listing && d.layout == "virtual") {
          j["sources"] = nlohmann::json::array();
          for (const auto& v : sources) j["sources"].push_back(to_json(v));
        }
        out["datasets"].push_back(std::move(j));
      } else {
        print_line(stdout, "{}{}", indent, line(shown, d));
        if (other_names != also.end()) {
          print_line(stdout, "{}  also named {}", indent, fmt::join(other_names->second, ", "));
        }
        for (const auto& v : sources) print_line(stdout, "{}  {}", indent, source_line(v));
      }
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception&) {
      // One dataset asked for: its error is the command's. Listing a file: that dataset is
      // marked and the others are still listed.
      if (!listing) throw;
      const auto [kind, reason] = not_described(name);
      if (kind == "error") ++errors;
      if (info_options.json) {
        auto j = json_name(name);
        j[kind] = reason;
        out["datasets"].push_back(std::move(j));
      } else {
        print_line(stdout, "{}{}  {}: {}", indent, shown, kind, reason);
      }
    }
  }
  if (info_options.json) {
    out["errors"] = errors;
    fmt::print("{}\n", json_text(out));
  }
  return errors == 0 ? kOk : kProblem;
}

}  // namespace

void add_info(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "info",
      "Show the datasets of a file, or one dataset: dtype, shape, layout, bytes (and a virtual dataset's sources)");
  cmd->add_option("target", info_options.target,
                  "FILE, FILE:/DATASET or FILE:/GROUP (the leading / may be left out; FILE: a path or a URL)")
      ->required();
  cmd->add_flag("--json", info_options.json, "print JSON (for scripts)");
  cmd->footer(
      "Examples:\n"
      "  h5tile info out.h5                 every dataset in the file\n"
      "  h5tile info out.h5:/fields         a group: its attributes (@name = value), then its datasets\n"
      "  h5tile info out.h5:/fields/u       one dataset: chunk shape and filters (and who decodes them:\n"
      "                                     h5tile in parallel, or HDF5 and why), or its virtual sources,\n"
      "                                     one line each: REGION <- FILE:DATASET [SOURCE REGION] (missing)\n"
      "  h5tile info out.h5 --json | jq '.datasets[].shape'\n"
      "Listing a file, a dataset that cannot be described is marked and the others are still listed:\n"
      "'unsupported' (a type h5tile does not read), 'unreachable' (a link name such as '..' that a\n"
      "dataset path cannot spell) or 'error' (exit code 1). Names are printed with control characters,\n"
      "bytes that are not UTF-8 and backslashes escaped (\\n, \\x1b, \\xff, \\\\); --json gives them exactly\n"
      "(\"name\", and \"name_hex\" for a name that is not UTF-8).");
  cmd->callback([] { selected_command() = run_info; });
}

}  // namespace h5tile::cli
