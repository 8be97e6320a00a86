#include "io/http/s3_upload.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/aws_profile.hpp"
#include "io/http/curl_pool.hpp"
#include "io/http/http_policy.hpp"
#include "io/http/s3_dialect.hpp"
#include "io/http/s3_settings.hpp"
#include "io/http/url.hpp"
#include "io/remote_io.hpp"

namespace h5tile::detail {
namespace {

// What one request answered.
struct Reply {
  long status = 0;
  std::string etag{};
  std::string body{};
  bool cut = false;  // the body was longer than kMaxReplyBody
};

// Sent with every request: the SHA-256 of its body, or UNSIGNED-PAYLOAD (the parts are not hashed:
// TLS protects them in transit, as for the AWS SDKs' uploads over HTTPS).
constexpr std::string_view kPayloadHashHeader = "x-amz-content-sha256:";

// The longest answer body kept (S3's answers are a few KiB, a listing page of 1,000 keys of up to
// 1 KiB each about 1.5 MB); a longer one is an error where it is read (check_page).
constexpr std::size_t kMaxReplyBody = std::size_t{16} << 20;

// A listing page must be whole: an IoError where it was cut or says it goes on without saying where.
void check_page(const Reply& reply, const std::string& what, bool truncated, bool has_marker) {
  if (reply.cut) {
    throw IoError(fmt::format("{}: a page of the listing is longer than {} bytes", what, kMaxReplyBody), EPROTO);
  }
  if (truncated && !has_marker) {
    throw IoError(fmt::format("{}: the server says the listing goes on but not where", what), EPROTO);
  }
}

// The text of the first <tag>...</tag> of an S3 XML answer ("" where none).
std::string xml_text(std::string_view body, std::string_view tag) {
  const auto open = fmt::format("<{}>", tag);
  const auto close = fmt::format("</{}>", tag);
  const auto begin = body.find(open);
  if (begin == std::string_view::npos) return {};
  const auto from = begin + open.size();
  const auto end = body.find(close, from);
  return end == std::string_view::npos ? std::string() : std::string(body.substr(from, end - from));
}

// The texts of every <tag>...</tag> of an S3 XML answer; XML's five escapes undone unless `raw`
// (an element that holds others, whose texts are then taken from it).
std::vector<std::string> xml_texts(std::string_view body, std::string_view tag, bool raw = false) {
  static constexpr std::pair<std::string_view, char> kEscapes[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::vector<std::string> out;
  const auto open = fmt::format("<{}>", tag);
  const auto close = fmt::format("</{}>", tag);
  for (auto begin = body.find(open); begin != std::string_view::npos; begin = body.find(open, begin)) {
    const auto from = begin + open.size();
    const auto end = body.find(close, from);
    if (end == std::string_view::npos) break;
    std::string text;
    for (auto i = from; i < end && raw; ++i) text += body[i];
    for (auto i = from; i < end && !raw; ++i) {
      const auto rest = body.substr(i, end - i);
      const auto* escape = std::find_if(std::begin(kEscapes), std::end(kEscapes),
                                        [&](const auto& e) { return rest.starts_with(e.first); });
      if (escape != std::end(kEscapes)) {
        text += escape->second;
        i += escape->first.size() - 1;
      } else {
        text += body[i];
      }
    }
    out.push_back(std::move(text));
    begin = end + close.size();
  }
  return out;
}

// "HTTP 403 AccessDenied: Access Denied", from an answer and its S3 error body.
std::string describe(const Reply& reply) {
  auto text = fmt::format("HTTP {}", reply.status);
  if (const auto code = xml_text(reply.body, "Code"); !code.empty()) text += " " + code;
  if (const auto message = xml_text(reply.body, "Message"); !message.empty()) text += ": " + message;
  return text;
}

struct Body {
  std::span<const std::byte> bytes;
  std::size_t at = 0;
};

std::size_t on_read(char* into, std::size_t size, std::size_t count, void* user) {
  auto& body = *static_cast<Body*>(user);
  const auto n = std::min(size * count, body.bytes.size() - body.at);
  std::memcpy(into, body.bytes.data() + body.at, n);
  body.at += n;
  return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& reply = *static_cast<Reply*>(user);
  const std::string_view line(data, size * count);
  if (line.substr(0, 5) == "HTTP/") {
    reply.etag.clear();  // a new answer (after 100 Continue)
  } else if (starts_with_nocase(line, "etag:")) {
    reply.etag = header_value(line, 5);
  }
  return size * count;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& reply = *static_cast<Reply*>(user);
  const auto n = size * count;
  if (reply.body.size() < kMaxReplyBody) reply.body.append(data, std::min(n, kMaxReplyBody - reply.body.size()));
  if (reply.body.size() >= kMaxReplyBody) reply.cut = true;
  return n;
}

class S3Upload final : public PartUploader {
 public:
  S3Upload(std::string name, s3::Request request, const RemoteOptions& options)
      : name_(std::move(name)), request_(std::move(request)), options_(s3_transport(options)) {
    policy_.retries = options.retries;
    policy_.budget_s = 4 * options.timeout_s;
  }
  S3Upload(const S3Upload&) = delete;
  S3Upload& operator=(const S3Upload&) = delete;
  ~S3Upload() override = default;

  [[nodiscard]] std::string name() const override { return name_; }
  // "s3://bucket/" (this object's bucket), for the messages of listings.
  [[nodiscard]] std::string bucket_name() const { return name_.substr(0, name_.find('/', 5) + 1); }

  // HeadObject: whether the object is there (a refusal to say, 403, counts as not); its ETag is
  // kept, so that a completion whose answer was lost is not taken for this object.
  [[nodiscard]] bool exists() {
    const auto reply = send("HEAD", "", {}, {}, fmt::format("cannot write '{}'", name_), {200, 404, 403});
    if (reply.status == 200) etag_before_ = reply.etag;
    return reply.status == 200;
  }

  // DeleteObject: the object is gone (or was never there).
  void remove() { (void)send("DELETE", "", {}, {}, fmt::format("cannot delete '{}'", name_), {204, 200, 404}); }

  // ListMultipartUploads of the bucket of this object (its requests then go to the bucket's URL):
  // the unfinished uploads of the keys under `prefix`, every page, as (key, upload id, initiated).
  [[nodiscard]] std::vector<std::array<std::string, 3>> uploads(std::string_view prefix) {
    request_.url.resize(request_.url.rfind('/') + 1);
    std::vector<std::array<std::string, 3>> found;
    std::string key_marker;
    std::string id_marker;
    const auto what = fmt::format("cannot list the uploads of '{}{}'", bucket_name(), prefix);
    for (;;) {
      // Parameters in the order SigV4 sorts them (libcurl signs the query as written), none empty
      // but `uploads`.
      std::string query;
      if (!key_marker.empty()) query += fmt::format("key-marker={}&", percent_encoded(key_marker));
      if (!prefix.empty()) query += fmt::format("prefix={}&", percent_encoded(prefix));
      if (!key_marker.empty()) query += fmt::format("upload-id-marker={}&", percent_encoded(id_marker));
      query += "uploads=";
      const auto reply = send("GET", query, {}, {}, what, {200});
      for (const auto& upload : xml_texts(reply.body, "Upload", true)) {
        const auto key = xml_texts(upload, "Key");
        const auto id = xml_texts(upload, "UploadId");
        const auto initiated = xml_texts(upload, "Initiated");
        if (key.empty() || id.empty()) continue;
        found.push_back({key.front(), id.front(), initiated.empty() ? std::string() : initiated.front()});
      }
      const auto next_key = xml_texts(reply.body, "NextKeyMarker");
      const auto next_id = xml_texts(reply.body, "NextUploadIdMarker");
      const bool truncated = xml_text(reply.body, "IsTruncated") == "true";
      check_page(reply, what, truncated, !next_key.empty() && !next_key.front().empty());
      if (!truncated) return found;
      key_marker = next_key.front();
      id_marker = next_id.empty() ? std::string() : next_id.front();
    }
  }

  // AbortMultipartUpload of upload `id` of this object: its parts are discarded (an upload
  // already gone, 404, too).
  void abort_upload(std::string_view id) {
    (void)send("DELETE", fmt::format("uploadId={}", percent_encoded(id)), {}, {},
               fmt::format("cannot abort upload {} of '{}'", id, name_), {204, 200, 404});
  }

  // ListObjectsV2 of the bucket of this object (its requests then go to the bucket's URL): the
  // keys under `prefix`, every page.
  [[nodiscard]] std::vector<std::string> list(std::string_view prefix) {
    request_.url.resize(request_.url.rfind('/') + 1);  // <endpoint>/<bucket>/ or https://<bucket>.s3...amazonaws.com/
    std::vector<std::string> keys;
    std::string token;
    const auto what = fmt::format("cannot list '{}{}'", bucket_name(), prefix);
    for (;;) {
      // Parameters in the order SigV4 sorts them (libcurl signs the query as written).
      std::string query;
      if (!token.empty()) query += fmt::format("continuation-token={}&", percent_encoded(token));
      query += "list-type=2";
      if (!prefix.empty()) query += fmt::format("&prefix={}", percent_encoded(prefix));
      const auto reply = send("GET", query, {}, {}, what, {200});
      auto page = xml_texts(reply.body, "Key");
      keys.insert(keys.end(), std::make_move_iterator(page.begin()), std::make_move_iterator(page.end()));
      const auto tokens = xml_texts(reply.body, "NextContinuationToken");
      token = tokens.empty() ? std::string() : tokens.front();
      const bool truncated = xml_text(reply.body, "IsTruncated") == "true";
      check_page(reply, what, truncated, !token.empty());
      if (!truncated) return keys;
    }
  }

  [[nodiscard]] std::string upload_id() const override { return upload_id_; }
  // Another process's upload, started with `id`: this one sends parts only.
  void join(std::string id) { upload_id_ = std::move(id); }

  void start(bool exclusive) {
    exclusive_ = exclusive;
    const auto what = fmt::format("cannot start the upload of '{}'", name_);
    const auto reply = send("POST", "uploads=", {}, {"Content-Type: application/x-hdf5"}, what, {200});
    upload_id_ = xml_text(reply.body, "UploadId");
    if (upload_id_.empty()) {
      throw IoError(fmt::format("{}: the server's answer holds no UploadId", what), EPROTO);
    }
  }

  std::string put_part(unsigned number, std::span<const std::byte> bytes) override {
    const auto what = fmt::format("cannot upload part {} ({} bytes) of '{}'", number, bytes.size(), name_);
    auto reply = send("PUT", fmt::format("partNumber={}&uploadId={}", number, id()), bytes, {}, what, {200});
    if (reply.etag.empty()) {
      throw IoError(fmt::format("{}: the server's answer holds no ETag", what), EPROTO);
    }
    count_remote_request(bytes.size(), 0);
    return std::move(reply.etag);
  }

  void complete(const std::vector<std::string>& etags) override {
    std::string xml = "<CompleteMultipartUpload>";
    for (std::size_t i = 0; i < etags.size(); ++i) {
      xml += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, etags[i]);
    }
    xml += "</CompleteMultipartUpload>";
    const auto what = fmt::format("cannot complete the upload of '{}'", name_);
    std::vector<std::string> headers = {"Content-Type: application/xml"};
    if (exclusive_) headers.emplace_back("If-None-Match: *");
    const auto reply = send("POST", fmt::format("uploadId={}", id()), std::as_bytes(std::span(xml)), headers, what,
                            {200, 404, 412}, etags.size());
    if (reply.status == 412) {
      throw FileExists(fmt::format("{}: it exists (mode 'w-' does not replace an object)", what));
    }
    if (reply.status == 404) throw IoError(fmt::format("{}: {}", what, describe(reply)), EIO);
  }

  bool may_have_completed() noexcept override {
    try {
      const auto head = send("HEAD", "", {}, {}, "check", {200, 404});
      // Gone, or the object that was there before the upload: this upload made nothing.
      return !(head.status == 404 || (!etag_before_.empty() && head.etag == etag_before_));
    } catch (...) {
      return true;
    }
  }

  void abort() noexcept override {
    if (upload_id_.empty()) return;
    try {
      (void)send("DELETE", fmt::format("uploadId={}", id()), {}, {}, "abort", {204, 200, 404});
    } catch (...) {  // the parts stay until the bucket's lifecycle rule removes them (docs/REMOTE.md)
    }
  }

 private:
  [[nodiscard]] std::string id() const { return percent_encoded(upload_id_); }

  // One request, retried while its failure is worth another try; an answer of a status outside
  // `accepted` is an error. `parts` (a completion): a retry whose answer is 404 NoSuchUpload asks
  // whether an earlier try completed it after all (the object's ETag then ends in "-<parts>").
  Reply send(const char* method, const std::string& query, std::span<const std::byte> body,
             const std::vector<std::string>& headers, const std::string& what, std::initializer_list<long> accepted,
             std::size_t parts = 0) const {
    const auto start = std::chrono::steady_clock::now();
    for (unsigned retry = 0;; ++retry) {
      const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      Reply reply;
      std::string error;
      const CURLcode code = perform(method, query, body, headers, policy_.budget_s - spent, reply, error);
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      bool again = false;
      std::string reason;
      if (code != CURLE_OK) {
        again = retryable(code);
        reason = error.empty() ? curl_easy_strerror(code) : fmt::format("{} ({})", curl_easy_strerror(code), error);
      } else if (reply.status >= 500 || reply.status == 429 ||
                 (reply.status == 200 && xml_text(reply.body, "Code") == "InternalError")) {
        again = true;  // S3 may answer a completion 200 and fail it in the body
        reason = describe(reply);
      } else if (parts != 0 && retry > 0 && (reply.status == 404 || reply.status == 412) && completed_earlier(parts)) {
        // An earlier try completed it, and its answer was lost: the upload is gone (404), or the
        // object it made is there (412, mode x).
        return Reply{.status = 200};
      } else if (std::find(accepted.begin(), accepted.end(), reply.status) != accepted.end()) {
        if (reply.status == 200 && !xml_text(reply.body, "Code").empty() &&
            reply.body.find("<Error>") != std::string::npos) {
          throw IoError(fmt::format("{}: {}", what, describe(reply)), EIO);
        }
        return reply;
      } else {
        const int err = reply.status == 401 || reply.status == 403 ? EACCES : EIO;
        throw IoError(fmt::format("{}: {} ({})", what, describe(reply), request_.credentials), err);
      }
      if (!again || !policy_.allows(retry + 1, elapsed)) {
        throw IoError(
            fmt::format("{}: {}{}", what,
                        again ? fmt::format("gave up after {} retries in {:.1f} s: ", retry, elapsed) : "", reason),
            EIO);
      }
      std::this_thread::sleep_for(
          std::chrono::duration<double>(std::min(policy_.delay(retry + 1, uniform()), policy_.budget_s - elapsed)));
    }
  }

  // Whether the object is there with the ETag of a multipart upload of `parts` parts.
  [[nodiscard]] bool completed_earlier(std::size_t parts) const {
    try {
      const auto head = send("HEAD", "", {}, {}, "check", {200, 404});
      return head.status == 200 && head.etag != etag_before_ && head.etag.ends_with(fmt::format("-{}\"", parts));
    } catch (...) {
      return false;
    }
  }

  CURLcode perform(const char* method, const std::string& query, std::span<const std::byte> body,
                   const std::vector<std::string>& extra, double remaining_s, Reply& reply, std::string& error) const {
    auto handle = take_handle(options_.connections, fmt::format("cannot write '{}'", name_).c_str());
    CURL* h = handle.get();
    char message[CURL_ERROR_SIZE] = {};
    curl_slist* headers = nullptr;
    for (const auto& header : request_.headers) {
      // The dialect's hash is an empty body's (a GET's); a request with a body sends its own.
      if (!header.starts_with(kPayloadHashHeader)) headers = curl_slist_append(headers, header.c_str());
    }
    const auto payload =
        fmt::format("{} {}", kPayloadHashHeader, body.empty() ? s3::kEmptyPayloadSha256 : "UNSIGNED-PAYLOAD");
    headers = curl_slist_append(headers, payload.c_str());
    for (const auto& header : extra) headers = curl_slist_append(headers, header.c_str());
    // (No "Expect:" header to drop the 100-continue round trip: libcurl 7.88 signs it, empty, and
    // then leaves it out, so that the server finds another signature. The wait is one round trip.)
    const auto url = query.empty() ? request_.url : fmt::format("{}?{}", request_.url, query);
    Body source{body};
    const std::string_view verb(method);
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    if (verb == "PUT") {
      curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
      curl_easy_setopt(h, CURLOPT_READDATA, &source);
      curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body.size()));
    } else if (verb == "POST") {
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.empty() ? "" : reinterpret_cast<const char*>(body.data()));
    } else if (verb == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    set_transport(h, options_, remaining_s, request_.aws_sigv4, request_.userpwd, message);  // empty when anonymous
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &reply);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &reply);
    const CURLcode code = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply.status);
    clear_transport(h);
    curl_slist_free_all(headers);
    error = message;
    if (code == CURLE_OK) give_handle(std::move(handle));  // else dropped: its connection may be in any state
    return code;
  }

  std::string name_;
  s3::Request request_;
  RemoteOptions options_;
  RetryPolicy policy_;
  std::string upload_id_;
  std::string etag_before_;  // the object's ETag before the upload ("" where there was none)
  bool exclusive_ = false;
};

