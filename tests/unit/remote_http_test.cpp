// The pure logic of remote reads: joining ranges into requests, the rules every HTTP response is
// held to, the retry policy, URL parsing and redaction, and the block cache's requests.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <h5tile/error.hpp>

#include "io/block_cache.hpp"
#include "io/byte_source.hpp"
#include "io/http/http_policy.hpp"
#include "io/http/url.hpp"
#include "io/remote.hpp"
#include "layout/virtual/remote_sources.hpp"

namespace h5tile::detail {
namespace {

std::vector<ByteRange> ranges_at(std::initializer_list<std::pair<std::uint64_t, std::size_t>> list) {
  std::vector<ByteRange> out;
  for (const auto& [offset, size] : list) out.push_back({offset, size, nullptr});
  return out;
}

TEST(JoinRanges, NeighboursWithinTheGapJoinInOffsetOrder) {
  const auto ranges = ranges_at({{300, 100}, {0, 100}, {150, 100}, {10000, 10}});
  const auto joined = join_ranges(ranges, 50, 1 << 20);
  ASSERT_EQ(joined.size(), 2U);
  EXPECT_EQ(joined[0].offset, 0U);
  EXPECT_EQ(joined[0].size, 400U);
  EXPECT_EQ(joined[0].members, (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(joined[1].offset, 10000U);
  EXPECT_EQ(joined[1].size, 10U);
  EXPECT_EQ(joined[1].members, (std::vector<std::size_t>{3}));
}

TEST(JoinRanges, AGapLargerThanTheThresholdSplits) {
  const auto joined = join_ranges(ranges_at({{0, 100}, {151, 100}}), 50, 1 << 20);
  EXPECT_EQ(joined.size(), 2U);
}

TEST(JoinRanges, RequestsStayWithinTheirLimitAndEmptyRangesAreLeftOut) {
  const auto joined = join_ranges(ranges_at({{0, 60}, {60, 60}, {120, 0}, {120, 60}}), 0, 130);
  ASSERT_EQ(joined.size(), 2U);
  EXPECT_EQ(joined[0].size, 120U);
  EXPECT_EQ(joined[1].offset, 120U);
  EXPECT_EQ(joined[1].members, (std::vector<std::size_t>{3}));
}

TEST(JoinRanges, OverlappingRangesJoin) {
  const auto joined = join_ranges(ranges_at({{0, 100}, {50, 20}, {90, 30}}), 0, 1 << 20);
  ASSERT_EQ(joined.size(), 1U);
  EXPECT_EQ(joined[0].size, 120U);
}

TEST(ContentRange, Parses) {
  const auto r = parse_content_range("bytes 10-19/100");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r->first, 10U);
  EXPECT_EQ(r->last, 19U);
  EXPECT_EQ(*r->total, 100U);
  const auto unknown = parse_content_range(" bytes 0-0/*\r\n");
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->total);
  const auto unsatisfied = parse_content_range("bytes */42");
  ASSERT_TRUE(unsatisfied);
  EXPECT_FALSE(unsatisfied->first);
  EXPECT_EQ(*unsatisfied->total, 42U);
  for (const char* bad : {"", "bytes", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes a-b/c", "bytes 1/2",
                          "bytes */*", "bytes 0-1/-3"}) {
    EXPECT_FALSE(parse_content_range(bad)) << bad;
  }
}

ResponseHead head(long status, std::optional<std::string> range, std::string etag = "") {
  return ResponseHead{status, std::move(range), std::move(etag), ""};
}

TEST(JudgeHead, TheRangeAskedForIsOk) {
  const std::optional<ObjectVersion> v = ObjectVersion{100, "\"a\"", ""};
  EXPECT_EQ(judge_head(head(206, "bytes 10-19/100", "\"a\""), 10, 10, v).verdict, Verdict::Ok);
  EXPECT_EQ(judge_head(head(206, "bytes 0-99/100"), 0, 100, std::nullopt).verdict, Verdict::Ok);
}

TEST(JudgeHead, WrongOrMissingContentRangeAndIgnoredRangeAreErrorsNotRetried) {
  const std::optional<ObjectVersion> v = ObjectVersion{100, "", ""};
  EXPECT_EQ(judge_head(head(206, "bytes 11-20/100"), 10, 10, v).verdict, Verdict::Bad);
  EXPECT_EQ(judge_head(head(206, "bytes 10-18/100"), 10, 10, v).verdict, Verdict::Bad);
  EXPECT_EQ(judge_head(head(206, std::nullopt), 10, 10, v).verdict, Verdict::Bad);
  const auto whole = judge_head(head(200, std::nullopt), 10, 10, v);
  EXPECT_EQ(whole.verdict, Verdict::Bad);
  EXPECT_NE(whole.reason.find("ignored the Range header"), std::string::npos) << whole.reason;
  EXPECT_EQ(judge_head(head(302, std::nullopt), 0, 1, v).verdict, Verdict::Bad);
  // The first response must say the size.
  EXPECT_EQ(judge_head(head(206, "bytes 0-9/*"), 0, 10, std::nullopt).verdict, Verdict::Bad);
}

TEST(JudgeHead, StatusesMapToTheirKinds) {
  const std::optional<ObjectVersion> v = ObjectVersion{100, "", ""};
  EXPECT_EQ(judge_head(head(404, std::nullopt), 0, 1, v).verdict, Verdict::NotFound);
  EXPECT_EQ(judge_head(head(410, std::nullopt), 0, 1, v).verdict, Verdict::NotFound);
  EXPECT_EQ(judge_head(head(403, std::nullopt), 0, 1, v).verdict, Verdict::Forbidden);
  EXPECT_EQ(judge_head(head(401, std::nullopt), 0, 1, v).verdict, Verdict::Forbidden);
  EXPECT_EQ(judge_head(head(412, std::nullopt), 0, 1, v).verdict, Verdict::Changed);
  EXPECT_EQ(judge_head(head(416, "bytes */50"), 60, 1, v).verdict, Verdict::Changed);
  for (const long s : {429L, 500L, 502L, 503L, 504L}) {
    EXPECT_EQ(judge_head(head(s, std::nullopt), 0, 1, v).verdict, Verdict::Retry) << s;
  }
}

TEST(JudgeHead, AnotherSizeOrVersionIsAChangedObject) {
  const std::optional<ObjectVersion> v = ObjectVersion{100, "\"a\"", "Tue, 01 Dec 2026 10:00:00 GMT"};
  EXPECT_EQ(judge_head(head(206, "bytes 0-9/101"), 0, 10, v).verdict, Verdict::Changed);
  EXPECT_EQ(judge_head(head(206, "bytes 0-9/100", "\"b\""), 0, 10, v).verdict, Verdict::Changed);
  auto later = head(206, "bytes 0-9/100");
  later.last_modified = "Tue, 01 Dec 2026 10:00:01 GMT";
  EXPECT_EQ(judge_head(later, 0, 10, v).verdict, Verdict::Changed);
}

TEST(JudgeBody, ShortIsRetriedLongIsAnError) {
  EXPECT_EQ(judge_body(10, 10).verdict, Verdict::Ok);
  EXPECT_EQ(judge_body(9, 10).verdict, Verdict::Retry);
  EXPECT_EQ(judge_body(11, 10).verdict, Verdict::Bad);
}

TEST(RetryPolicy, BackoffGrowsToItsCapWithJitterAndIsBounded) {
  const RetryPolicy p{.retries = 3, .budget_s = 10, .base_s = 0.1, .cap_s = 0.25};
  EXPECT_DOUBLE_EQ(p.delay(1, 0.999999), 0.1 * 0.999999);
  EXPECT_DOUBLE_EQ(p.delay(2, 0.5), 0.1);
  EXPECT_DOUBLE_EQ(p.delay(3, 1.0), 0.25);  // capped
  EXPECT_DOUBLE_EQ(p.delay(40, 1.0), 0.25);
  EXPECT_DOUBLE_EQ(p.delay(2, 0.0), 0.0);
  EXPECT_TRUE(p.allows(3, 9.9));
  EXPECT_FALSE(p.allows(4, 0));
  EXPECT_FALSE(p.allows(1, 10));
}

TEST(Url, WhichStringsAreUrls) {
  EXPECT_TRUE(is_url("http://h/x.h5"));
  EXPECT_TRUE(is_url("HTTPS://h/x.h5"));
  EXPECT_TRUE(is_url("s3://bucket/key"));
  EXPECT_TRUE(is_url("webhdfs://h:9870/p"));
  EXPECT_FALSE(is_url("data/x.h5"));
  EXPECT_FALSE(is_url("/tmp/http://x"));
  EXPECT_FALSE(is_url("ftp://h/x"));
  EXPECT_FALSE(is_url("http:/h/x"));
}

TEST(Url, PartsAndRedaction) {
  const auto url = parse_url("HTTPS://user:secret@example.org:8443/a/b.h5?X-Amz-Signature=abc#frag");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->authority, "example.org:8443");
  EXPECT_EQ(url->path, "/a/b.h5");
  EXPECT_EQ(url->query, "X-Amz-Signature=abc");
  EXPECT_EQ(url->userinfo, "user:secret");
  EXPECT_EQ(redacted(*url), "https://example.org:8443/a/b.h5");
  EXPECT_EQ(full_text(*url), "https://user:secret@example.org:8443/a/b.h5?X-Amz-Signature=abc");
  EXPECT_EQ(redacted("http://h/x?sig=1"), "http://h/x");
  EXPECT_EQ(parse_url("http://h")->path, "/");
  EXPECT_FALSE(parse_url("http:///x"));
  EXPECT_FALSE(parse_url("x.h5"));
}

TEST(Url, RelativeNamesResolveOnlyInsideTheFolder) {
  const auto base = *parse_url("http://h/data/run/x.h5?sig=1");
  const auto tile = resolve_inside(base, "x.tiles/tile-0.h5");
  ASSERT_TRUE(tile);
  EXPECT_EQ(full_text(*tile), "http://h/data/run/x.tiles/tile-0.h5");  // the signature is the base's own
  for (const char* outside :
       {"../y.h5", "/etc/passwd", "a/../../y.h5", "./y.h5", "http://evil/y.h5", "file:///etc/passwd", "a//b.h5", "dir/",
        "y.h5?x=1", "", "c:\\y.h5", "%2e%2e/y.h5", "..%2fy.h5", ".%2e/y.h5", "%2E%2E%2Fy.h5", "a/%2e%2E/%2e%2e/y.h5",
        "a%5c..%5cy.h5", "a\ny.h5"}) {
    EXPECT_FALSE(resolve_inside(base, outside)) << outside;
  }
}

TEST(Url, HttpNamesAreEncodedSoThatTheServerFindsExactlyThatFile) {
  const auto base = *parse_url("http://h/data/x.h5");
  // '%' itself is encoded: "%41" names a file of those three characters, never "A".
  EXPECT_EQ(full_text(*resolve_inside(base, "t dir/a%41 b+c.h5")), "http://h/data/t%20dir/a%2541%20b%2Bc.h5");
  // S3 keys and WebHDFS paths are names: their dialects encode the whole path.
  EXPECT_EQ(full_text(*resolve_inside(*parse_url("s3://bkt/data/x.h5"), "a b.h5")), "s3://bkt/data/a b.h5");
  EXPECT_EQ(full_text(*resolve_inside(*parse_url("webhdfs://h:1/d/x.h5"), "a b.h5")), "webhdfs://h:1/d/a b.h5");
}

TEST(Url, SchemesH5tileDoesNotReadAreNamedNotTakenForLocalPaths) {
  for (const auto& [text, scheme] :
       std::vector<std::pair<std::string, std::string>>{{"gs://b/x.h5", "gs"},
                                                        {"az://c/x.h5", "az"},
                                                        {"s3a://b/x.h5", "s3a"},
                                                        {"ftp://h/x.h5", "ftp"},
                                                        {"file:///tmp/x.h5", "file"},
                                                        {"simplecache::s3://b/x.h5", "simplecache::s3"},
                                                        {"GS://b/x", "GS"}}) {
    EXPECT_EQ(unsupported_scheme(text), scheme) << text;
  }
  for (const char* fine :
       {"http://h/x.h5", "S3://b/k", "webhdfs://h:1/p", "data/x.h5", "/abs/x.h5", "a:b/c.h5", "./x://y", "1x://y"}) {
    EXPECT_FALSE(unsupported_scheme(fine)) << fine;
  }
}

TEST(Url, MessagesShowLocalPathsAsTheyAreAndUrlsRedacted) {
  EXPECT_EQ(display_name("data/a?b@c.h5"), "data/a?b@c.h5");
  EXPECT_EQ(display_name("http://u:p@h:1/x.h5?X-Amz-Signature=s#f"), "http://h:1/x.h5");
  EXPECT_EQ(display_name("S3://bucket/k.h5?X-Amz-Credential=c"), "s3://bucket/k.h5");
}

TEST(RemoteSources, NamesResolveInsideTheFolderOrAreRefusedWithoutTheirSecrets) {
  const auto base = *parse_url("http://h/run/x.h5?X-Amz-Signature=SECRET");
  EXPECT_FALSE(remote_source_url(base, ".", "here"));  // the file itself
  EXPECT_EQ(full_text(*remote_source_url(base, "x.h5.tiles/t.h5", "here")), "http://h/run/x.h5.tiles/t.h5");
  for (const char* outside : {"../y.h5", "/run/y.h5", "http://other/y.h5?sig=SECRET", "./y.h5", "file:///y.h5"}) {
    try {
      (void)remote_source_url(base, outside, "dataset '/d' in 'http://h/run/x.h5'");
      ADD_FAILURE() << outside;
    } catch (const VirtualSourceError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("outside the folder of the remote file"), std::string::npos) << message;
      EXPECT_NE(message.find("'http://h/run/'"), std::string::npos) << message;
      EXPECT_EQ(message.find("SECRET"), std::string::npos) << message;
    }
  }
}

