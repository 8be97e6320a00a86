#include "io/http/url.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// "python": a file-like object's bytes, registered by name (io/remote.hpp: register_source).
constexpr std::array<std::string_view, 6> kSchemes = {"http", "https", "s3", "webhdfs", "swebhdfs", "python"};

}  // namespace

bool is_url(std::string_view text) noexcept {
  const auto colon = text.find("://");
  if (colon == std::string_view::npos) return false;
  std::string scheme;
  for (const char c : text.substr(0, colon))
    scheme.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return std::find(kSchemes.begin(), kSchemes.end(), scheme) != kSchemes.end();
}

std::optional<std::string> unsupported_scheme(std::string_view text) {
  const auto sep = text.find("://");
  if (sep == std::string_view::npos) return std::nullopt;
  const auto chain = text.substr(0, sep).find("::");  // fsspec: "simplecache::s3://..."
  const auto scheme = text.substr(chain == std::string_view::npos ? 0 : chain + 2,
                                  sep - (chain == std::string_view::npos ? 0 : chain + 2));
  const bool name = !scheme.empty() && std::isalpha(static_cast<unsigned char>(scheme.front())) != 0 &&
                    std::all_of(scheme.begin(), scheme.end(), [](unsigned char c) {
                      return std::isalnum(c) != 0 || c == '+' || c == '-' || c == '.';
                    });
  if (!name || (chain == std::string_view::npos && is_url(text))) return std::nullopt;
  return std::string(text.substr(0, sep));
}

std::optional<Url> parse_url(std::string_view text) {
  if (!is_url(text)) return std::nullopt;
  const auto colon = text.find("://");
  Url url;
  url.scheme = lower(text.substr(0, colon));
  auto rest = text.substr(colon + 3);
  // An S3 key is a name, not a path with a query: "s3://b/q?x=1.h5" is the key "q?x=1.h5" (as
  // boto3 and the AWS command read it), and its dialect encodes every '?' and '#' it holds.
  if (url.scheme != "s3") {
    if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
    if (const auto q = rest.find('?'); q != std::string_view::npos) {
      url.query = std::string(rest.substr(q + 1));
      rest = rest.substr(0, q);
    }
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

std::string redacted(const Url& url) {
  // An s3:// key's '?' and '#' are in its path: shown up to them, as without_secrets does.
  return without_secrets(url.scheme + "://" + url.authority + url.path);
}

std::string redacted(std::string_view text) {
  if (const auto url = parse_url(text)) return redacted(*url);
  auto shown = text.substr(0, text.find_first_of("?#"));
  if (const auto at = shown.find('@'); at != std::string_view::npos) shown = shown.substr(at + 1);
  return std::string(shown);
}

std::string object_name(const Url& url) {
  return url.scheme == "s3" ? url.scheme + "://" + url.authority + url.path : redacted(url);
}

std::string object_name(std::string_view path_or_url) {
  const auto url = parse_url(path_or_url);
  return url ? object_name(*url) : std::string(path_or_url);
}

std::string display_name(std::string_view path_or_url) {
  return is_url(path_or_url) ? redacted(path_or_url) : std::string(path_or_url);
}

std::string object_url(const Url& url) { return url.scheme + "://" + url.authority + url.path; }

std::string full_text(const Url& url) {
  std::string out = url.scheme + "://";
  if (!url.userinfo.empty()) out += url.userinfo + "@";
  out += url.authority + url.path;
  if (!url.query.empty()) out += "?" + url.query;
  return out;
}

std::string folder_of(const Url& url) { return url.path.substr(0, url.path.rfind('/') + 1); }

namespace {

// Whether `name` holds a percent-encoded dot, slash or backslash ("%2e", "%2F", "%5c", in any
// case): a name that some server, decoding it, would read as "." or ".." parts or as another
// folder. Refused outright, whatever the scheme, rather than trusting every server to decode once.
bool holds_encoded_separator(std::string_view name) {
  for (auto p = name.find('%'); p != std::string_view::npos && p + 2 < name.size(); p = name.find('%', p + 1)) {
    const std::string code = lower(name.substr(p + 1, 2));
    if (code == "2e" || code == "2f" || code == "5c") return true;
  }
  return false;
}

}  // namespace

std::string percent_encoded(std::string_view text, std::string_view keep) {
  static constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~' ||
        keep.find(ch) != std::string_view::npos) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::optional<Url> resolve_inside(const Url& base, std::string_view name) {
  if (name.empty() || name.front() == '/' || is_url(name) || name.find_first_of("?#\\") != std::string_view::npos ||
      holds_encoded_separator(name)) {
    return std::nullopt;
  }
  // http(s) paths are sent as they are, so each part is encoded here; the S3 and WebHDFS
  // dialects encode the whole path themselves (their URLs hold names, not encoded paths).
  const bool encode = base.scheme == "http" || base.scheme == "https";
  std::string path = folder_of(base);
  std::string_view rest = name;
  while (!rest.empty()) {
    const auto slash = rest.find('/');
    const auto part = rest.substr(0, slash);
    if (part.empty() || part == "." || part == ".." || part.find(':') != std::string_view::npos) return std::nullopt;
    if (std::any_of(part.begin(), part.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
      return std::nullopt;  // a control character: no file name a server would map
    }
    path += encode ? percent_encoded(part) : std::string(part);
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
    if (rest.empty()) return std::nullopt;  // a trailing '/': a folder
    path += '/';
  }
  Url resolved = base;
  resolved.path = std::move(path);
  resolved.query.clear();
  return resolved;
}

}  // namespace h5tile::detail
