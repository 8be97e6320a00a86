#include "io/http/http_policy.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace h5tile::detail {
namespace {

std::optional<std::uint64_t> number(std::string_view text) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' || text.back() == '\n'))
    text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = trim(value);
  if (value.substr(0, 6) != "bytes ") return std::nullopt;
  value = trim(value.substr(6));
  const auto slash = value.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto range = value.substr(0, slash);
  const auto total_text = value.substr(slash + 1);
  ContentRange out;
  if (total_text != "*") {
    out.total = number(total_text);
    if (!out.total) return std::nullopt;
  }
  if (range == "*") {
    if (!out.total) return std::nullopt;
    return out;
  }
  const auto dash = range.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  out.first = number(range.substr(0, dash));
  const auto last = number(range.substr(dash + 1));
  if (!out.first || !last || *last < *out.first) return std::nullopt;
  out.last = *last;
  if (out.total && out.last >= *out.total) return std::nullopt;
  return out;
}

std::optional<Judgement> judge_failure_status(long s) {
  if (s == 404 || s == 410) return Judgement{Verdict::NotFound, fmt::format("HTTP {}: no such object", s)};
  if (s == 401 || s == 403) return Judgement{Verdict::Forbidden, fmt::format("HTTP {}: access denied", s)};
  if (s == 412)
    return Judgement{Verdict::Changed, "HTTP 412: the object changed since it was opened (If-Match failed)"};
  if (s == 429 || (s >= 500 && s <= 599)) return Judgement{Verdict::Retry, fmt::format("HTTP {}", s)};
  return std::nullopt;
}

Judgement judge_head(const ResponseHead& head, std::uint64_t offset, std::uint64_t size,
                     const std::optional<ObjectVersion>& version) {
  const auto s = head.status;
  if (auto failure = judge_failure_status(s)) return std::move(*failure);
  if (s == 200) {
    return {Verdict::Bad, "the server ignored the Range header (HTTP 200 with the whole object, not 206)"};
  }
  if (s == 416) {
    return {version ? Verdict::Changed : Verdict::Bad,
            fmt::format("HTTP 416: bytes {}-{} are outside the object{}", offset, offset + size - 1,
                        version ? " (it changed since it was opened)" : "")};
  }
  if (s != 206) return {Verdict::Bad, fmt::format("unexpected HTTP status {}", s)};
  if (!head.content_range) return {Verdict::Bad, "HTTP 206 without a Content-Range header"};
  const auto range = parse_content_range(*head.content_range);
  if (!range || !range->first || *range->first != offset || range->last != offset + size - 1) {
    return {Verdict::Bad, fmt::format("Content-Range '{}' does not match the bytes asked for ({}-{})",
                                      std::string(trim(*head.content_range)), offset, offset + size - 1)};
  }
  if (version) {
    if (range->total && *range->total != version->size) {
      return {Verdict::Changed, fmt::format("the object's size is now {} bytes, not the {} it had when opened",
                                            *range->total, version->size)};
    }
    // The validator of the open must come back: an answer without it could be of any version.
    const bool strong_etag = !version->etag.empty() && !version->etag.starts_with("W/");
    if (strong_etag && head.etag.empty()) {
      return {Verdict::Changed, fmt::format("the answer carries no ETag, where the object had ETag {} when opened, so "
                                            "its version cannot be checked",
                                            version->etag)};
    }
    if (!strong_etag && !version->last_modified.empty() && head.last_modified.empty()) {
      return {Verdict::Changed, fmt::format("the answer carries no Last-Modified, where the object had '{}' when "
                                            "opened, so its version cannot be checked",
                                            version->last_modified)};
    }
    if (!version->etag.empty() && !head.etag.empty() && head.etag != version->etag) {
      return {Verdict::Changed,
              fmt::format("its ETag is now {}, not {} as when it was opened", head.etag, version->etag)};
    }
    if (!version->last_modified.empty() && !head.last_modified.empty() &&
        head.last_modified != version->last_modified) {
      return {Verdict::Changed, fmt::format("its Last-Modified is now '{}', not '{}' as when it was opened",
                                            head.last_modified, version->last_modified)};
    }
  } else if (!range->total) {
    return {Verdict::Bad, "the server does not say the object's size (Content-Range total '*')"};
  }
  return {};
}

Judgement judge_body(std::uint64_t received, std::uint64_t size) {
  if (received < size) {
    return {Verdict::Retry, fmt::format("the body ended after {} of {} bytes", received, size)};
  }
  if (received > size) return {Verdict::Bad, fmt::format("the body is longer than the {} bytes asked for", size)};
  return {};
}

double RetryPolicy::delay(unsigned attempt, double random) const noexcept {
  const double grown = base_s * std::ldexp(1.0, static_cast<int>(std::min(attempt, 30U)) - 1);
  return std::clamp(random, 0.0, 1.0) * std::min(cap_s, grown);
}

}  // namespace h5tile::detail
