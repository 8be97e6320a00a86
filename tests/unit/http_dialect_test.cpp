// The dialects of the HTTP byte source (src/io/http/dialect): the request for a range of an
// object on a plain HTTP server, on S3 (signed and anonymous) and on WebHDFS, and what answer
// each takes as good. No server: the transport is tested against real ones from Python.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "io/http/dialect.hpp"
#include "io/http/s3_dialect.hpp"

namespace h5tile::detail {
namespace {

std::unique_ptr<const HttpDialect> dialect_of(const std::string& text, const RemoteOptions& options = {}) {
  const auto url = parse_url(text);
  EXPECT_TRUE(url) << text;
  return make_dialect(*url, options);
}

bool has(const std::vector<std::string>& headers, const std::string& header) {
  return std::ranges::find(headers, header) != headers.end();
}

RemoteOptions aws(s3::Environment env) { return RemoteOptions{.aws = std::move(env)}; }

const ObjectVersion kStrong{.size = 1000, .etag = "\"abc\""};
const ObjectVersion kWeak{.size = 1000, .etag = "W/\"abc\""};

ResponseHead head(long status, std::optional<std::string> range = std::nullopt,
                  std::optional<std::uint64_t> length = std::nullopt, std::string etag = {},
                  std::string last_modified = {}) {
  return {.status = status,
          .content_range = std::move(range),
          .etag = std::move(etag),
          .last_modified = std::move(last_modified),
          .content_length = length};
}

TEST(PlainHttpDialect, RangedGetsOfTheUrlAsGivenPinnedByAStrongEtag) {
  const auto d = dialect_of("https://host:8443/dir/f.h5?X-Amz-Signature=abc");
  EXPECT_FALSE(d->status_request());
  const auto first = d->range_request(0, 4096, nullptr);
  EXPECT_EQ(first.url, "https://host:8443/dir/f.h5?X-Amz-Signature=abc");  // a presigned URL keeps its query
  EXPECT_TRUE(first.range_header);
  EXPECT_FALSE(first.follow_redirects);
  EXPECT_TRUE(first.aws_sigv4.empty() && first.userpwd.empty() && first.headers.empty());
  EXPECT_EQ(d->range_request(10, 20, &kStrong).headers, std::vector<std::string>{"If-Match: \"abc\""});
  EXPECT_TRUE(d->range_request(10, 20, &kWeak).headers.empty());  // a weak ETag never matches If-Match
  EXPECT_EQ(d->judge_range(head(206, "bytes 10-29/1000", {}, "\"abc\""), 10, 20, kStrong).verdict, Verdict::Ok);
  EXPECT_EQ(d->judge_range(head(200), 10, 20, kStrong).verdict, Verdict::Bad);
}

TEST(PlainHttpDialect, EveryAnswerMustCarryTheValidatorOfTheOpen) {
  const auto d = dialect_of("http://host/f.h5");
  // A strong ETag at open: an answer without one (a server that dropped it) could be any version.
  const auto dropped = d->judge_range(head(206, "bytes 10-29/1000"), 10, 20, kStrong);
  EXPECT_EQ(dropped.verdict, Verdict::Changed);
  EXPECT_NE(dropped.reason.find("no ETag"), std::string::npos) << dropped.reason;
  EXPECT_EQ(d->judge_range(head(206, "bytes 10-29/1000", {}, "\"new\""), 10, 20, kStrong).verdict, Verdict::Changed);
  // A Last-Modified as the validator (no strong ETag): it must come back, and unchanged.
  const ObjectVersion dated{.size = 1000, .last_modified = "Sat, 05 Dec 2026 07:00:00 GMT"};
  EXPECT_EQ(
      d->judge_range(head(206, "bytes 10-29/1000", {}, {}, "Sat, 05 Dec 2026 07:00:00 GMT"), 10, 20, dated).verdict,
      Verdict::Ok);
  EXPECT_EQ(d->judge_range(head(206, "bytes 10-29/1000"), 10, 20, dated).verdict, Verdict::Changed);
  EXPECT_EQ(
      d->judge_range(head(206, "bytes 10-29/1000", {}, {}, "Sat, 05 Dec 2026 07:00:01 GMT"), 10, 20, dated).verdict,
      Verdict::Changed);
}

TEST(S3Dialect, SignedRequestsCarryTheSignatureOptionsAndTheSessionToken) {
  const auto d = dialect_of("s3://my-bucket/a/f.h5", aws({{"AWS_ACCESS_KEY_ID", "AKID"},
                                                          {"AWS_SECRET_ACCESS_KEY", "s3cr3t"},
                                                          {"AWS_SESSION_TOKEN", "tok"},
                                                          {"AWS_REGION", "eu-west-1"},
                                                          {"AWS_ENDPOINT_URL", "http://127.0.0.1:8333/"}}));
  EXPECT_FALSE(d->status_request());
  const auto r = d->range_request(0, 100, &kStrong);
  EXPECT_EQ(r.url, "http://127.0.0.1:8333/my-bucket/a/f.h5");  // path-style on a custom endpoint
  EXPECT_TRUE(r.range_header);
  EXPECT_FALSE(r.follow_redirects);
  EXPECT_EQ(r.aws_sigv4, "aws:amz:eu-west-1:s3");
  EXPECT_EQ(r.userpwd, "AKID:s3cr3t");
  EXPECT_TRUE(has(r.headers, "x-amz-security-token: tok"));
  EXPECT_TRUE(has(r.headers, "x-amz-content-sha256: " + std::string(s3::kEmptyPayloadSha256)));
  EXPECT_TRUE(has(r.headers, "If-Match: \"abc\""));
  EXPECT_FALSE(has(d->range_request(0, 100, nullptr).headers, "If-Match: \"abc\""));
}

TEST(S3Dialect, AnonymousRequestsAreNotSigned) {
  const auto d = dialect_of(
      "s3://pub-bucket/f.h5",
      aws({{"AWS_NO_SIGN_REQUEST", "YES"}, {"AWS_ACCESS_KEY_ID", "AKID"}, {"AWS_SECRET_ACCESS_KEY", "s3cr3t"}}));
  const auto r = d->range_request(0, 100, nullptr);
  EXPECT_EQ(r.url, "https://pub-bucket.s3.us-east-1.amazonaws.com/f.h5");
  EXPECT_TRUE(r.aws_sigv4.empty());
  EXPECT_TRUE(r.userpwd.empty());
  EXPECT_TRUE(r.headers.empty());
}

TEST(S3Dialect, KeysHoldingQuestionMarksAndHashesAreEncodedNotCut) {
  // boto3 reads the key "f.h5?versionId=1" from s3://my-bucket/f.h5?versionId=1: so does h5tile,
  // never the object "f.h5".
  const auto anonymous = aws({{"AWS_NO_SIGN_REQUEST", "1"}});
  EXPECT_EQ(dialect_of("s3://my-bucket/f.h5?versionId=1", anonymous)->range_request(0, 1, nullptr).url,
            "https://my-bucket.s3.us-east-1.amazonaws.com/f.h5%3FversionId%3D1");
  EXPECT_EQ(dialect_of("s3://my-bucket/hash#frag.h5", anonymous)->range_request(0, 1, nullptr).url,
            "https://my-bucket.s3.us-east-1.amazonaws.com/hash%23frag.h5");
}

TEST(S3Dialect, AWrongRegionIsSaid) {
  const auto d = dialect_of("s3://my-bucket/f.h5", aws({{"AWS_NO_SIGN_REQUEST", "1"}}));
  EXPECT_EQ(d->range_request(0, 1, nullptr).url, "https://my-bucket.s3.us-east-1.amazonaws.com/f.h5");
  const auto j = d->judge_range(head(301), 0, 100, std::nullopt);
  EXPECT_EQ(j.verdict, Verdict::Bad);
  EXPECT_NE(j.reason.find("AWS_REGION"), std::string::npos) << j.reason;
  const auto forbidden = d->judge_range(head(403), 0, 100, std::nullopt);
  EXPECT_EQ(forbidden.verdict, Verdict::Forbidden);
  EXPECT_NE(forbidden.reason.find("AWS_NO_SIGN_REQUEST"), std::string::npos) << forbidden.reason;
  EXPECT_EQ(d->judge_range(head(404), 0, 100, std::nullopt).verdict, Verdict::NotFound);
  EXPECT_EQ(d->judge_range(head(503), 0, 100, std::nullopt).verdict, Verdict::Retry);
}

TEST(S3Dialect, MissingCredentialsAreRefusedWhenTheDialectIsMade) {
  try {
    (void)dialect_of("s3://my-bucket/f.h5", aws({{"AWS_SECRET_ACCESS_KEY", "s3cr3t"}}));
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("AWS_ACCESS_KEY_ID"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("s3cr3t"), std::string::npos) << msg;
  }
}

TEST(WebHdfsDialect, StatusFirstThenOpenWithOffsetAndLengthFollowingRedirects) {
  const auto d = dialect_of("webhdfs://nn:9870/data/f.h5");
  const auto status = d->status_request();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->url, "http://nn:9870/webhdfs/v1/data/f.h5?op=GETFILESTATUS");
  EXPECT_FALSE(status->range_header);
  const auto r = d->range_request(4096, 100, nullptr);
  EXPECT_EQ(r.url, "http://nn:9870/webhdfs/v1/data/f.h5?op=OPEN&offset=4096&length=100");
  EXPECT_FALSE(r.range_header);
  EXPECT_TRUE(r.follow_redirects);
  EXPECT_TRUE(r.userpwd.empty() && r.aws_sigv4.empty());
  EXPECT_EQ(dialect_of("swebhdfs://nn:9871/f.h5")->range_request(0, 1, nullptr).url,
            "https://nn:9871/webhdfs/v1/f.h5?op=OPEN&offset=0&length=1");
}

TEST(WebHdfsDialect, TheQueryStringGoesWithEveryRequestButMayNotSetTheOperation) {
  const auto d = dialect_of("webhdfs://nn:9870/f.h5?user.name=alice");
  EXPECT_EQ(d->status_request()->url, "http://nn:9870/webhdfs/v1/f.h5?op=GETFILESTATUS&user.name=alice");
  EXPECT_EQ(d->range_request(0, 10, nullptr).url,
            "http://nn:9870/webhdfs/v1/f.h5?op=OPEN&offset=0&length=10&user.name=alice");
  for (const char* bad : {"webhdfs://nn:9870/f.h5?op=DELETE", "webhdfs://nn:9870/f.h5?user.name=a&offset=5",
                          "webhdfs://nn:9870/f.h5?length=1&delegation=SECRET"}) {
    try {
      (void)dialect_of(bad);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("webhdfs://nn:9870/f.h5'"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("SECRET"), std::string::npos) << e.what();
    }
  }
}

TEST(WebHdfsDialect, TheStatusGivesTheSizeAndModificationTime) {
  const auto d = dialect_of("webhdfs://nn:9870/f.h5");
  Judgement j;
  const auto v = d->parse_status(
      R"({"FileStatus":{"accessTime":1,"blockSize":134217728,"length":123456,"modificationTime":1700000000123,)"
      R"("owner":"hdfs","pathSuffix":"","permission":"644","replication":3,"type":"FILE"}})",
      j);
  ASSERT_TRUE(v) << j.reason;
  EXPECT_EQ(v->size, 123456U);
  EXPECT_TRUE(v->etag.empty());
  EXPECT_NE(v->last_modified.find("1700000000123"), std::string::npos);
  EXPECT_EQ(d->judge_status(head(200)).verdict, Verdict::Ok);
  EXPECT_EQ(d->judge_status(head(404)).verdict, Verdict::NotFound);
  EXPECT_EQ(d->judge_status(head(307)).verdict, Verdict::Bad);
}

TEST(WebHdfsDialect, StatusesWithoutAFileLengthAreRefused) {
  for (const char* bad : {"not json", "[]", R"({"FileStatus":{}})", R"({"FileStatus":{"length":-1,"type":"FILE"}})",
                          R"({"FileStatus":{"length":"12","type":"FILE"}})",
                          R"({"FileStatus":{"length":0,"type":"DIRECTORY"}})", R"({"RemoteException":{}})"}) {
    std::string error;
    EXPECT_FALSE(webhdfs::parse_file_status(bad, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
  std::string error;
  const auto empty = webhdfs::parse_file_status(R"({"FileStatus":{"length":0,"type":"FILE"}})", error);
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->length, 0U);
  EXPECT_EQ(empty->modification_time, 0U);
}

TEST(WebHdfsDialect, OpenAnswers200WithExactlyTheLengthAsked) {
  const auto d = dialect_of("webhdfs://nn:9870/f.h5");
  const std::optional<ObjectVersion> v = ObjectVersion{.size = 1000};
  EXPECT_EQ(d->judge_range(head(200, std::nullopt, 100), 50, 100, v).verdict, Verdict::Ok);
  EXPECT_EQ(d->judge_range(head(200), 50, 100, v).verdict, Verdict::Ok);  // chunked: the body is counted
  const auto longer = d->judge_range(head(200, std::nullopt, 101), 50, 100, v);
  EXPECT_EQ(longer.verdict, Verdict::Bad);
  EXPECT_NE(longer.reason.find("101"), std::string::npos) << longer.reason;
  EXPECT_EQ(d->judge_range(head(200, std::nullopt, 99), 50, 100, v).verdict, Verdict::Bad);
  EXPECT_EQ(d->judge_range(head(206, "bytes 50-149/1000"), 50, 100, v).verdict, Verdict::Bad);
  EXPECT_EQ(d->judge_range(head(307), 50, 100, v).verdict, Verdict::Bad);  // a redirect not followed
  EXPECT_EQ(d->judge_range(head(404), 50, 100, v).verdict, Verdict::NotFound);
  EXPECT_EQ(d->judge_range(head(403), 50, 100, v).verdict, Verdict::Forbidden);
  EXPECT_EQ(d->judge_range(head(503), 50, 100, v).verdict, Verdict::Retry);
}

TEST(Dialects, OnePerScheme) {
  EXPECT_TRUE(dialect_of("http://h/f.h5"));
  EXPECT_TRUE(dialect_of("HTTPS://h/f.h5"));
  const auto ftp = parse_url("http://h/f");
  ASSERT_TRUE(ftp);
  Url other = *ftp;
  other.scheme = "ftp";
  EXPECT_THROW((void)make_dialect(other, {}), InvalidArgument);
  EXPECT_EQ(if_match_header(nullptr), "");
  EXPECT_EQ(if_match_header(&kStrong), "If-Match: \"abc\"");
  EXPECT_EQ(if_match_header(&kWeak), "");
}

}  // namespace
}  // namespace h5tile::detail
