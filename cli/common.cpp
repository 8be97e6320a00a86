#include "common.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

namespace h5tile::cli {
namespace {

std::atomic<bool> interrupted{false};

void on_interrupt(int) { interrupted = true; }

// The code point of the well-formed UTF-8 sequence at text[i] and its length in bytes; length 0
// where the bytes there are not one (a stray continuation byte, an overlong form, a surrogate,
// past U+10FFFF, cut short).
struct Decoded {
  char32_t code = 0;
  std::size_t length = 0;
};
Decoded decode_utf8(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  std::size_t length = 0;
  char32_t code = 0;
  unsigned low = 0x80;  // the range of the second byte (narrower after E0, ED, F0, F4)
  unsigned high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, code = lead & 0x0Fu;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, code = lead & 0x07u;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return {};
  }
  if (i + length > text.size()) return {};
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned next = byte(i + k);
    if (next < (k == 1 ? low : 0x80u) || next > (k == 1 ? high : 0xBFu)) return {};
    code = (code << 6) | (next & 0x3Fu);
  }
  return {code, length};
}

// Code points that are not C0/C1 controls but still change how a line reads: line and
// paragraph separators, and the bidirectional marks, embeddings, overrides and isolates that
// reorder what follows them ("Trojan source").
bool invisible_control(char32_t code) {
  return code == 0x200E || code == 0x200F || code == 0x2028 || code == 0x2029 || (code >= 0x202A && code <= 0x202E) ||
         (code >= 0x2066 && code <= 0x2069);
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto [code, length] = decode_utf8(text, i);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    switch (code) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (code < 0x20 || code == 0x7F) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned>(code));
        } else if ((code >= 0x80 && code <= 0x9F) || invisible_control(code)) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(code));
        } else {
          out.append(text.substr(i, length));
        }
    }
    i += length;
  }
  return out;
}

bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto length = decode_utf8(text, i).length;
    if (length == 0) return false;
    i += length;
  }
  return true;
}

bool unreachable_by_path(std::string_view name) {
  std::size_t pos = !name.empty() && name[0] == '/' ? 1 : 0;
  while (pos <= name.size()) {
    const auto slash = std::min(name.find('/', pos), name.size());
    const auto part = name.substr(pos, slash - pos);
    if (part.empty() || part == "." || part == "..") return true;
    pos = slash + 1;
  }
  return false;
}

nlohmann::json json_name(const std::string& name) {
  nlohmann::json j{{"name", name}};
  if (!is_utf8(name)) {
    std::string hex;
    for (const char c : name) hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
    j["name_hex"] = hex;
  }
  return j;
}

std::string json_text(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

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

namespace {

// The --compression and --level help, from the codec table: "gzip, zstd, lz4, blosc (the last
// three as hdf5plugin), or none"; "gzip 0 to 9 (default 4), zstd -131072 to 22 (3), ...".
std::string compressor_names_help() {
  std::vector<std::string> names;
  for (const auto& c : known_compressors()) names.emplace_back(c.name);
  return fmt::format("compress the chunks: {} (all but the first as hdf5plugin), or none", fmt::join(names, ", "));
}
std::string level_help() {
  std::vector<std::string> levels;
  std::vector<std::string> none;
  for (const auto& c : known_compressors()) {
    if (c.has_level) {
      levels.push_back(
          fmt::format("{} {} to {} (default {})", c.name, c.lowest_level, c.highest_level, c.default_level));
    } else {
      none.emplace_back(c.name);
    }
  }
  return fmt::format(
      "the compressor's level: {}{}", fmt::join(levels, ", "),
      none.empty() ? "" : fmt::format("; {} take{} none", fmt::join(none, ", "), none.size() == 1 ? "s" : ""));
}

// "gzip, zstd, lz4 or blosc".
std::string compressor_list() {
  std::vector<std::string> names;
  for (const auto& c : known_compressors()) names.emplace_back(c.name);
  const auto last = names.back();
  names.pop_back();
  return fmt::format("{} or {}", fmt::join(names, ", "), last);
}

}  // namespace

void add_compression_options(CLI::App& cmd, CompressionCli& options) {
  cmd.add_option("--compression", options.compressor, compressor_names_help())
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
  cmd.add_option("--level", options.level, level_help());
  cmd.add_flag("--shuffle", options.shuffle,
               "shuffle the bytes of each element before compressing (blosc: its own shuffle)");
  cmd.add_flag("--fletcher32", options.fletcher32, "add a Fletcher-32 checksum to every chunk");
}

void check_compression_options(const CLI::App& cmd, const CompressionCli& options,
                               const std::vector<std::string>& also) {
  if (options.compressor != "none") return;
  std::vector<std::string> given;
  for (const auto& name : {std::string("--level"), std::string("--shuffle")}) {
    if (cmd.count(name) > 0) given.push_back(name);
  }
  for (const auto& name : also) {
    if (cmd.count(name) > 0) given.push_back(name);
  }
  if (given.empty()) return;
  throw CLI::ValidationError(fmt::format("{} appl{} only with --compression ({}), which was not given",
                                         fmt::join(given, ", "), given.size() == 1 ? "ies" : "y", compressor_list()));
}

namespace {

// Where a URL's query string or fragment starts (npos: none, or an s3:// URL, whose key may hold
// '?' and '#'), so that the dataset is never looked for inside it: a presigned URL's query holds
// ':' ("se=2026-01-01T00:00:00Z") and even ":/" ("next=https://x/y").
std::size_t query_start(const std::string& text) {
  const auto scheme = text.find("://");
  if (scheme == std::string::npos) return std::string::npos;
  std::string name = text.substr(0, scheme);
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "s3") return std::string::npos;
  return text.find_first_of("?#", scheme + 3);
}

}  // namespace