// The requests of object `url` (s3://bucket/key), resolved and signed as the reads' are.
std::unique_ptr<S3Upload> s3_object(std::string_view url, const RemoteOptions& options) {
  const auto parsed = parse_url(url);
  if (!parsed || parsed->scheme != "s3") {
    throw InvalidArgument(fmt::format("cannot write '{}': only s3:// objects are written remotely", redacted(url)));
  }
  const auto object = object_url(*parsed);
  auto request = s3::resolve(object, s3::complete_credentials(s3::with_settings(object, options.aws)));
#if LIBCURL_VERSION_NUM < 0x074b00
  if (!request.anonymous) {
    throw RuntimeError(
        fmt::format("cannot write '{}': this libcurl ({}) cannot sign S3 requests (SigV4 needs 7.75 "
                    "or later)",
                    object_name(*parsed), LIBCURL_VERSION));
  }
#endif
  return std::make_unique<S3Upload>(object_name(*parsed), std::move(request), options);
}

}  // namespace

std::unique_ptr<PartUploader> start_s3_upload(std::string_view url, const RemoteOptions& options, bool exclusive) {
  auto upload = s3_object(url, options);
  if (upload->exists() && exclusive) {
    throw FileExists(
        fmt::format("cannot write '{}': it exists (mode 'w-' does not replace an object)", upload->name()));
  }
  upload->start(exclusive);
  return upload;
}