TEST(RemoteSources, SourceObjectsOpenWithASmallFirstRequest) {
  RemoteOptions options;
  options.block_size = std::uint64_t{8} << 20;
  EXPECT_EQ(source_object_options(options).block_size, std::uint64_t{64} << 10);
  options.block_size = 4096;
  EXPECT_EQ(source_object_options(options).block_size, 4096U);
}

TEST(OpenRemote, S3WithoutCredentialsIsAClearErrorWithoutTheQueryString) {
  try {
    (void)open_remote("s3://bucket/key.h5?X-Amz-Credential=secret", RemoteOptions{});
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no AWS credentials for 's3://bucket/key.h5'"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
  }
}

// A byte source of `size` bytes (byte i is i % 251) that counts its reads.
class CountingSource final : public ByteSource {
 public:
  explicit CountingSource(std::uint64_t size, std::uint64_t resident = 0) : size_(size), resident_(resident) {}
  [[nodiscard]] std::string name() const override { return "counting"; }
  [[nodiscard]] std::uint64_t size() const override { return size_; }
  [[nodiscard]] std::uint64_t resident_bytes() const noexcept override { return resident_; }
  void read_at(void* buffer, std::size_t size, std::uint64_t offset) const override {
    if (offset + size > size_) throw IoError("past the end", EIO);
    ++reads;
    auto* out = static_cast<unsigned char*>(buffer);
    for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<unsigned char>((offset + i) % 251);
  }
  mutable std::atomic<int> reads{0};

