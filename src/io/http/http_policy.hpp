#pragma once
// The rules every HTTP response is held to, apart from the transport (pure logic, unit-tested):
// what a ranged GET must answer, which failures are retried, and how long to wait between tries.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace h5tile::detail {

// "bytes FIRST-LAST/TOTAL" ("*" for an unknown total), or "bytes */TOTAL" (a 416's).
struct ContentRange {
  std::optional<std::uint64_t> first;  // nullopt for "*/TOTAL"
  std::uint64_t last = 0;
  std::optional<std::uint64_t> total;
};
[[nodiscard]] std::optional<ContentRange> parse_content_range(std::string_view value);

// What a response said, from its status line and headers.
struct ResponseHead {
  long status = 0;
  std::optional<std::string> content_range{};
  std::string etag{};           // "" where none
  std::string last_modified{};  // "" where none
  std::string date{};           // "" where none: when the server answered
  std::optional<std::uint64_t> content_length{};
};

// The version of an object recorded when it was opened, checked on every later response.
struct ObjectVersion {
  std::uint64_t size = 0;
  std::string etag{};           // "" where the server sent none
  std::string last_modified{};  // "" where the server sent none
};

enum class Verdict : unsigned char {
  Ok,
  Retry,      // worth another try (5xx, 429, a short body from a dropped connection)
  NotFound,   // 404, 410
  Forbidden,  // 401, 403
  Changed,    // the object is not the one opened (412, another ETag or size)
  Bad,        // an answer that breaks the protocol (200 to a Range request, a wrong Content-Range)
};

struct Judgement {
  Verdict verdict = Verdict::Ok;
  std::string reason;  // for messages: what was wrong ("" for Ok)
};

// The verdict on a status that means failure whatever was asked (404, 403, 412, 429, 5xx), or
// nullopt for any other status.
[[nodiscard]] std::optional<Judgement> judge_failure_status(long status);

// Whether `head`, the answer to a GET of bytes [offset, offset + size) of the object `version`
// (nullopt: the first request, which learns the version), is the answer asked for, before its
// body is taken.
[[nodiscard]] Judgement judge_head(const ResponseHead& head, std::uint64_t offset, std::uint64_t size,
                                   const std::optional<ObjectVersion>& version);

// Whether a body of `received` bytes completes a range of `size` bytes (a short one is retried:
// a connection dropped mid-body looks the same; a longer one is never taken).
[[nodiscard]] Judgement judge_body(std::uint64_t received, std::uint64_t size);

// Retries with exponential backoff and full jitter: the wait before retry number `attempt`
// (1, 2, ...) is `random` (in [0, 1)) times min(cap, base * 2^(attempt - 1)).
struct RetryPolicy {
  unsigned retries = 5;  // at most this many retries of one range
  double budget_s = 30;  // none once this long has passed since its first try
  double base_s = 0.05;
  double cap_s = 2.0;
  [[nodiscard]] double delay(unsigned attempt, double random) const noexcept;
  // Whether retry number `attempt` may start `elapsed_s` after the first try.
  [[nodiscard]] bool allows(unsigned attempt, double elapsed_s) const noexcept {
    return attempt <= retries && elapsed_s < budget_s;
  }
};

}  // namespace h5tile::detail
