// The h5tile command. Each subcommand lives in its own file and calls the public API; `bench`
// also times plain HDF5 calls and plain pread/pwrite loops, the peers and limits it compares with.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <h5tile/h5tile.hpp>

#include "common.hpp"

int main(int argc, char** argv) {
  CLI::App app{"h5tile: parallel HDF5 input and output of tiled arrays"};
  app.set_version_flag("--version", "h5tile " H5TILE_VERSION_STRING);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 success, 1 a check found a problem or an operation failed, 2 usage error,\n"
      "130 cancelled (Ctrl-C). Progress bars appear on stderr when it is a terminal and an\n"
      "operation runs longer than H5TILE_PROGRESS_AFTER seconds (default 1).\n"
      "Run 'h5tile SUBCOMMAND --help' for the options and examples of each subcommand.");
  h5tile::cli::add_demo(app);
  h5tile::cli::add_info(app);
  h5tile::cli::add_verify(app);
  h5tile::cli::add_consolidate(app);
  h5tile::cli::add_bench(app);
  h5tile::cli::add_uploads(app);
  // A mistyped subcommand ("inof"): CLI11 would only say that one is required.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const auto guess = h5tile::cli::nearest_name(argv[1], names);
      h5tile::cli::print_line(stderr, "h5tile: usage error: '{}' is not a subcommand; {}", argv[1],
                              guess.empty()
                                  ? fmt::format("they are {} ('h5tile --help' says more)", fmt::join(names, ", "))
                                  : fmt::format("did you mean '{}'? ('h5tile --help' lists them)", guess));
      return h5tile::cli::kUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  // With --json, an error is JSON on stdout too (scripts read stdout), besides the line on stderr.
  bool json = false;
  for (const auto* sub : app.get_subcommands()) {
    if (const auto* flag = sub->get_option_no_throw("--json"); flag != nullptr && flag->count() > 0) json = true;
  }
  const auto fail = [json](int code, std::string_view kind, const std::string& message) {
    if (json) {
      fmt::print("{}\n", h5tile::cli::json_error(message.empty() ? std::string(kind) : message, code));
      std::fflush(stdout);
    }
    h5tile::cli::print_line(stderr, "h5tile: {}{}{}", kind, message.empty() ? "" : ": ", message);
    return code;
  };
  try {
    return h5tile::cli::run_selected();
  } catch (const CLI::ValidationError& e) {
    return fail(h5tile::cli::kUsage, "usage error", e.what());
  } catch (const h5tile::Cancelled&) {
    return fail(h5tile::cli::kCancelled, "cancelled", "");
  } catch (const std::exception& e) {
    return fail(h5tile::cli::kProblem, "error", e.what());
  }
}
