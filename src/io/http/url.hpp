#pragma once
// URLs where a path is read: which strings are URLs, their parts, and the form that messages
// show (no user information, query string or fragment: presigned URLs carry signatures there).

#include <optional>
#include <string>
#include <string_view>

namespace h5tile::detail {

struct Url {
  std::string scheme;     // lower case: "http", "https", "s3", "webhdfs", "swebhdfs"
  std::string authority;  // host[:port], without user information
  std::string path;       // from the first '/' after the authority ("/" where none)
  std::string query;      // after '?', without it ("" where none)
  std::string userinfo;   // before '@' in the authority ("" where none)
};

// Whether `text` starts with a URL scheme h5tile knows ("http://", "https://", "s3://",
// "webhdfs://", "swebhdfs://", in any case): a string read as a URL, not as a local path.
[[nodiscard]] bool is_url(std::string_view text) noexcept;

// The parts of `text`, or nullopt where it is not a URL with a scheme and a host.
[[nodiscard]] std::optional<Url> parse_url(std::string_view text);

// scheme://authority/path: the URL as messages show it.
[[nodiscard]] std::string redacted(const Url& url);
// The same for a string, parsed first; a string that does not parse shows up to its first '?'.
[[nodiscard]] std::string redacted(std::string_view text);

// How messages show a path the user gave: a URL redacted, any other string as it is (a local
// path may hold '?' or '@').
[[nodiscard]] std::string display_name(std::string_view path_or_url);

// The whole URL, as requests use it (user information and query string included).
[[nodiscard]] std::string full_text(const Url& url);

// The folder of `url` (its path up to and including the last '/'): what relative names of
// virtual sources resolve against, and what they must stay inside.
[[nodiscard]] std::string folder_of(const Url& url);

// `name` (a relative name: no scheme, not starting with '/', no "." or ".." parts, no '?' or
// '#', no ':') resolved against the folder of `base`, without the base's query string (a
// presigned URL's signature is for its own object); nullopt for any other name: confinement to
// the base's folder.
[[nodiscard]] std::optional<Url> resolve_inside(const Url& base, std::string_view name);

}  // namespace h5tile::detail
