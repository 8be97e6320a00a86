#pragma once
// The dialects of the HTTP byte source: how one kind of server is asked for a range of an
// object, and what a good answer is. Plain HTTP(S) (presigned S3 URLs among them), S3 (SigV4
// signed, or anonymous) and WebHDFS differ only here; http_source.cpp does the transport
// (libcurl), the pool of connections, the retries and the checks of the body. Pure logic, no
// curl: unit-tested (tests/unit/http_dialect_test.cpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/http/http_policy.hpp"
#include "io/http/url.hpp"
#include "io/remote_options.hpp"

namespace h5tile::detail {

// One GET, as libcurl is to send it.
struct HttpRequest {
  std::string url{};                   // the whole URL (its query string may hold a signature: never in messages)
  bool range_header = true;            // send "Range: bytes=<first>-<last>" for the range asked
  std::vector<std::string> headers{};  // extra headers, "Name: value" (a session token among them)
  std::string aws_sigv4{};             // CURLOPT_AWS_SIGV4 ("": not signed)
  std::string userpwd{};               // CURLOPT_USERPWD (holds a secret: never in messages)
  bool follow_redirects = false;       // follow 3xx answers, to http:// and https:// URLs only
};

class HttpDialect {
 public:
  HttpDialect() = default;
  HttpDialect(const HttpDialect&) = delete;
  HttpDialect& operator=(const HttpDialect&) = delete;
  virtual ~HttpDialect() = default;

  // A request whose answer (a small body) says the object's size and version before any range
  // is read, or nullopt where the first ranged GET learns them from its Content-Range.
  [[nodiscard]] virtual std::optional<HttpRequest> status_request() const { return std::nullopt; }
  // Whether `head` answers the status request well (before its body is taken).
  [[nodiscard]] virtual Judgement judge_status(const ResponseHead& head) const;
  // The object's size and version from the status request's body; a Bad judgement for a body
  // that does not say them.
  [[nodiscard]] virtual std::optional<ObjectVersion> parse_status(std::string_view body, Judgement& judgement) const;

  // The request for bytes [offset, offset + size) of the object opened as `version` (nullptr:
  // the first request, which learns the version).
  [[nodiscard]] virtual HttpRequest range_request(std::uint64_t offset, std::uint64_t size,
                                                  const ObjectVersion* version) const = 0;
  // Whether `head` answers that request, before its body is taken (the body's length is checked
  // by the caller against `size`).
  [[nodiscard]] virtual Judgement judge_range(const ResponseHead& head, std::uint64_t offset, std::uint64_t size,
                                              const std::optional<ObjectVersion>& version) const {
    return judge_head(head, offset, size, version);
  }
};

// The dialect of `url` by its scheme: http/https, s3 (resolved with `options.aws`, the AWS_*
// variables read where the call entered the library), webhdfs/swebhdfs. Throws InvalidArgument
// (naming the URL, never a secret) for a URL the dialect cannot use or settings it refuses.
[[nodiscard]] std::unique_ptr<const HttpDialect> make_dialect(const Url& url, const RemoteOptions& options);

// The "If-Match" header that pins later requests to the version opened ("" for none: no ETag,
// or a weak one, which If-Match never matches; those are compared instead).
[[nodiscard]] std::string if_match_header(const ObjectVersion* version);

}  // namespace h5tile::detail
