#include "io/http/http_source.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/curl_pool.hpp"
#include "io/http/dialect.hpp"
#include "io/http/http_policy.hpp"
#include "io/remote_io.hpp"

namespace h5tile::detail {
namespace {

// Neighbouring ranges of one read_ranges call join into one request across gaps up to this
// (read and dropped: cheaper than a round trip), up to kMaxJoined bytes a request.
constexpr std::uint64_t kJoinGap = std::uint64_t{256} << 10;
constexpr std::uint64_t kMaxJoined = std::uint64_t{16} << 20;
// The longest answer to a status request (WebHDFS's GETFILESTATUS: a few hundred bytes of JSON).
constexpr std::uint64_t kMaxStatus = std::uint64_t{1} << 20;
std::optional<std::uint64_t> parse_length(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// One attempt at one range: where its body goes and what came back.
struct Attempt {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;  // at open: the most to take (the size is learnt from the answer)
  bool learning = false;   // the first ranged request: no version yet, size up to `size`
  bool status = false;     // the dialect's status request: a small body, whatever its length
  const HttpDialect* dialect = nullptr;
  std::byte* out = nullptr;
  std::vector<std::byte>* grow = nullptr;  // at open: the body goes here
  const std::optional<ObjectVersion>* version = nullptr;
  ResponseHead head{};
  bool judged = false;
  Judgement judgement{};
  std::uint64_t received = 0;
  std::optional<std::uint64_t> total{};  // at open
};

// Whether the object was last modified at least 2 s before the server answered (by the
// server's clock: its Last-Modified and Date). Then any later version has another modification
// time in whole seconds, and so another ETag where the server makes one from that time and the
// size, as nginx does: a strong ETag alone would not tell two versions of one size written
// within a second apart.
bool settled(const ResponseHead& head) {
  constexpr time_t kSettledSeconds = 2;
  if (head.last_modified.empty() || head.date.empty()) return false;
  const time_t modified = curl_getdate(head.last_modified.c_str(), nullptr);
  const time_t answered = curl_getdate(head.date.c_str(), nullptr);
  return modified >= 0 && answered >= 0 && answered - modified >= kSettledSeconds;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& a = *static_cast<Attempt*>(user);
  const std::string_view line(data, size * count);
  if (line.substr(0, 5) == "HTTP/") {
    a.head = ResponseHead{};  // a new response (after a 100 Continue, say)
    const auto space = line.find(' ');
    if (space != std::string_view::npos) a.head.status = std::strtol(line.data() + space + 1, nullptr, 10);
  } else if (starts_with_nocase(line, "content-range:")) {
    a.head.content_range = header_value(line, 14);
  } else if (starts_with_nocase(line, "etag:")) {
    a.head.etag = header_value(line, 5);
  } else if (starts_with_nocase(line, "last-modified:")) {
    a.head.last_modified = header_value(line, 14);
  } else if (starts_with_nocase(line, "date:")) {
    a.head.date = header_value(line, 5);
  } else if (starts_with_nocase(line, "content-length:")) {
    a.head.content_length = parse_length(header_value(line, 15));
  }
  return size * count;
}

// Judges the head once, before the first byte of the body is taken.
void judge(Attempt& a) {
  if (a.judged) return;
  a.judged = true;
  if (a.status) {
    a.judgement = a.dialect->judge_status(a.head);
    return;
  }
  if (a.learning) {
    // The first request learns the size: the range it gets is [0, min(asked, total)).
    if (a.head.status == 206 && a.head.content_range) {
      if (const auto range = parse_content_range(*a.head.content_range); range && range->total) {
        a.total = range->total;
        a.size = std::min(a.size, *range->total);
      }
    }
    if (a.head.status == 416 && a.head.content_range) {
      if (const auto range = parse_content_range(*a.head.content_range); range && range->total == 0U) {
        a.total = 0;
        a.size = 0;
        return;  // an empty object
      }
    }
  }
  a.judgement = a.dialect->judge_range(a.head, a.offset, a.size, *a.version);
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& a = *static_cast<Attempt*>(user);
  const auto n = size * count;
  judge(a);
  if (a.judgement.verdict != Verdict::Ok) return 0;  // stops the transfer: never take a wrong body
  if (a.received + n > a.size) {
    a.judgement = a.status ? Judgement{Verdict::Bad, fmt::format("the status answer is longer than {} bytes", a.size)}
                           : judge_body(a.received + n, a.size);
    return 0;
  }
  if (a.grow != nullptr) a.grow->resize(a.received + n);
  std::byte* to = a.grow != nullptr ? a.grow->data() : a.out;
  std::memcpy(to + a.received, data, n);
  a.received += n;
  return n;
}

// What ties the responses of one object's reads to the version that open() saw.
enum class Validator : unsigned char {
  Etag,          // a strong ETag: sent as If-Match, and every answer must carry it
  LastModified,  // no strong ETag, a settled Last-Modified: every answer must carry it
  Status,        // the dialect's status request (WebHDFS): asked again after every range
  None,          // nothing: only what the first response brought can be read
};

constexpr std::string_view kNoValidator =
    "the server gives no strong validator for it (no strong ETag, and no Last-Modified at least 2 s before the "
    "answer's Date), so bytes from two responses could come from two versions of the object; such an object is "
    "read only where it fits in the first response (a remote_block_size of at least its size)";

class HttpSource final : public ByteSource {
 public:
  HttpSource(const Url& url, const RemoteOptions& options)
      : name_(object_name(url)),
        dialect_(make_dialect(url, options)),
        options_(options),
        policy_{.retries = options.retries, .budget_s = 4 * options.timeout_s} {
    if (url.scheme == "s3") options_ = s3_transport(options_);
  }

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::uint64_t size() const override { return version_->size; }
  [[nodiscard]] bool remote() const noexcept override { return true; }
  [[nodiscard]] std::uint64_t resident_bytes() const noexcept override { return first_.size(); }
  [[nodiscard]] bool pinned() const noexcept override {
    return settled_ && version_ && !if_match_header(&*version_).empty();
  }

  // The first request: the object's size and version, and its first block.
  void open() {
    const auto block = std::max<std::uint64_t>(options_.block_size, 1);
    if (dialect_->status_request()) {
      // The size and version from the dialect's status request, then the first block.
      Attempt status{.size = kMaxStatus, .status = true};
      fetch(status);
      const auto answer = std::exchange(first_, {});
      Judgement j;
      const std::string_view body(reinterpret_cast<const char*>(answer.data()), answer.size());
      version_ = dialect_->parse_status(body, j);
      if (!version_) fail(j, status, 0, 0);
      validator_ = Validator::Status;
      if (version_->size == 0) return;
      Attempt a{.offset = 0, .size = std::min(block, version_->size)};
      first_.resize(a.size);
      a.out = first_.data();
      fetch(a);
      return;
    }
    Attempt a{.offset = 0, .size = block, .learning = true};
    fetch(a);
    version_ = ObjectVersion{*a.total, a.head.etag, a.head.last_modified};
    settled_ = settled(a.head);
    first_.resize(a.received);
    // RFC 9110 joins partial responses only under one strong validator: a strong ETag, or a
    // Last-Modified at least 2 s before the answer's Date (any later version then has another).
    validator_ = !if_match_header(&*version_).empty() ? Validator::Etag
                 : settled_                           ? Validator::LastModified
                                                      : Validator::None;
    if (validator_ == Validator::LastModified) version_->etag.clear();  // a weak ETag: not compared
  }

  void read_at(void* buffer, std::size_t size, std::uint64_t offset) const override {
    if (size == 0) return;
    if (offset + size > version_->size || offset + size < offset) {
      throw IoError(fmt::format("cannot read bytes {}-{} of '{}': it holds {} bytes", offset, offset + size - 1, name_,
                                version_->size),
                    EIO);
    }
    auto* out = static_cast<std::byte*>(buffer);
    if (offset < first_.size()) {
      // What the first request fetched at open is not fetched again (a range that starts in it
      // takes its head from there).
      const auto head = std::min<std::uint64_t>(size, first_.size() - offset);
      std::memcpy(out, first_.data() + offset, head);
      if (head == size) return;
      out += head;
      offset += head;
      size -= head;
    }
    Attempt a{.offset = offset, .size = size, .out = out};
    fetch(a);
  }

  void validate() const override {
    if (version_->size == 0) return;
    if (validator_ == Validator::None) {
      // Nothing tells this version from another: whatever was kept is taken as changed, and the
      // read opens the object again (one response, where it fits in the first block).
      throw IoError(fmt::format("'{}' may have changed since it was opened: {}", name_, kNoValidator), ESTALE);
    }
    std::byte first{};
    Attempt a{.offset = 0, .size = 1, .out = &first};  // past first_: the server answers
    fetch(a);
  }

  void read_ranges(std::span<const ByteRange> ranges) const override {
    std::vector<std::byte> joined_bytes;
    for (const auto& joined : join_ranges(ranges, kJoinGap, kMaxJoined)) {
      if (joined.members.size() == 1) {
        const auto& r = ranges[joined.members[0]];
        read_at(r.out, r.size, r.offset);
        continue;
      }
      joined_bytes.resize(joined.size);
      read_at(joined_bytes.data(), joined.size, joined.offset);
      for (const auto i : joined.members) {
        std::memcpy(ranges[i].out, joined_bytes.data() + (ranges[i].offset - joined.offset), ranges[i].size);
      }
    }
  }

 private:
  // Gets the range of `a` (retrying what is worth it), or throws naming the object. A range after
  // the first response needs a validator that ties it to the version opened (Validator); with
  // WebHDFS's status, the status is asked again after the range and must be unchanged.
  void fetch(Attempt& a) const {
    const bool later = !a.learning && !a.status;
    if (later && validator_ == Validator::None) {
      throw IoError(
          fmt::format("cannot read bytes {}-{} of '{}': {}", a.offset, a.offset + a.size - 1, name_, kNoValidator),
          ESTALE);
    }
    fetch_once(a);
    if (later && validator_ == Validator::Status) check_status_unchanged(a);
  }

  // The status asked again: the range just read came from the version opened only if the status
  // (size, modification time) is still the one of the open.
  void check_status_unchanged(const Attempt& range) const {
    Attempt status{.size = kMaxStatus, .status = true};
    std::vector<std::byte> answer;
    fetch_once(status, &answer);
    Judgement j;
    const std::string_view body(reinterpret_cast<const char*>(answer.data()), answer.size());
    const auto now = dialect_->parse_status(body, j);
    if (!now) fail(j, status, 0, 0);
    if (now->size != version_->size || now->last_modified != version_->last_modified) {
      fail({Verdict::Changed, fmt::format("its status is now {} bytes, {}; it was {} bytes, {} when opened", now->size,
                                          now->last_modified, version_->size, version_->last_modified)},
           range, 0, 0);
    }
  }

  // One range as fetch says, without the validator's checks; a status or learning answer goes to
  // `answer` where given, else to first_.
  void fetch_once(Attempt& a, std::vector<std::byte>* answer = nullptr) const {
    const auto start = std::chrono::steady_clock::now();
    const std::optional<ObjectVersion> none;
    for (unsigned retry = 0;; ++retry) {
      Attempt attempt = a;
      attempt.dialect = dialect_.get();
      attempt.version = a.learning || a.status ? &none : &version_;
      std::vector<std::byte> grown;
      if (a.learning || a.status) attempt.grow = &grown;
      const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const auto [code, error] = perform(attempt, policy_.budget_s - spent);
      Judgement j = attempt.judged ? attempt.judgement : Judgement{};
      if (j.verdict == Verdict::Ok && code != CURLE_OK) {
        j = {retryable(code) ? Verdict::Retry : Verdict::Bad,
             error.empty() ? curl_easy_strerror(code) : fmt::format("{} ({})", curl_easy_strerror(code), error)};
      }
      if (j.verdict == Verdict::Ok && !attempt.judged) {
        judge(attempt);  // no body: judge the head alone
        j = attempt.judgement;
      }
      if (j.verdict == Verdict::Ok && !a.status) j = judge_body(attempt.received, attempt.size);
      if (j.verdict == Verdict::Ok && a.learning && !attempt.total) {
        j = {Verdict::Bad, "the first response did not say the object's size"};
      }
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (j.verdict == Verdict::Ok) {
        count_remote_request(attempt.received, retry);
        if (a.learning || a.status) (answer != nullptr ? *answer : first_) = std::move(grown);
        a = std::move(attempt);
        return;
      }
      if (j.verdict == Verdict::Retry && policy_.allows(retry + 1, elapsed)) {
        const double pause = std::min(policy_.delay(retry + 1, uniform()), policy_.budget_s - elapsed);
        std::this_thread::sleep_for(std::chrono::duration<double>(pause));
        continue;
      }
      count_remote_request(attempt.received, retry);
      fail(j, a, retry, elapsed);
    }
  }

  [[noreturn]] void fail(const Judgement& j, const Attempt& a, unsigned retries, double elapsed) const {
    const auto what = a.learning || a.status
                          ? fmt::format("cannot open '{}'", name_)
                          : fmt::format("cannot read bytes {}-{} of '{}'", a.offset, a.offset + a.size - 1, name_);
    switch (j.verdict) {
      case Verdict::NotFound: throw FileNotFound(fmt::format("{}: {}", what, j.reason));
      case Verdict::Forbidden: throw IoError(fmt::format("{}: {}", what, j.reason), EACCES);
      case Verdict::Changed:
        throw IoError(fmt::format("{}: the object changed while being read: {}", what, j.reason), ESTALE);
      case Verdict::Retry:
        throw IoError(fmt::format("{}: gave up after {} retries in {:.1f} s: {}", what, retries, elapsed, j.reason),
                      EIO);
      case Verdict::Bad:
      case Verdict::Ok: break;
    }
    throw IoError(fmt::format("{}: {}", what, j.reason), EPROTO);
  }

  // One request, given up after `remaining_s` seconds (what is left of the range's budget, so
  // that a range never takes longer than 4 x remote_timeout, its retries included); returns
  // libcurl's code and its error text.
  std::pair<CURLcode, std::string> perform(Attempt& a, double remaining_s) const {
    auto handle = acquire();
    CURL* h = handle.get();
    char error[CURL_ERROR_SIZE] = {};
    const HttpRequest request = a.status ? *dialect_->status_request()
                                         : dialect_->range_request(a.offset, a.size, a.learning ? nullptr : &*version_);
#if LIBCURL_VERSION_NUM < 0x074b00
    if (!request.aws_sigv4.empty()) {
      throw RuntimeError(
          fmt::format("cannot read '{}': this libcurl ({}) cannot sign S3 requests (SigV4 needs 7.75 or "
                      "later); AWS_NO_SIGN_REQUEST=YES reads a public bucket",
                      name_, LIBCURL_VERSION));
    }
#endif
    const auto range = fmt::format("{}-{}", a.offset, a.offset + a.size - 1);
    check_headers(request);
    curl_slist* headers = nullptr;
    for (const auto& header : request.headers) headers = curl_slist_append(headers, header.c_str());
    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h, CURLOPT_RANGE, request.range_header ? range.c_str() : nullptr);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    // Redirects only where the dialect expects them (WebHDFS: namenode to datanode), only to
    // http(s), and a few at most; credentials never go to another host (libcurl's default).
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, request.follow_redirects ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    set_transport(h, options_, remaining_s, request.aws_sigv4, request.userpwd, error);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &a);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
    const CURLcode code = curl_easy_perform(h);
    if (a.head.status == 0) {
      long status = 0;
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
      a.head.status = status;
    }
    clear_transport(h);
    curl_slist_free_all(headers);
    if (code != CURLE_OK) {
      handle.drop();  // its connection may be in any state
    }
    return {code, std::string(error)};
  }

