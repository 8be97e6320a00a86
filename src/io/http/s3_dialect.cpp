#include "io/http/s3_dialect.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <h5tile/error.hpp>

#include "io/http/url.hpp"

namespace h5tile::detail {
namespace {

// A variable set to the empty string counts as unset, as the AWS SDKs treat it.
std::string_view get(const s3::Environment& env, std::string_view name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string_view{} : std::string_view{it->second};
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// "scheme://rest" -> rest, or nothing when the URL has another scheme (compared without case).
bool strip_scheme(std::string_view& url, std::string_view scheme) {
  const auto sep = url.find("://");
  if (sep == std::string_view::npos || lower(url.substr(0, sep)) != scheme) {
    return false;
  }
  url.remove_prefix(sep + 3);
  return true;
}

// S3's rules for bucket names: 3-63 characters of a-z 0-9 . -, starting and ending with a
// letter or digit.
bool valid_bucket(std::string_view b) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return b.size() >= 3 && b.size() <= 63 && alnum(b.front()) && alnum(b.back()) &&
         std::ranges::all_of(b, [&](char c) { return alnum(c) || c == '.' || c == '-'; });
}

bool valid_region(std::string_view r) {
  return !r.empty() &&
         std::ranges::all_of(r, [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

// AWS_NO_SIGN_REQUEST: yes/true/1 (any case) signs nothing; no/false/0 or unset signs.
bool no_sign_request(const s3::Environment& env, std::string_view url) {
  const std::string v = lower(get(env, "AWS_NO_SIGN_REQUEST"));
  if (v.empty() || v == "no" || v == "false" || v == "0") {
    return false;
  }
  if (v == "yes" || v == "true" || v == "1") {
    return true;
  }
  throw InvalidArgument(
      fmt::format("AWS_NO_SIGN_REQUEST must be YES or NO (or true/false, 1/0), not '{}' (reading '{}')",
                  get(env, "AWS_NO_SIGN_REQUEST"), url));
}

bool holds_control_character(std::string_view value) {
  return std::ranges::any_of(value, [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

std::string trim_trailing_slashes(std::string_view s) {
  while (!s.empty() && s.back() == '/') {
    s.remove_suffix(1);
  }
  return std::string(s);
}

}  // namespace

namespace s3 {

std::string encode_path(std::string_view path) { return percent_encoded(path, "/"); }

Location parse_url(std::string_view url) {
  std::string_view rest = url;
  if (!strip_scheme(rest, "s3")) {
    throw InvalidArgument(fmt::format("'{}' is not an s3:// URL", url));
  }
  const auto slash = rest.find('/');
  const std::string_view bucket = rest.substr(0, slash);
  if (!valid_bucket(bucket)) {
    throw InvalidArgument(fmt::format(
        "'{}': bucket name '{}' is not one S3 accepts (3-63 characters of a-z, 0-9, '.' and '-')", url, bucket));
  }
  const std::string_view key = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (key.empty()) {
    throw InvalidArgument(fmt::format("'{}' names a bucket, not an object: expected s3://bucket/key", url));
  }
  return {std::string(bucket), std::string(key)};
}

Request resolve(std::string_view url, const Environment& env) {
  const Location loc = parse_url(url);
  Request req;
  const char* region_from = "AWS_REGION";
  req.region = get(env, "AWS_REGION");
  if (req.region.empty()) {
    region_from = "AWS_DEFAULT_REGION";
    req.region = get(env, "AWS_DEFAULT_REGION");
  }
  if (req.region.empty()) {
    req.region = "us-east-1";
  } else if (!valid_region(req.region)) {
    throw InvalidArgument(fmt::format("{} '{}' is not an AWS region name (a-z, 0-9 and '-') (reading '{}')",
                                      region_from, req.region, url));
  }

  std::string_view endpoint = get(env, "AWS_ENDPOINT_URL_S3");
  const char* endpoint_from = "AWS_ENDPOINT_URL_S3";
  if (endpoint.empty()) {
    endpoint = get(env, "AWS_ENDPOINT_URL");
    endpoint_from = "AWS_ENDPOINT_URL";
  }
  const std::string key = encode_path(loc.key);
  if (!endpoint.empty()) {
    std::string_view rest = endpoint;
    if (!strip_scheme(rest, "http") && !strip_scheme(rest, "https")) {
      throw InvalidArgument(
          fmt::format("{} '{}' must start with http:// or https:// (reading '{}')", endpoint_from, endpoint, url));
    }
    req.url = fmt::format("{}/{}/{}", trim_trailing_slashes(endpoint), loc.bucket, key);
  } else if (loc.bucket.find('.') != std::string::npos) {
    req.url = fmt::format("https://s3.{}.amazonaws.com/{}/{}", req.region, loc.bucket, key);
  } else {
    req.url = fmt::format("https://{}.s3.{}.amazonaws.com/{}", loc.bucket, req.region, key);
  }

  if (no_sign_request(env, url)) {
    req.anonymous = true;
    return req;
  }
  const std::string_view id = get(env, "AWS_ACCESS_KEY_ID");
  const std::string_view secret = get(env, "AWS_SECRET_ACCESS_KEY");
  if (id.empty() && secret.empty()) {
    throw InvalidArgument(
        fmt::format("no AWS credentials for '{}': set AWS_ACCESS_KEY_ID and "
                    "AWS_SECRET_ACCESS_KEY, or AWS_NO_SIGN_REQUEST=YES for a public bucket",
                    url));
  }
  if (id.empty() || secret.empty()) {
    throw InvalidArgument(fmt::format("{} is set but {} is not (reading '{}')",
                                      id.empty() ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID",
                                      id.empty() ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY", url));
  }
  // Each of these ends up in a request header (Authorization, x-amz-security-token): a CR or LF
  // in one would end that header and start another, chosen by whoever set the variable.
  for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}) {
    if (holds_control_character(get(env, name))) {
      throw InvalidArgument(
          fmt::format("{} holds a control character (a CR, LF, tab or other byte below 0x20), "
                      "which no credential does and no request header may carry (reading '{}')",
                      name, url));
    }
  }
  if (id.find(':') != std::string_view::npos) {
    // libcurl splits USERPWD at the first ':'; an access key ID never holds one.
    throw InvalidArgument(
        fmt::format("AWS_ACCESS_KEY_ID holds a ':', which no access key ID does (reading '{}')", url));
  }
  req.aws_sigv4 = fmt::format("aws:amz:{}:s3", req.region);
  req.userpwd = fmt::format("{}:{}", id, secret);
  req.headers.push_back(fmt::format("x-amz-content-sha256: {}", kEmptyPayloadSha256));
  if (const std::string_view token = get(env, "AWS_SESSION_TOKEN"); !token.empty()) {
    req.headers.push_back(fmt::format("x-amz-security-token: {}", token));
    req.session_token = true;
  }
  const std::string_view from = get(env, "h5tile:credentials-from");
  req.credentials =
      fmt::format("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY{}{}", req.session_token ? " and AWS_SESSION_TOKEN" : "",
                  from.empty() ? std::string() : fmt::format(" from {}", from));
  return req;
}

std::string Request::describe() const {
  if (anonymous) {
    return fmt::format("GET {} (unsigned)", url);
  }
  return fmt::format(
      "GET {} (signed {}{})", url, aws_sigv4,
      std::ranges::any_of(headers, [](const std::string& h) { return h.starts_with("x-amz-security-token"); })
          ? ", with a session token"
          : "");
}

}  // namespace s3

namespace webhdfs {

Location parse_url(std::string_view url) {
  std::string_view rest = url;
  std::string scheme;
  if (strip_scheme(rest, "webhdfs")) {
    scheme = "http";
  } else if (strip_scheme(rest, "swebhdfs")) {
    scheme = "https";
  } else {
    throw InvalidArgument(fmt::format("'{}' is not a webhdfs:// or swebhdfs:// URL", url));
  }
  const auto slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  if (authority.empty() || authority.front() == ':' || authority.find('@') != std::string_view::npos) {
    throw InvalidArgument(fmt::format("'{}': expected webhdfs://host:port/path", url));
  }
  const std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (path.size() <= 1) {
    throw InvalidArgument(fmt::format("'{}' names no file: expected webhdfs://host:port/path", url));
  }
  return {fmt::format("{}://{}", scheme, authority), std::string(path)};
}

std::string open_url(const Location& location, std::uint64_t offset, std::uint64_t length) {
  return fmt::format("{}/webhdfs/v1{}?op=OPEN&offset={}&length={}", location.base, s3::encode_path(location.path),
                     offset, length);
}

std::string status_url(const Location& location) {
  return fmt::format("{}/webhdfs/v1{}?op=GETFILESTATUS", location.base, s3::encode_path(location.path));
}

std::optional<FileStatus> parse_file_status(std::string_view body, std::string& error) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    error = "the GETFILESTATUS answer is not a JSON object";
    return std::nullopt;
  }
  const auto status = json.find("FileStatus");
  if (status == json.end() || !status->is_object()) {
    error = "the GETFILESTATUS answer has no FileStatus";
    return std::nullopt;
  }
  if (const auto type = status->find("type"); type != status->end() && *type != "FILE") {
    error = fmt::format("it is not a file (FileStatus.type {})", type->dump());
    return std::nullopt;
  }
  const auto length = status->find("length");
  if (length == status->end() || !length->is_number_unsigned()) {
    error = "the GETFILESTATUS answer has no FileStatus.length";
    return std::nullopt;
  }
  FileStatus out{.length = length->get<std::uint64_t>()};
  if (const auto time = status->find("modificationTime"); time != status->end() && time->is_number_unsigned()) {
    out.modification_time = time->get<std::uint64_t>();
  }
  return out;
}

}  // namespace webhdfs
}  // namespace h5tile::detail
