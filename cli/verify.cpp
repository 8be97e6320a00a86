// `h5tile verify FILE[:DATASET]`: is it whole? One line per problem; exit 1 if any.
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/h5tile.hpp>

#include "common.hpp"

namespace h5tile::cli {
namespace {

struct VerifyOptions {
  std::string target;
  bool read = false;
  bool json = false;
  bool no_probe = false;
};
VerifyOptions verify_options;

int run_verify() {
  // verify is for files not trusted yet: HDF5 crashing or hanging on one is reported as a
  // problem of that file, not a crash of the command.
  settings::set_probe(!verify_options.no_probe);
  const auto target = parse_target(verify_options.target);
  // Each dataset once, by its first name; the others its hard links give it are named beside it.
  const auto datasets = target.dataset.empty() ? list_dataset_names(target.file)
                                               : std::vector<std::vector<std::string>>{{target.dataset}};
  nlohmann::json out{{"file", redacted_path(target.file)}, {"datasets", nlohmann::json::array()}};
  std::size_t problems = 0;
  std::size_t skipped = 0;
  for (const auto& names : datasets) {
    const auto& name = names.front();
    const std::vector<std::string> also(names.begin() + 1, names.end());
    std::vector<std::string> found;
    std::string read;
    std::string skipped_because;
    {
      ProgressBar bar(fmt::format("verify {}", name));
      try {
        auto report = verify_report(target.file, name, verify_options.read,
                                    verify_options.read ? bar.callback() : ProgressCallback{});
        found = std::move(report.problems);
        read = std::move(report.read);
      } catch (const Cancelled&) {
        throw;
      } catch (const UnsupportedType& e) {
        skipped_because = e.what();  // a dataset h5tile does not read (compounds, arrays): not a problem of the file
      } catch (const InvalidArgument& e) {
        // A dataset of the listing whose link name a path cannot spell (".."): HDF5 allows it and
        // h5py reaches it, h5tile does not read it. Skipped, as the types it does not read.
        if (target.dataset.empty() && unreachable_by_path(name)) {
          skipped_because = fmt::format("unreachable by path: {}", e.what());
        } else {
          found.push_back(e.what());
        }
      } catch (const std::exception& e) {
        found.push_back(e.what());
      }
      bar.finish();
    }
    // Whose decoders checked the stored bytes: HDF5's alone where h5tile leaves the decoding to it.
    std::string hdf5_only;
    // What must travel with the file: the folders of a virtual dataset's source files.
    std::set<std::string> travels;
    if (found.empty() && skipped_because.empty()) {
      try {
        const auto info = describe(target.file, name);
        if (verify_options.read && info.decoder == "hdf5") {
          hdf5_only = info.decoder_reason.empty() ? "HDF5 decodes it" : info.decoder_reason;
        }
        if (info.layout == "virtual") {
          for (const auto& v : list_virtual_sources(target.file, name)) {
            if (v.file == ".") continue;
            // A source in a folder: the folder travels; one beside the file: itself ("/" before).
            const auto folder = std::filesystem::path(v.file).parent_path();
            travels.insert(folder.empty() ? v.file : folder.string() + "/");
          }
        }
      } catch (const std::exception&) {
        // described before: nothing more to say
      }
    }
    const auto travel_note =
        travels.empty()
            ? std::string()
            : fmt::format("; virtual: copy {} with the file, or h5py reads zeros there",
                          travels.size() <= 3 ? fmt::format("{}", fmt::join(travels, ", "))
                                              : fmt::format("the {} folders of its sources", travels.size()));
    problems += found.size();
    auto j = json_name(name);
    if (!also.empty()) j["also"] = also;
    const auto shown = also.empty() ? name : fmt::format("{} (also {})", name, fmt::join(also, ", "));
    j["ok"] = found.empty();
    if (!skipped_because.empty()) {
      ++skipped;
      j["skipped"] = skipped_because;
      if (!verify_options.json) print_line(stdout, "skipped: {}: {}", shown, skipped_because);
    } else if (found.empty()) {
      if (!read.empty()) j["read"] = read;
      if (!hdf5_only.empty()) j["checked_only_by_hdf5"] = hdf5_only;
      if (!travels.empty()) j["travels_with"] = travels;
      if (verify_options.json) {
        // the JSON entry is complete
      } else if (!hdf5_only.empty()) {
        print_line(stdout, "ok: {} ({}; its stored bytes were checked only by HDF5's decoders: {}{})", shown,
                   read.empty() ? "every byte read" : read, hdf5_only, travel_note);
      } else if (!read.empty() || !travels.empty()) {
        print_line(stdout, "ok: {} ({})", shown,
                   read.empty() ? travel_note.substr(2) : fmt::format("{}{}", read, travel_note));
      } else {
        print_line(stdout, "ok: {}", shown);
      }
    } else {
      if (!verify_options.json) {
        for (const auto& p : found) print_line(stdout, "problem: {}: {}", shown, p);
      }
    }
    j["problems"] = found;
    if (verify_options.json) out["datasets"].push_back(std::move(j));
  }
  if (verify_options.json) {
    out["ok"] = problems == 0;
    out["skipped"] = skipped;
    fmt::print("{}\n", json_text(out));
  }
  return problems == 0 ? kOk : kProblem;
}

}  // namespace

void add_verify(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "verify",
      "Check that a dataset is whole: every virtual source present, readable, of the right dtype and shape, "
      "covering the dataset exactly once, and (files h5tile wrote) its tile index agreeing with the mapping "
      "and its h5tile_shape attribute with HDF5's shape");
  cmd->add_option("target", verify_options.target,
                  "FILE or FILE:/DATASET (FILE: a path, or an http:// or https:// URL)")
      ->required();
  cmd->add_flag("--read", verify_options.read,
                "also read every stored byte, checking stored checksums (of a sparse chunked dataset, only its "
                "allocated chunks: the rest is the fill value, which nothing stores)");
  cmd->add_flag("--json", verify_options.json, "print JSON (for scripts)");
  cmd->add_flag("--no-probe", verify_options.no_probe,
                "open the file in this process only (by default its metadata is first opened in a child "
                "process, so that HDF5 crashing or hanging on a damaged file is reported as a problem)");
  cmd->footer(
      "Exit code 0 when no problem is found, 1 otherwise (one 'problem:' line each). Datasets of a type\n"
      "h5tile does not read (compounds, arrays), or whose link name a path cannot spell (such as '..'),\n"
      "are listed as 'skipped:' and are not problems. Names are printed with control characters, bytes\n"
      "that are not UTF-8 and backslashes escaped (\\n, \\x1b, \\xff, \\\\), so every line is the command's;\n"
      "--json gives them exactly (\"name\", and \"name_hex\" for a name that is not UTF-8).\n"
      "Whatever H5TILE_PROBE says, verify probes each dataset in a child process first (HDF5 1.10 crashes\n"
      "or loops on some damaged files): a crash or a probe that takes more than H5TILE_PROBE_TIMEOUT\n"
      "seconds (60) is a problem of that dataset; --no-probe skips the probe.\n"
      "With --read, a dataset whose chunks HDF5 decodes itself (H5TILE_RAW_IO=0, or a filter h5tile does not\n"
      "decode) is read in a child process first (unless --no-probe): HDF5 crashing on a damaged chunk is a\n"
      "problem of that dataset, and the 'ok:' line says that only HDF5's decoders checked its bytes.\n"
      "Examples:\n"
      "  h5tile verify out.h5                  every dataset, metadata only\n"
      "  h5tile verify out.h5:/data --read     and read every byte");
  cmd->callback([] { selected_command() = run_verify; });
}

}  // namespace h5tile::cli