  // Every header value goes out as given: a CR or LF (from a variable, an ETag) would end the
  // header and begin another. The dialects refuse such values where they take them; this is the
  // last check before anything is sent, whatever the header's source.
  void check_headers(const HttpRequest& request) const {
    for (const auto& header : request.headers) {
      if (std::ranges::any_of(header, [](unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; })) {
        const auto name = header.substr(0, header.find(':'));
        throw InvalidArgument(
            fmt::format("cannot read '{}': the value of request header '{}' holds a control "
                        "character (a CR or LF would add a header of its own)",
                        name_, name.size() > 40 ? name.substr(0, 40) + "..." : name));
      }
    }
  }

  // A handle from the pool (its connection kept alive between requests), returned on scope exit.
  class Lease {
   public:
    Lease(const HttpSource& owner, CurlHandle handle) : owner_(owner), handle_(std::move(handle)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { owner_.release(std::move(handle_)); }
    [[nodiscard]] CURL* get() const noexcept { return handle_.get(); }
    void drop() noexcept { handle_.reset(); }

   private:
    const HttpSource& owner_;
    CurlHandle handle_;
  };

  // A handle for one request: at most `connections` at once for this object, taken from the
  // process's idle handles (reset: no option of another object's request is kept) or made.
  Lease acquire() const {
    {
      std::unique_lock lock(mutex_);
      const auto limit = std::max(1U, options_.connections);
      free_.wait(lock, [&] { return in_use_ < limit; });
      ++in_use_;
    }
    CurlHandle h;
    try {
      h = take_handle(options_.connections, fmt::format("cannot read '{}'", name_).c_str());
    } catch (...) {
      release(nullptr);
      throw;
    }
    return Lease(*this, std::move(h));
  }

  // Ends a request: the handle goes back to the process's idle handles (none: it was dropped).
  void release(CurlHandle handle) const noexcept {
    {
      const std::lock_guard lock(mutex_);
      --in_use_;
    }
    free_.notify_one();
    give_handle(std::move(handle));
  }

  std::string name_;
  std::unique_ptr<const HttpDialect> dialect_;
  RemoteOptions options_;
  RetryPolicy policy_;
  std::optional<ObjectVersion> version_;
  Validator validator_ = Validator::None;  // what ties later responses to the version opened (open())
  bool settled_ = false;                   // modified long enough before it was opened (settled())
  mutable std::vector<std::byte> first_;   // the first block, fetched at open (set once, in open())
  mutable std::mutex mutex_;
  mutable std::condition_variable free_;
  mutable unsigned in_use_ = 0;  // handles of this object's requests in flight
};

}  // namespace

std::shared_ptr<const ByteSource> open_http(const Url& url, const RemoteOptions& options) {
  global_init();
  auto source = std::make_shared<HttpSource>(url, options);
  source->open();
  return source;
}

}  // namespace h5tile::detail