std::unique_ptr<PartUploader> join_s3_upload(std::string_view url, const RemoteOptions& options,
                                             std::string upload_id) {
  auto upload = s3_object(url, options);
  upload->join(std::move(upload_id));
  return upload;
}

void delete_s3_object(std::string_view url, const RemoteOptions& options) { s3_object(url, options)->remove(); }

namespace {

// The bucket of `url` (s3://bucket/prefix) as "s3://bucket/", its prefix, and the requests of
// the bucket (an object of it resolves them: s3:// names an object, never a bucket alone).
struct BucketListing {
  std::string bucket;
  std::string prefix;
  std::unique_ptr<S3Upload> requests;
};
BucketListing bucket_listing(std::string_view url, const RemoteOptions& options, std::string_view what) {
  const auto parsed = parse_url(url);
  if (!parsed || parsed->scheme != "s3") {
    throw InvalidArgument(fmt::format("cannot {} '{}': not an s3:// URL", what, redacted(url)));
  }
  auto bucket = fmt::format("s3://{}/", parsed->authority);
  auto requests = s3_object(bucket + "x", options);
  return {std::move(bucket), parsed->path.substr(1), std::move(requests)};
}

}  // namespace

std::vector<PendingS3Upload> list_s3_uploads(std::string_view url, const RemoteOptions& options) {
  const auto listing = bucket_listing(url, options, "list the uploads of");
  std::vector<PendingS3Upload> found;
  for (auto& [key, id, initiated] : listing.requests->uploads(listing.prefix)) {
    found.push_back({listing.bucket + key, std::move(id), std::move(initiated)});
  }
  return found;
}

void abort_s3_upload(std::string_view url, std::string_view upload_id, const RemoteOptions& options) {
  s3_object(url, options)->abort_upload(upload_id);
}

std::vector<std::string> list_s3_objects(std::string_view url, const RemoteOptions& options) {
  const auto listing = bucket_listing(url, options, "list");
  std::vector<std::string> urls;
  for (auto& key : listing.requests->list(listing.prefix)) urls.push_back(listing.bucket + key);
  return urls;
}

}  // namespace h5tile::detail
