// The h5tile command. Each subcommand lives in its own file and calls the public API; `bench`
// also times plain HDF5 calls and plain pread/pwrite loops, the peers and limits it compares with.
#include <cstdio>
#include <exception>

#include <fmt/format.h>
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return h5tile::cli::run_selected();
  } catch (const CLI::ValidationError& e) {
    h5tile::cli::print_line(stderr, "h5tile: usage error: {}", e.what());
    return h5tile::cli::kUsage;
  } catch (const h5tile::Cancelled&) {
    fmt::print(stderr, "h5tile: cancelled\n");
    return h5tile::cli::kCancelled;
  } catch (const std::exception& e) {
    h5tile::cli::print_line(stderr, "h5tile: error: {}", e.what());
    return 1;
  }
}
