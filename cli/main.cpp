// The h5tile command. Each subcommand lives in its own file and uses only the public API.
#include <cstdio>
#include <exception>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <h5tile/h5tile.hpp>

#include "demo.hpp"

int main(int argc, char** argv) {
  CLI::App app{"h5tile: parallel HDF5 input and output of tiled arrays"};
  app.set_version_flag("--version", "h5tile 0.1.0");
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 success, 1 a check failed or an operation failed, 2 usage error.\n"
      "Run 'h5tile SUBCOMMAND --help' for the options and examples of each subcommand.");
  h5tile::cli::add_demo(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return h5tile::cli::run_selected(app);
  } catch (const std::exception& e) {
    fmt::print(stderr, "h5tile: error: {}\n", e.what());
    return 1;
  }
}