 private:
  std::uint64_t size_;
  std::uint64_t resident_;
};

void expect_bytes(const std::vector<unsigned char>& got, std::uint64_t offset) {
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], (offset + i) % 251) << "byte " << offset + i;
}

TEST(BlockCache, SmallReadsShareBlocksAndMissingBlocksComeInOneRequest) {
  auto source = std::make_shared<CountingSource>(100000);
  BlockCache cache(source, 4096, 1 << 20);
  std::vector<unsigned char> out(100);
  cache.read(out.data(), out.size(), 5000);
  expect_bytes(out, 5000);
  cache.read(out.data(), out.size(), 6000);  // the same block
  expect_bytes(out, 6000);
  EXPECT_EQ(source->reads.load(), 1);
  out.resize(5000);
  cache.read(out.data(), out.size(), 10000);  // blocks 2 to 3, both missing: one request
  expect_bytes(out, 10000);
  EXPECT_EQ(source->reads.load(), 2);
  out.resize(10);
  cache.read(out.data(), out.size(), 99990);  // the end of the last, short block
  expect_bytes(out, 99990);
  EXPECT_THROW(cache.read(out.data(), out.size(), 99999), IoError);
}

TEST(BlockCache, LargeReadsBypassIt) {
  auto source = std::make_shared<CountingSource>(100000);
  BlockCache cache(source, 4096, 1 << 20);
  std::vector<unsigned char> out(20000);
  cache.read(out.data(), out.size(), 1);
  expect_bytes(out, 1);
  out.resize(10);
  cache.read(out.data(), out.size(), 2);  // not cached by the large read
  EXPECT_EQ(source->reads.load(), 2);
}

