#pragma once
// The S3 and WebHDFS dialects of the HTTP byte source, as pure functions: from a URL and the
// process's environment (passed in, never read here) to what an HTTP client needs: the URL to
// GET, and for S3 the values of libcurl's CURLOPT_AWS_SIGV4 and CURLOPT_USERPWD and the extra
// headers. No curl, no I/O. Messages name the URL and the variables involved, never a
// credential's value.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace h5tile::detail::s3 {

/// The environment variables of the AWS conventions (AWS_REGION, AWS_ENDPOINT_URL, ...), as
/// the API edge read them.
using Environment = std::map<std::string, std::string, std::less<>>;

/// `s3://bucket/key`, split. The key has no leading '/' and is not percent-encoded.
struct Location {
  std::string bucket;
  std::string key;
};

/// Splits an `s3://bucket/key` URL; throws InvalidArgument (naming the URL) for another scheme,
/// a bucket name S3 would refuse, or an empty key.
[[nodiscard]] Location parse_url(std::string_view url);

/// Everything a client needs to GET the object. `userpwd` holds the secret: pass it to libcurl
/// and nowhere else (it is not part of any message, and `describe()` leaves it out).
struct Request {
  std::string url;                   ///< the object's HTTP(S) URL, key percent-encoded
  std::string region;                ///< the signing region
  bool anonymous = false;            ///< true: send unsigned (AWS_NO_SIGN_REQUEST)
  std::string aws_sigv4;             ///< CURLOPT_AWS_SIGV4, "aws:amz:<region>:s3"; empty when anonymous
  std::string userpwd;               ///< CURLOPT_USERPWD, "<access key id>:<secret>"; empty when anonymous
  std::vector<std::string> headers;  ///< extra headers, "Name: value"
  std::string credentials;           ///< which credentials sign, for messages (never a value)
  bool session_token = false;        ///< whether a session token (temporary credentials) goes with them

  /// The request without its secrets, for messages and logs.
  [[nodiscard]] std::string describe() const;
};

/// SHA-256 of an empty body: the x-amz-content-sha256 of a GET or HEAD.
inline constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Resolves `s3://bucket/key` with the AWS conventions:
///  - endpoint: AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL, with path-style requests
///    (`<endpoint>/<bucket>/<key>`); otherwise virtual-hosted
///    `https://<bucket>.s3.<region>.amazonaws.com/<key>` (path-style on `s3.<region>.amazonaws.com`
///    for a bucket name with dots, which a wildcard certificate does not cover);
///  - region: AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1;
///  - credentials: anonymous when AWS_NO_SIGN_REQUEST is yes/true/1; otherwise
///    AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (both), and AWS_SESSION_TOKEN when set
///    (sent as x-amz-security-token, which libcurl then signs).
/// Throws InvalidArgument naming the URL and the variable (never its value where it is a secret).
[[nodiscard]] Request resolve(std::string_view url, const Environment& env);

/// Percent-encodes an object key or path for a URL: every byte but A-Z a-z 0-9 - . _ ~ and '/'.
[[nodiscard]] std::string encode_path(std::string_view path);

}  // namespace h5tile::detail::s3

namespace h5tile::detail::webhdfs {

/// `webhdfs://host:port/path` (HTTP) or `swebhdfs://host:port/path` (HTTPS), split.
struct Location {
  std::string base;  ///< "http://host:port" or "https://host:port"
  std::string path;  ///< "/path", not percent-encoded
};

/// Splits a WebHDFS URL; throws InvalidArgument (naming the URL) for another scheme, a missing
/// host or an empty path.
[[nodiscard]] Location parse_url(std::string_view url);

/// `<base>/webhdfs/v1<path>?op=OPEN&offset=<offset>&length=<length>`: `length` bytes from `offset`.
[[nodiscard]] std::string open_url(const Location& location, std::uint64_t offset, std::uint64_t length);

/// `<base>/webhdfs/v1<path>?op=GETFILESTATUS`: the file's status, its size as FileStatus.length.
[[nodiscard]] std::string status_url(const Location& location);

/// What GETFILESTATUS says of a file: `{"FileStatus": {"length": ..., "modificationTime": ...,
/// "type": "FILE", ...}}`.
struct FileStatus {
  std::uint64_t length = 0;
  std::uint64_t modification_time = 0;  ///< milliseconds since 1970 (0 where not given)
};

/// Parses the JSON body of a GETFILESTATUS answer; nullopt (with `error` saying why) for a body
/// that is not JSON, has no FileStatus.length, or describes a directory.
[[nodiscard]] std::optional<FileStatus> parse_file_status(std::string_view body, std::string& error);

}  // namespace h5tile::detail::webhdfs