Target parse_target(const std::string& text) {
  // A URL with a query string, which is never split (any value may hold ':' or ":/"): URL?QUERY
  // is the whole file, URL:/DATASET?QUERY one of its datasets. A query holding ":/" (not "://")
  // with no dataset before it could be either "URL?QUERY" or the dataset written after the query,
  // as earlier versions read it: refused, saying how to write each.
  if (const auto query = query_start(text); query != std::string::npos) {
    auto [file, dataset] = parse_target(text.substr(0, query));
    if (dataset == "/") dataset.clear();  // URL:/?QUERY: the root, the whole file
    for (auto colon = text.find(":/", query);
         dataset.empty() && text.compare(query - 2, 2, ":/") != 0 && colon != std::string::npos;
         colon = text.find(":/", colon + 1)) {
      if (text.compare(colon, 3, "://") == 0) continue;
      throw CLI::ValidationError(
          fmt::format("'{}': its query string holds ':/', and a query is never split: give a dataset before the query "
                      "({}:/DATASET?...), or the root for the whole file ({}:/?...)",
                      h5tile::without_secrets(text), h5tile::without_secrets(file), h5tile::without_secrets(file)));
    }
    return {file + text.substr(query), dataset};
  }
  // FILE:/DATASET; the "://" after a URL's scheme is not the separator.
  auto colon = text.rfind(":/");
  while (colon != std::string::npos && text.compare(colon, 3, "://") == 0) {
    colon = colon == 0 ? std::string::npos : text.rfind(":/", colon - 1);
  }
  if (colon != std::string::npos) return {text.substr(0, colon), text.substr(colon + 1)};
  // FILE:DATASET without the leading '/' ("f.h5:grp/temp", as the Python functions take
  // "grp/temp"): the last ':' separates, but not one in a URL's scheme or host:port, and not
  // where the whole text names a file (a ':' in a file name) or what is before it names none.
  const auto last = text.rfind(':');
  if (last == std::string::npos || last == 0 || last + 1 == text.size()) return {text, ""};
  if (const auto scheme = text.find("://"); scheme != std::string::npos) {
    const auto path = text.find('/', scheme + 3);
    if (path == std::string::npos || last < path) return {text, ""};
  } else {
    std::error_code ec;
    if (std::filesystem::exists(text, ec) || !std::filesystem::exists(text.substr(0, last), ec)) return {text, ""};
  }
  return {text.substr(0, last), "/" + text.substr(last + 1)};
}

std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates) {
  // Optimal string alignment distance: three rows of the dynamic programme.
  const auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      current[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
          current[j] = std::min(current[j], before[j - 2] + 1);
        }
      }
      before.swap(previous);
      previous.swap(current);
    }
    return previous[b.size()];
  };
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& c : candidates) {
    const auto d = distance(word, c);
    if (d < best_distance && d < word.size()) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string json_error(std::string_view message, int exit_code) {
  return json_text(nlohmann::json{{"error", std::string(message)}, {"exit_code", exit_code}});
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
    auto from = shown.size() - (width - fixed - kMinBar - 3);
    while (from < shown.size() && (static_cast<unsigned char>(shown[from]) & 0xC0u) == 0x80u) ++from;  // whole UTF-8
    shown = "..." + shown.substr(from);
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

ProgressBar::ProgressBar(const std::string& label)
    : label_(printable(label)), start_(std::chrono::steady_clock::now()), enabled_(::isatty(STDERR_FILENO) != 0) {
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
