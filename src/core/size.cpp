// The one size syntax of h5tile: settings' environment variables and every size option of the
// h5tile command ("512M", "1.5G", "4096").
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

namespace h5tile::settings {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// log2 of the unit's factor: "" or "b" 0, "k" "kb" "kib" 10, ... "t" 40; -1 for anything else.
int unit_shift(std::string_view unit) {
  std::string u;
  for (const char c : unit) u.push_back(lower(c));
  if (u.empty() || u == "b") return 0;
  const auto prefix = std::string_view("kmgt").find(u[0]);
  if (prefix == std::string_view::npos) return -1;
  const auto rest = std::string_view(u).substr(1);
  if (!rest.empty() && rest != "b" && rest != "ib") return -1;
  return 10 * static_cast<int>(prefix + 1);
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  const auto fail = [&](std::string_view why) -> std::uint64_t {
    throw InvalidArgument(
        fmt::format("'{}' is not a size: {} (a number of bytes with an optional binary suffix K, "
                    "M, G or T, as in 4096, 512M, 1.5G or 2GiB; case does not matter)",
                    text, why));
  };
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  const auto whole = text.substr(0, i);
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') {
    const auto start = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    fraction = text.substr(start, i - start);
  }
  if (whole.empty() && fraction.empty()) {
    return fail(text.empty() ? "it is empty" : text[0] == '-' ? "it is negative" : "it does not start with a number");
  }
  auto unit = text.substr(i);
  if (unit.size() > 1 && unit.front() == ' ') unit.remove_prefix(1);  // "2 GiB"
  const int shift = unit_shift(unit);
  if (shift < 0) return fail(fmt::format("unknown unit '{}'", unit));

  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t value = 0;
  if (!whole.empty()) {
    const auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), value);
    if (ec != std::errc{} || end != whole.data() + whole.size() || value > (kMax >> shift)) {
      return fail("it is too large");
    }
  }
  value <<= shift;
  // The fraction, to whole bytes (rounded down); digits past the 12th do not count.
  std::uint64_t numerator = 0;
  std::uint64_t denominator = 1;
  for (const char c : fraction.substr(0, 12)) {
    numerator = numerator * 10 + static_cast<std::uint64_t>(c - '0');
    denominator *= 10;
  }
  const auto part =
      static_cast<std::uint64_t>(static_cast<long double>(numerator) / static_cast<long double>(denominator) *
                                 static_cast<long double>(std::uint64_t{1} << shift));
  if (part > kMax - value) return fail("it is too large");
  value += part;
  if (value == 0) return fail("it is zero");
  return value;
}

}  // namespace h5tile::settings