TEST(BlockCache, KeepsAtMostItsBytes) {
  auto source = std::make_shared<CountingSource>(100000);
  BlockCache cache(source, 4096, 2 * 4096);
  std::vector<unsigned char> out(1);
  for (const std::uint64_t at : {0U, 5000U, 9000U, 0U}) cache.read(out.data(), 1, at);
  EXPECT_EQ(source->reads.load(), 4);  // block 0 was dropped for block 2
}

// Runs the bodies one after another, counting the calls (the engine's pool runs them side by side).
struct SerialRun {
  int calls = 0;
  RunParallel run() {
    return [this](std::size_t count, const std::function<void(std::size_t)>& body) {
      ++calls;
      for (std::size_t i = 0; i < count; ++i) body(i);
    };
  }
};

TEST(BlockCache, TheSourcesResidentBytesAreReadFromItAndTakeNoBlock) {
  auto source = std::make_shared<CountingSource>(100000, 8192);  // its first 8 KiB held in memory
  BlockCache cache(source, 4096, 2 * 4096);
  std::vector<unsigned char> out(100);
  for (const std::uint64_t at : {9000U, 13000U}) cache.read(out.data(), out.size(), at);  // blocks 2 and 3
  EXPECT_EQ(source->reads.load(), 2);
  for (const std::uint64_t at : {0U, 5000U, 8092U}) {
    cache.read(out.data(), out.size(), at);
    expect_bytes(out, at);
  }
  EXPECT_EQ(source->reads.load(), 5);  // each from the source (its memory), none kept as a block
  for (const std::uint64_t at : {9000U, 13000U}) cache.read(out.data(), out.size(), at);
  EXPECT_EQ(source->reads.load(), 5);  // blocks 2 and 3 still kept: the resident reads evicted neither
  SerialRun serial;
  const std::vector<BlockCache::Extent> inside = {{100, 50}};
  const auto got = cache.prefetch(inside, serial.run());
  ASSERT_EQ(got[0].size(), 50U);
  for (std::size_t i = 0; i < got[0].size(); ++i) EXPECT_EQ(static_cast<unsigned>(got[0][i]), (100 + i) % 251);
  EXPECT_EQ(source->reads.load(), 6);
}

