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

// The scheme of `text` where it is written as a URL h5tile cannot read ("gs://", "az://",
// "file://", "ftp://", fsspec's chains such as "simplecache::s3://"), for a message that says so
// and lists the schemes h5tile reads (kSupportedSchemes); nullopt for a URL h5tile reads and for
// anything else (a local path).
[[nodiscard]] std::optional<std::string> unsupported_scheme(std::string_view text);
inline constexpr std::string_view kSupportedSchemes =
    "local paths and http://, https://, s3://, webhdfs:// and swebhdfs:// URLs";

// The parts of `text`, or nullopt where it is not a URL with a scheme and a host.
[[nodiscard]] std::optional<Url> parse_url(std::string_view text);

// scheme://authority/path: the URL as messages show it.
[[nodiscard]] std::string redacted(const Url& url);
// The same for a string, parsed first; a string that does not parse shows up to its first '?'.
[[nodiscard]] std::string redacted(std::string_view text);

// The name one object goes by inside h5tile (its byte source's name, the name HDF5 opens it by,
// what names are compared with): redacted(url), except for s3://, whose key is whole ("q?x=1.h5"
// and "q" are two objects). Messages pass it through without_secrets, which cuts it for display.
[[nodiscard]] std::string object_name(const Url& url);
// The same for a string: object_name of its URL, or the string itself where it is not one.
[[nodiscard]] std::string object_name(std::string_view path_or_url);

// How messages show a path the user gave: a URL redacted, any other string as it is (a local
// path may hold '?' or '@').
[[nodiscard]] std::string display_name(std::string_view path_or_url);

// The whole URL, as requests use it (user information and query string included).
[[nodiscard]] std::string full_text(const Url& url);
// scheme://authority/path: the object a URL names, without user information or query (an s3://
// key's '?' and '#' are in its path).
[[nodiscard]] std::string object_url(const Url& url);

// `text` with every byte but RFC 3986's unreserved characters (and those in `keep`) percent-
// encoded: a name as one part of a URL's path, so that a server decoding the path once finds
// exactly that name ('%' itself included: "a%41" stays three characters, never "A").
[[nodiscard]] std::string percent_encoded(std::string_view text, std::string_view keep = {});

// The folder of `url` (its path up to and including the last '/'): what relative names of
// virtual sources resolve against, and what they must stay inside.
[[nodiscard]] std::string folder_of(const Url& url);

// `name` (a relative name: no scheme, not starting with '/', no "." or ".." parts, no '?' or
// '#', no ':', no control character, no percent-encoded dot, slash or backslash) resolved
// against the folder of `base`, without the base's query string (a presigned URL's signature is
// for its own object); nullopt for any other name: confinement to the base's folder. For http(s)
// each part of the name is percent-encoded, so that the server, decoding the path, finds the
// file of exactly that name (the one HDF5 would open beside a local file).
[[nodiscard]] std::optional<Url> resolve_inside(const Url& base, std::string_view name);

}  // namespace h5tile::detail
