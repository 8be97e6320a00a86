#include "io/http/dialect.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/aws_profile.hpp"
#include "io/http/s3_dialect.hpp"
#include "io/http/s3_settings.hpp"

namespace h5tile::detail {
namespace {

// http:// and https://: the URL as given (a presigned URL's query string included), ranged GETs.
class PlainHttp final : public HttpDialect {
 public:
  explicit PlainHttp(const Url& url) : url_(full_text(url)) {}

  [[nodiscard]] HttpRequest range_request(std::uint64_t /*offset*/, std::uint64_t /*size*/,
                                          const ObjectVersion* version) const override {
    HttpRequest r{.url = url_};
    if (auto h = if_match_header(version); !h.empty()) r.headers.push_back(std::move(h));
    return r;
  }

 private:
  std::string url_;
};

// s3://bucket/key: ranged GETs of the object's HTTP(S) URL, signed by libcurl (SigV4) with the
// credentials resolved from the AWS variables, or unsigned for a public bucket.
class S3 final : public HttpDialect {
 public:
  // The AWS_* variables with the settings given for this URL laid over them (io/http/s3_settings.hpp),
  // completed from the profile's files, its credential_process or the container's endpoint where
  // they hold no keys (io/http/aws_profile.hpp).
  S3(const Url& url, const s3::Environment& env)
      : request_(s3::resolve(object_url(url), s3::complete_credentials(s3::with_settings(object_url(url), env)))) {}

  [[nodiscard]] HttpRequest range_request(std::uint64_t /*offset*/, std::uint64_t /*size*/,
                                          const ObjectVersion* version) const override {
    HttpRequest r{.url = request_.url, .headers = request_.headers};
    if (!request_.anonymous) {
      r.aws_sigv4 = request_.aws_sigv4;
      r.userpwd = request_.userpwd;
    }
    if (auto h = if_match_header(version); !h.empty()) r.headers.push_back(std::move(h));
    return r;
  }

  [[nodiscard]] Judgement judge_range(const ResponseHead& head, std::uint64_t offset, std::uint64_t size,
                                      const std::optional<ObjectVersion>& version) const override {
    if (head.status == 301 || head.status == 307 || head.status == 400) {
      // What S3 answers a request sent to the wrong region (301 PermanentRedirect; 400
      // AuthorizationHeaderMalformed when signed for another one).
      return {Verdict::Bad, fmt::format("HTTP {} (is the bucket in another region than '{}'? set AWS_REGION)",
                                        head.status, request_.region)};
    }
    auto j = judge_head(head, offset, size, version);
    if (j.verdict == Verdict::Forbidden) {
      j.reason += request_.anonymous ? " (sent unsigned, AWS_NO_SIGN_REQUEST: is the bucket public?)"
                                     : fmt::format(" (signed with {}: are they right, {}and allowed to read it?)",
                                                   request_.credentials,
                                                   request_.session_token ? "is the session token still valid, " : "");
    }
    return j;
  }

 private:
  s3::Request request_;
};

// webhdfs://host:port/path (swebhdfs: over HTTPS): the size from GETFILESTATUS at open, the
// bytes from OPEN with offset and length, which answers 200 (not 206) with exactly `length`
// bytes, most often after a 307 redirect from the namenode to a datanode. There is no ETag: the
// length and modification time are recorded at open, but only a read past a shortened end is
// seen on later requests.
class WebHdfs final : public HttpDialect {
 public:
  // The URL's query string (user.name=, delegation=: what the cluster authenticates with) goes
  // with every request, after the parameters of the operation, which it may not set itself.
  explicit WebHdfs(const Url& url)
      : location_(webhdfs::parse_url(url.scheme + "://" + url.authority + url.path)),
        extra_(url.query.empty() ? std::string() : "&" + url.query) {
    for (const std::string_view name : {"op=", "offset=", "length=", "noredirect="}) {
      if (url.query.starts_with(name) || extra_.find("&" + std::string(name)) != std::string::npos) {
        throw InvalidArgument(fmt::format("'{}': its query string may not set '{}' (h5tile sets it for each request)",
                                          redacted(url), name.substr(0, name.size() - 1)));
      }
    }
  }

  [[nodiscard]] std::optional<HttpRequest> status_request() const override {
    return HttpRequest{.url = webhdfs::status_url(location_) + extra_, .range_header = false};
  }

  [[nodiscard]] std::optional<ObjectVersion> parse_status(std::string_view body, Judgement& judgement) const override {
    std::string error;
    const auto status = webhdfs::parse_file_status(body, error);
    if (!status) {
      judgement = {Verdict::Bad, error};
      return std::nullopt;
    }
    return ObjectVersion{.size = status->length,
                         .last_modified = status->modification_time != 0
                                              ? fmt::format("modificationTime {}", status->modification_time)
                                              : std::string()};
  }

  [[nodiscard]] HttpRequest range_request(std::uint64_t offset, std::uint64_t size,
                                          const ObjectVersion* /*version*/) const override {
    return {
        .url = webhdfs::open_url(location_, offset, size) + extra_, .range_header = false, .follow_redirects = true};
  }

  [[nodiscard]] Judgement judge_range(const ResponseHead& head, std::uint64_t offset, std::uint64_t size,
                                      const std::optional<ObjectVersion>& /*version*/) const override {
    if (auto failure = judge_failure_status(head.status)) return std::move(*failure);
    if (head.status != 200) {
      return {Verdict::Bad, fmt::format("unexpected HTTP status {} to OPEN (200 expected)", head.status)};
    }
    if (head.content_length && *head.content_length != size) {
      return {Verdict::Bad, fmt::format("OPEN of bytes {}-{} answered {} bytes (Content-Length), not {}", offset,
                                        offset + size - 1, *head.content_length, size)};
    }
    return {};
  }

 private:
  webhdfs::Location location_;
  std::string extra_;  // "&<query>" or ""
};

}  // namespace

Judgement HttpDialect::judge_status(const ResponseHead& head) const {
  if (auto failure = judge_failure_status(head.status)) return std::move(*failure);
  if (head.status != 200)
    return {Verdict::Bad, fmt::format("unexpected HTTP status {} to a status request", head.status)};
  return {};
}

std::optional<ObjectVersion> HttpDialect::parse_status(std::string_view /*body*/, Judgement& judgement) const {
  judgement = {Verdict::Bad, "this server has no status request"};
  return std::nullopt;
}

std::string if_match_header(const ObjectVersion* version) {
  if (version == nullptr || version->etag.empty() || version->etag.starts_with("W/")) return {};
  return "If-Match: " + version->etag;
}

std::unique_ptr<const HttpDialect> make_dialect(const Url& url, const RemoteOptions& options) {
  if (url.scheme == "http" || url.scheme == "https") return std::make_unique<PlainHttp>(url);
  if (url.scheme == "s3") return std::make_unique<S3>(url, options.aws);
  if (url.scheme == "webhdfs" || url.scheme == "swebhdfs") return std::make_unique<WebHdfs>(url);
  throw InvalidArgument(fmt::format("cannot read '{}': h5tile does not read {}:// URLs", redacted(url), url.scheme));
}

}  // namespace h5tile::detail