TEST(BlockCache, ClearLetsGoOfBlocksAndExtentsAndLaterReadsFetchThemAgain) {
  auto source = std::make_shared<CountingSource>(100000);
  BlockCache cache(source, 4096, 1 << 20);
  SerialRun serial;
  std::vector<unsigned char> out(100);
  cache.read(out.data(), out.size(), 5000);
  const std::vector<BlockCache::Extent> far = {{60000, 100}};
  (void)cache.prefetch(far, serial.run());
  EXPECT_EQ(source->reads.load(), 2);
  cache.read(out.data(), out.size(), 60000);  // from the extent
  EXPECT_EQ(source->reads.load(), 2);
  cache.clear();
  cache.read(out.data(), out.size(), 5000);
  expect_bytes(out, 5000);
  cache.read(out.data(), out.size(), 60000);
  expect_bytes(out, 60000);
  EXPECT_EQ(source->reads.load(), 4);
}

TEST(BlockCache, PrefetchedExtentsServeLaterReadsWithoutRequests) {
  auto source = std::make_shared<CountingSource>(100000);
  BlockCache cache(source, 4096, 1 << 20);
  SerialRun serial;
  // Six extents in six blocks: each its own request (blocks would cost 4 KiB each for 100 bytes).
  std::vector<BlockCache::Extent> extents;
  for (const std::uint64_t at : {10000U, 20000U, 30000U, 40000U, 60000U, 70000U}) extents.push_back({at, 100});
  extents.push_back({99990, 20});  // past the end: no request, no bytes
  const auto got = cache.prefetch(extents, serial.run());
  EXPECT_EQ(source->reads.load(), 6);
  ASSERT_EQ(got.size(), 7U);
  EXPECT_EQ(got[0].size(), 100U);
  EXPECT_TRUE(got[6].empty());
  std::vector<unsigned char> out(100);
  cache.read(out.data(), out.size(), 70000);
  expect_bytes(out, 70000);
  out.resize(50);
  cache.read(out.data(), out.size(), 30020);  // inside an extent
  expect_bytes(out, 30020);
  EXPECT_EQ(source->reads.load(), 6);
  (void)cache.prefetch(extents, serial.run());  // held already: no requests
  EXPECT_EQ(source->reads.load(), 6);
  cache.read(out.data(), out.size(), 30080);  // reaches past an extent: from the blocks
  expect_bytes(out, 30080);
  EXPECT_EQ(source->reads.load(), 7);
  const std::vector<BlockCache::Extent> cached = {{29000, 500}};  // inside the block just cached
  EXPECT_EQ(cache.prefetch(cached, serial.run())[0].size(), 500U);
  EXPECT_EQ(source->reads.load(), 7);
}

