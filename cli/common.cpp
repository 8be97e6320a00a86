#include "common.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace h5tile::cli {
namespace {

std::atomic<bool> interrupted{false};

void on_interrupt(int) { interrupted = true; }

}  // namespace

std::function<int()>& selected_command() {
  static std::function<int()> command;
  return command;
}

Target parse_target(const std::string& text) {
  const auto colon = text.rfind(":/");
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

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), start_(std::chrono::steady_clock::now()), enabled_(::isatty(STDERR_FILENO) != 0) {
  if (const char* after = std::getenv("H5TILE_PROGRESS_AFTER"); after != nullptr && *after != '\0') {
    after_seconds_ = std::atof(after);
  }
  interrupted = false;
  std::signal(SIGINT, on_interrupt);
}

ProgressBar::~ProgressBar() {
  std::signal(SIGINT, SIG_DFL);
  if (drawn_) {
    std::fputc('\n', stderr);
  }
}

ProgressCallback ProgressBar::callback() {
  return [this](std::uint64_t done, std::uint64_t total) {
    draw(done, total);
    return !interrupted.load();
  };
}

void ProgressBar::draw(std::uint64_t done, std::uint64_t total) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!enabled_ || elapsed < after_seconds_ ||
      (drawn_ && now - last_draw_ < std::chrono::milliseconds(100) && done < total)) {
    return;
  }
  last_draw_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  fmt::print(stderr, "\r{} [{}{}] {:3.0f}% {} of {}, {:.2f} GB/s ", label_,
             std::string(static_cast<std::size_t>(filled), '#'),
             std::string(static_cast<std::size_t>(kWidth - filled), ' '), fraction * 100, human_bytes(done),
             human_bytes(total), static_cast<double>(done) / elapsed / 1e9);
  std::fflush(stderr);
}

}  // namespace h5tile::cli
