#pragma once
// What the subcommands share: FILE[:DATASET] arguments, the progress bar, and how a
// subcommand registers itself.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include <h5tile/options.hpp>

namespace h5tile::cli {

// The subcommand that was parsed sets this to its body (returns the exit code).
std::function<int()>& selected_command();

// Exit codes, as `h5tile --help` documents them.
inline constexpr int kOk = 0;
inline constexpr int kProblem = 1;
inline constexpr int kUsage = 2;
inline constexpr int kCancelled = 130;

// "file.h5:/data" -> {"file.h5", "/data"}; "file.h5" -> {"file.h5", ""}. A ':' inside the file
// name is kept when what follows it is not a dataset path (does not start with '/').
struct Target {
  std::string file;
  std::string dataset;
};
[[nodiscard]] Target parse_target(const std::string& text);

// A progress bar on stderr, drawn only when stderr is a terminal and the operation has run
// for longer than H5TILE_PROGRESS_AFTER seconds (default 1). Ctrl-C cancels the operation.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar();
  // The callback to pass in options: draws the bar, returns false after Ctrl-C.
  [[nodiscard]] ProgressCallback callback();

 private:
  void draw(std::uint64_t done, std::uint64_t total);
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  double after_seconds_ = 1.0;
  bool enabled_ = false;
  bool drawn_ = false;
};

// "2.15 GB"
[[nodiscard]] std::string human_bytes(std::uint64_t bytes);

void add_info(CLI::App& app);
void add_verify(CLI::App& app);
void add_consolidate(CLI::App& app);
void add_bench(CLI::App& app);

}  // namespace h5tile::cli
