#include "io/http/url.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace h5tile::detail {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

constexpr std::array<std::string_view, 5> kSchemes = {"http", "https", "s3", "webhdfs", "swebhdfs"};

}  // namespace

bool is_url(std::string_view text) noexcept {
  const auto colon = text.find("://");
  if (colon == std::string_view::npos) return false;
  std::string scheme;
  for (const char c : text.substr(0, colon))
    scheme.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return std::find(kSchemes.begin(), kSchemes.end(), scheme) != kSchemes.end();
}

std::optional<Url> parse_url(std::string_view text) {
  if (!is_url(text)) return std::nullopt;
  const auto colon = text.find("://");
  Url url;
  url.scheme = lower(text.substr(0, colon));
  auto rest = text.substr(colon + 3);
  if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  if (const auto q = rest.find('?'); q != std::string_view::npos) {
    url.query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  const auto slash = rest.find('/');
  auto authority = rest.substr(0, slash);
  url.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    url.userinfo = std::string(authority.substr(0, at));
    authority = authority.substr(at + 1);
  }
  if (authority.empty()) return std::nullopt;
  url.authority = std::string(authority);
  return url;
}

std::string redacted(const Url& url) { return url.scheme + "://" + url.authority + url.path; }

std::string redacted(std::string_view text) {
  if (const auto url = parse_url(text)) return redacted(*url);
  auto shown = text.substr(0, text.find_first_of("?#"));
  if (const auto at = shown.find('@'); at != std::string_view::npos) shown = shown.substr(at + 1);
  return std::string(shown);
}

std::string display_name(std::string_view path_or_url) {
  return is_url(path_or_url) ? redacted(path_or_url) : std::string(path_or_url);
}

std::string full_text(const Url& url) {
  std::string out = url.scheme + "://";
  if (!url.userinfo.empty()) out += url.userinfo + "@";
  out += url.authority + url.path;
  if (!url.query.empty()) out += "?" + url.query;
  return out;
}

std::string folder_of(const Url& url) { return url.path.substr(0, url.path.rfind('/') + 1); }

std::optional<Url> resolve_inside(const Url& base, std::string_view name) {
  if (name.empty() || name.front() == '/' || is_url(name) || name.find_first_of("?#\\") != std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view rest = name;
  while (!rest.empty()) {
    const auto slash = rest.find('/');
    const auto part = rest.substr(0, slash);
    if (part.empty() || part == "." || part == ".." || part.find(':') != std::string_view::npos) return std::nullopt;
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
    if (rest.empty()) return std::nullopt;  // a trailing '/': a folder
  }
  Url resolved = base;
  resolved.path = folder_of(base) + std::string(name);
  resolved.query.clear();
  return resolved;
}

}  // namespace h5tile::detail