TEST(BlockCache, PrefetchFetchesAFewBlocksWholeAndNeighboursInOneRequest) {
  auto source = std::make_shared<CountingSource>(100000);
  BlockCache cache(source, 4096, 1 << 20);
  SerialRun serial;
  const std::vector<BlockCache::Extent> few = {{50500, 100}, {50000, 100}, {52000, 1000}, {90000, 10}};
  const auto got = cache.prefetch(few, serial.run());  // two blocks, side by side
  EXPECT_EQ(source->reads.load(), 2);
  ASSERT_EQ(got[2].size(), 1000U);
  std::vector<unsigned char> bytes(got[2].size());
  std::memcpy(bytes.data(), got[2].data(), bytes.size());
  expect_bytes(bytes, 52000);
  std::vector<unsigned char> out(3000);
  cache.read(out.data(), out.size(), 49200);  // anywhere in those blocks
  expect_bytes(out, 49200);
  EXPECT_EQ(source->reads.load(), 2);
  BlockCache spread(source, 4096, 1 << 20);
  // 8 extents 2 KiB apart (in 4 blocks) and 2 far away: 6 blocks, too many to fetch whole; the 8
  // join into 4 requests of at most a block.
  std::vector<BlockCache::Extent> neighbours;
  for (std::uint64_t k = 0; k < 8; ++k) neighbours.push_back({1000 + k * 2048, 100});
  neighbours.push_back({80000, 100});
  neighbours.push_back({90000, 100});
  (void)spread.prefetch(neighbours, serial.run());
  EXPECT_EQ(source->reads.load(), 2 + 6);
}

TEST(BlockCache, PrefetchKeepsAtMostTheBlocksBytesDroppingTheOldest) {
  auto source = std::make_shared<CountingSource>(100000);
  BlockCache cache(source, 4096, 2 * 4096);  // 8 KiB of extents
  SerialRun serial;
  const std::vector<BlockCache::Extent> first = {{0, 4096}, {10000, 4096}};
  (void)cache.prefetch(first, serial.run());
  const std::vector<BlockCache::Extent> third = {{20000, 4096}};
  (void)cache.prefetch(third, serial.run());  // the oldest, at 0, is dropped
  EXPECT_EQ(source->reads.load(), 3);
  std::vector<unsigned char> out(10);
  cache.read(out.data(), out.size(), 20000);
  cache.read(out.data(), out.size(), 10000);
  EXPECT_EQ(source->reads.load(), 3);
  cache.read(out.data(), out.size(), 0);
  EXPECT_EQ(source->reads.load(), 4);
}

}  // namespace
}  // namespace h5tile::detail
