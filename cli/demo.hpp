#pragma once
#include <CLI/CLI.hpp>

namespace h5tile::cli {

// Registers `h5tile demo`.
void add_demo(CLI::App& app);
// Runs the subcommand that was parsed; returns the exit code.
int run_selected(CLI::App& app);

}  // namespace h5tile::cli
