#include "common.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

namespace h5tile::cli {
namespace {

std::atomic<bool> interrupted{false};

void on_interrupt(int) { interrupted = true; }

}  // namespace

std::function<int()>& selected_command() {
  static std::function<int()> command;
  return command;
}

int run_selected() {
  // Every subcommand checks the whole environment first, the same way: a bad variable is an
  // error naming it whether or not this subcommand would have read it.
  settings::check_environment();
  (void)progress_after_seconds();
  return selected_command() ? selected_command()() : kUsage;
}

double progress_after_seconds() {
  const char* text = std::getenv("H5TILE_PROGRESS_AFTER");
  if (text == nullptr || *text == '\0') return 1.0;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !(seconds >= 0) || seconds > 1e9) {
    throw InvalidArgument(
        fmt::format("environment variable H5TILE_PROGRESS_AFTER='{}' must be a number of seconds from 0 to 1e9", text));
  }
  return seconds;
}
Compression CompressionCli::value() const { return {compressor_from_name(compressor), level, shuffle, fletcher32}; }

void add_compression_options(CLI::App& cmd, CompressionCli& options) {
  cmd.add_option("--compression", options.compressor,
                 "compress the chunks: gzip, zstd, lz4, blosc (the last three as hdf5plugin), or none")
      ->check(CLI::Validator(
          [](std::string& name) {
            try {
              (void)compressor_from_name(name);
              return std::string();
            } catch (const std::exception& e) {
              return std::string(e.what());
            }
          },
          "NAME"))
      ->capture_default_str();
  cmd.add_option("--level", options.level,
                 "the compressor's level (gzip and blosc 0-9, zstd -131072 to 22; default: gzip 4, zstd 3, blosc 5)");
  cmd.add_flag("--shuffle", options.shuffle,
               "shuffle the bytes of each element before compressing (blosc: its own shuffle)");
  cmd.add_flag("--fletcher32", options.fletcher32, "add a Fletcher-32 checksum to every chunk");
}

Target parse_target(const std::string& text) {
  // FILE:/DATASET; the "://" after a URL's scheme is not the separator.
  auto colon = text.rfind(":/");
  while (colon != std::string::npos && text.compare(colon, 3, "://") == 0) {
    colon = colon == 0 ? std::string::npos : text.rfind(":/", colon - 1);
  }
  if (colon == std::string::npos) {
    return {text, ""};
  }
  return {text.substr(0, colon), text.substr(colon + 1)};
}

std::string human_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.2f} kB", b / 1e3);
  return fmt::format("{} B", bytes);
}

std::string human_seconds(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto whole = static_cast<std::uint64_t>(seconds + 0.5);
  if (whole < 3600) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, whole / 60 % 60);
}

std::string progress_line(const std::string& label, std::uint64_t done, std::uint64_t total, double elapsed_seconds,
                          bool final, std::size_t width) {
  const double fraction = total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 1.0;
  const double rate = elapsed_seconds > 0 ? static_cast<double>(done) / elapsed_seconds : 0;
  std::string when;
  if (final) {
    when = fmt::format(", in {}", human_seconds(elapsed_seconds));
  } else if (done > 0 && done < total && rate > 0) {
    when = fmt::format(", {} left", human_seconds(static_cast<double>(total - done) / rate));
  } else if (done >= total) {
    when = ", finishing";  // every byte moved; flushing to disk, committing
  }
  const auto stats = fmt::format(" {:3.0f}% {} of {}, {:.2f} GB/s{}", fraction * 100, human_bytes(done),
                                 human_bytes(total), rate / 1e9, when);
  // The bar takes what the label and the figures leave, between 10 and 30 characters; a long
  // label is cut (from the left: the end of a dataset path says the most).
  constexpr std::size_t kMinBar = 10;
  constexpr std::size_t kMaxBar = 30;
  std::string shown = label;
  const std::size_t fixed = stats.size() + 3;  // " [" and "]"
  if (shown.size() + fixed + kMinBar > width && width > fixed + kMinBar + 3) {
    shown = "..." + shown.substr(shown.size() - (width - fixed - kMinBar - 3));
  }
  const std::size_t room = width > shown.size() + fixed ? width - shown.size() - fixed : 0;
  const std::size_t bar = std::min(kMaxBar, room);
  std::string line = shown;
  if (bar >= kMinBar) {
    const auto filled = static_cast<std::size_t>(fraction * static_cast<double>(bar));
    line += fmt::format(" [{}{}]", std::string(filled, '#'), std::string(bar - filled, ' '));
  }
  line += stats;
  if (line.size() > width) line.resize(width);
  return line;
}

CLI::Validator size_check() {
  return CLI::Validator(
      [](std::string& text) {
        try {
          (void)settings::parse_size(text);
          return std::string();
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
      },
      "SIZE");
}

std::uint64_t size_of(const std::string& text) { return settings::parse_size(text); }

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), start_(std::chrono::steady_clock::now()), enabled_(::isatty(STDERR_FILENO) != 0) {
  after_seconds_ = progress_after_seconds();
  interrupted = false;
  std::signal(SIGINT, on_interrupt);
}

ProgressBar::~ProgressBar() {
  std::signal(SIGINT, SIG_DFL);
  finish();
}

ProgressCallback ProgressBar::callback() {
  return [this](std::uint64_t done, std::uint64_t total) {
    done_ = done;
    total_ = total;
    draw(done, total, false);
    return !interrupted.load();
  };
}

void ProgressBar::finish() {
  if (drawn_ && !finished_) {
    finished_ = true;
    draw(done_, total_, true);
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
}

void ProgressBar::draw(std::uint64_t done, std::uint64_t total, bool final) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!final && (!enabled_ || finished_ || elapsed < after_seconds_ ||
                 (drawn_ && now - last_draw_ < std::chrono::milliseconds(100) && done < total))) {
    return;
  }
  last_draw_ = now;
  drawn_ = true;
  std::size_t width = 80;
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) width = size.ws_col;
  // Carriage return, the line (one column short of the width, so that the cursor never wraps),
  // then clear to the end of the line: nothing of a longer earlier line stays.
  fmt::print(stderr, "\r{}\x1b[K", progress_line(label_, done, total, elapsed, final, width - 1));
  std::fflush(stderr);
}

}  // namespace h5tile::cli
