#pragma once
// What the subcommands share: FILE[:DATASET] arguments, the progress bar, and how a
// subcommand registers itself.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include <h5tile/options.hpp>

namespace h5tile::cli {

// The subcommand that was parsed sets this to its body (returns the exit code).
std::function<int()>& selected_command();
// Runs the subcommand that was parsed; returns its exit code (kUsage where none was). Checks
// every environment variable first (settings::check_environment, H5TILE_PROGRESS_AFTER): a bad
// one throws InvalidArgument naming it, in every subcommand alike.
[[nodiscard]] int run_selected();
// H5TILE_PROGRESS_AFTER: seconds before a progress bar appears (unset or empty: 1); throws
// InvalidArgument naming the variable for anything but a number from 0 to 1e9.
[[nodiscard]] double progress_after_seconds();

// Exit codes, as `h5tile --help` documents them.
inline constexpr int kOk = 0;
inline constexpr int kProblem = 1;
inline constexpr int kUsage = 2;
inline constexpr int kCancelled = 130;

// "file.h5:/data" -> {"file.h5", "/data"}; "file.h5" -> {"file.h5", ""}; "file.h5:grp/t" ->
// {"file.h5", "/grp/t"} where "file.h5" exists and "file.h5:grp/t" does not (a ':' inside a file
// name is kept). In a URL, the ':' of its scheme or port never separates, nor one in its query
// string: "URL?QUERY" is the whole file; its dataset goes before the query ("URL:/d?QUERY").
struct Target {
  std::string file;
  std::string dataset;
};
[[nodiscard]] Target parse_target(const std::string& text);

// A name, path or message as the command prints it in text mode. Names come from files, which
// anyone can write: a dataset named "x\nproblem: ..." must not add a line to `verify`'s report,
// nor a name with ESC sequences drive the terminal. So control characters become C-style
// escapes (\n, \r, \t, other C0 bytes, DEL and ESC as \x1b), C1 controls, line and paragraph
// separators and bidirectional controls become \u0085, \u2028, \u202e, bytes that are not UTF-8
// become \xff, and a backslash becomes \\ (so that an escape in the output always comes from
// the command: two different names never print the same). Other UTF-8 (non-ASCII names) is
// printed as it is.
[[nodiscard]] std::string printable(std::string_view text);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
[[nodiscard]] bool is_utf8(std::string_view text);

// Whether a dataset's full name, as list_datasets gives it, has a component that a dataset path
// cannot spell: "." (HDF5 skips it in paths), ".." (h5tile refuses it) or an empty one. HDF5
// allows such link names (h5py's low-level API makes them); h5py reaches them, h5tile does not.
[[nodiscard]] bool unreachable_by_path(std::string_view name);

// The candidate nearest to `word` by edit distance (insertions, deletions, substitutions and
// swaps of neighbours, each 1), where it is at most 2 (and less than the word's length): what a
// mistyped subcommand probably meant. "" where none is that near.
[[nodiscard]] std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

// The error of a failed --json run, as JSON on stdout: {"error": message, "exit_code": code}
// (scripts reading stdout get JSON whatever happened).
[[nodiscard]] std::string json_error(std::string_view message, int exit_code);

// Prints one line (a newline is added) to `out`, the whole formatted text passed through
// printable(): every line the command prints in text mode goes through here.
template <typename... Args>
void print_line(std::FILE* out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::print(out, "{}\n", printable(fmt::format(format, std::forward<Args>(args)...)));
}

// {"name": name}, and where the name is not UTF-8 (JSON strings are Unicode), "name_hex": its
// bytes in hex, so that a script can recover the exact name (json_text shows the invalid bytes
// of "name" as U+FFFD).
[[nodiscard]] nlohmann::json json_name(const std::string& name);

// The JSON text printed by --json: indented, never failing on bytes that are not UTF-8 (they
// become U+FFFD; names carry name_hex for that).
[[nodiscard]] std::string json_text(const nlohmann::json& value);

// A progress bar on stderr, drawn only when stderr is a terminal and the operation has run
// for longer than H5TILE_PROGRESS_AFTER seconds (default 1). Ctrl-C cancels the operation.
// Each redraw rewrites and clears the whole line (no leftovers when it gets shorter) and fits
// it to the terminal's width:
//   write [#########           ]  31% 1.32 GB of 4.29 GB, 2.10 GB/s, 1.4 s left
// At 100% (while a write is flushed and committed) it says "finishing".
// finish() ends the line (shown complete, with the time taken); call it before printing the
// result, so that the result gets a line of its own. The destructor ends the line too.
class ProgressBar {
 public:
  explicit ProgressBar(const std::string& label);  // printed through printable()
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar();
  // The callback to pass in options: draws the bar, returns false after Ctrl-C.
  [[nodiscard]] ProgressCallback callback();
  // Ends the bar's line (once drawn): redraws it with the last count and a newline.
  void finish();

 private:
  void draw(std::uint64_t done, std::uint64_t total, bool final);
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  double after_seconds_ = 1.0;
  bool enabled_ = false;
  bool drawn_ = false;
  bool finished_ = false;
  std::uint64_t done_ = 0;
  std::uint64_t total_ = 0;
};

// One progress line, without the terminal controls: "label [###   ]  50% 1.00 MB of 2.00 MB,
// 0.50 GB/s, 2.0 s left" (with `final`: "..., in 4.0 s"), at most `width` characters (the
// label is shortened first, then the bar).
[[nodiscard]] std::string progress_line(const std::string& label, std::uint64_t done, std::uint64_t total,
                                        double elapsed_seconds, bool final, std::size_t width);

// "1.5 s", "1 min 05 s", "2 h 03 min"
[[nodiscard]] std::string human_seconds(double seconds);

// A CLI11 check for size options: the syntax of h5tile::settings::parse_size ("512M", "1.5g").
[[nodiscard]] CLI::Validator size_check();
// The option's bytes (checked by size_check at parse time).
[[nodiscard]] std::uint64_t size_of(const std::string& text);

// "2.15 GB"
[[nodiscard]] std::string human_bytes(std::uint64_t bytes);

// The options of the commands that write chunks (consolidate, split, demo): --compression,
// --level, --shuffle, --fletcher32, checked by h5tile's own names and messages.
struct CompressionCli {
  std::string compressor = "none";
  int level = -1;
  bool shuffle = false;
  bool fletcher32 = false;
  [[nodiscard]] Compression value() const;
};
void add_compression_options(CLI::App& cmd, CompressionCli& options);
// Throws CLI::ValidationError naming the options of `cmd` given that apply only with a
// compressor (--level, --shuffle, and `also`) when --compression is none.
void check_compression_options(const CLI::App& cmd, const CompressionCli& options,
                               const std::vector<std::string>& also = {});

void add_demo(CLI::App& app);
void add_info(CLI::App& app);
void add_verify(CLI::App& app);
void add_consolidate(CLI::App& app);
void add_bench(CLI::App& app);
void add_uploads(CLI::App& app);

}  // namespace h5tile::cli
