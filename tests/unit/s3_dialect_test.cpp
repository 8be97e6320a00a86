// The S3 and WebHDFS dialects (src/io/http/s3_dialect): URLs, endpoint, region and credentials
// resolved from an environment passed in, and no secret in any message.
#include <string>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "io/http/aws_profile.hpp"
#include "io/http/s3_dialect.hpp"
#include "io/http/s3_settings.hpp"

namespace h5tile::detail {
namespace {

const s3::Environment kKeys{{"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"}, {"AWS_SECRET_ACCESS_KEY", "very-secret-value"}};

s3::Environment with(s3::Environment env, const s3::Environment& more) {
  for (const auto& [k, v] : more) {
    env[k] = v;
  }
  return env;
}

// The message of the InvalidArgument that `f` throws (fails the test when it throws none).
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidArgument thrown";
  return {};
}

TEST(S3Url, SplitsBucketAndKey) {
  const auto loc = s3::parse_url("s3://my-bucket/dir/sub/file.h5");
  EXPECT_EQ(loc.bucket, "my-bucket");
  EXPECT_EQ(loc.key, "dir/sub/file.h5");
  EXPECT_EQ(s3::parse_url("S3://abc/k").bucket, "abc");
}

TEST(S3Url, RefusesOtherSchemesBadBucketsAndMissingKeys) {
  for (const std::string bad : {"http://abc/k", "s3:/abc/k", "abc/k", "s3://ab/k", "s3://Upper/k", "s3://-abc/k",
                                "s3://abc-/k", "s3://a_b_c/k", "s3://abc", "s3://abc/", "s3:///k"}) {
    const std::string msg = message_of([&] { (void)s3::parse_url(bad); });
    EXPECT_NE(msg.find(bad), std::string::npos) << msg;
  }
}

TEST(S3Resolve, VirtualHostedOnAwsWithTheDefaultRegion) {
  const auto req = s3::resolve("s3://my-bucket/a b/c+d.h5", kKeys);
  EXPECT_EQ(req.region, "us-east-1");
  EXPECT_EQ(req.url, "https://my-bucket.s3.us-east-1.amazonaws.com/a%20b/c%2Bd.h5");
  EXPECT_EQ(req.aws_sigv4, "aws:amz:us-east-1:s3");
  EXPECT_EQ(req.userpwd, "AKIDEXAMPLE:very-secret-value");
  EXPECT_FALSE(req.anonymous);
  ASSERT_EQ(req.headers.size(), 1U);
  EXPECT_EQ(req.headers[0], "x-amz-content-sha256: " + std::string(s3::kEmptyPayloadSha256));
}

TEST(S3Resolve, BucketsWithDotsArePathStyleOnAws) {
  const auto req = s3::resolve("s3://my.dotted.bucket/k", with(kKeys, {{"AWS_REGION", "eu-west-1"}}));
  EXPECT_EQ(req.url, "https://s3.eu-west-1.amazonaws.com/my.dotted.bucket/k");
}

TEST(S3Resolve, RegionFromAwsRegionThenAwsDefaultRegion) {
  EXPECT_EQ(s3::resolve("s3://abc/k", with(kKeys, {{"AWS_DEFAULT_REGION", "ap-south-1"}})).region, "ap-south-1");
  const auto both = with(kKeys, {{"AWS_REGION", "eu-north-1"}, {"AWS_DEFAULT_REGION", "ap-south-1"}});
  const auto req = s3::resolve("s3://abc/k", both);
  EXPECT_EQ(req.region, "eu-north-1");
  EXPECT_EQ(req.aws_sigv4, "aws:amz:eu-north-1:s3");
  // An empty value counts as unset.
  EXPECT_EQ(s3::resolve("s3://abc/k", with(kKeys, {{"AWS_REGION", ""}})).region, "us-east-1");
  const std::string msg = message_of([&] {
    (void)s3::resolve("s3://abc/k", with(kKeys, {{"AWS_REGION", "eu west"}}));
  });
  EXPECT_NE(msg.find("AWS_REGION 'eu west'"), std::string::npos) << msg;
}

TEST(S3Resolve, CustomEndpointsArePathStyle) {
  const auto env = with(kKeys, {{"AWS_ENDPOINT_URL", "http://127.0.0.1:8333/"}});
  EXPECT_EQ(s3::resolve("s3://abc/dir/f.h5", env).url, "http://127.0.0.1:8333/abc/dir/f.h5");
  // AWS_ENDPOINT_URL_S3, the service's own variable, wins over the general one.
  const auto both = with(env, {{"AWS_ENDPOINT_URL_S3", "https://s3.example.org"}});
  EXPECT_EQ(s3::resolve("s3://abc/f.h5", both).url, "https://s3.example.org/abc/f.h5");
  const std::string msg = message_of([&] {
    (void)s3::resolve("s3://abc/k", with(kKeys, {{"AWS_ENDPOINT_URL", "127.0.0.1:8333"}}));
  });
  EXPECT_NE(msg.find("AWS_ENDPOINT_URL '127.0.0.1:8333'"), std::string::npos) << msg;
}

TEST(S3Resolve, SessionTokenGoesInTheSecurityTokenHeader) {
  const auto req = s3::resolve("s3://abc/k", with(kKeys, {{"AWS_SESSION_TOKEN", "token-value"}}));
  ASSERT_EQ(req.headers.size(), 2U);
  EXPECT_EQ(req.headers[1], "x-amz-security-token: token-value");
  EXPECT_EQ(req.describe().find("token-value"), std::string::npos);
  EXPECT_NE(req.describe().find("session token"), std::string::npos);
}

TEST(S3Resolve, CredentialsWithControlCharactersAreRefusedNeverSentAsHeaders) {
  // A CR LF in a value that becomes a header would add a header of the setter's choosing.
  for (const char* name : {"AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}) {
    for (const std::string bad : {"tok\r\nX-Injected: 1", "tok\nX-Injected: 1", "tok\rX-Injected", "t\x01k"}) {
      const std::string value = std::string(name) == "AWS_SESSION_TOKEN" ? bad : std::string("AKID") + bad;
      const std::string msg = message_of([&] { (void)s3::resolve("s3://abc/k", with(kKeys, {{name, value}})); });
      EXPECT_NE(msg.find(name), std::string::npos) << msg;
      EXPECT_NE(msg.find("control character"), std::string::npos) << msg;
      EXPECT_EQ(msg.find("X-Injected"), std::string::npos) << msg;
      EXPECT_EQ(msg.find("very-secret-value"), std::string::npos) << msg;
    }
  }
}

TEST(S3Resolve, AnEndpointWithAPasswordIsRefusedWithoutIt) {
  const std::string msg = message_of([] {
    (void)s3::resolve("s3://abc/k", with(kKeys, {{"AWS_ENDPOINT_URL", "ftp://u:PASSWORD@h"}}));
  });
  EXPECT_NE(msg.find("AWS_ENDPOINT_URL"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("PASSWORD"), std::string::npos) << msg;
}

TEST(S3Resolve, NoSignRequestIsAnonymousWhateverKeysAreSet) {
  for (const std::string yes : {"YES", "yes", "true", "1"}) {
    const auto req = s3::resolve("s3://abc/k", with(kKeys, {{"AWS_NO_SIGN_REQUEST", yes}}));
    EXPECT_TRUE(req.anonymous);
    EXPECT_TRUE(req.aws_sigv4.empty());
    EXPECT_TRUE(req.userpwd.empty());
    EXPECT_TRUE(req.headers.empty());
  }
  EXPECT_TRUE(s3::resolve("s3://abc/k", {{"AWS_NO_SIGN_REQUEST", "YES"}}).anonymous);
  EXPECT_FALSE(s3::resolve("s3://abc/k", with(kKeys, {{"AWS_NO_SIGN_REQUEST", "NO"}})).anonymous);
  const std::string msg = message_of([&] {
    (void)s3::resolve("s3://abc/k", with(kKeys, {{"AWS_NO_SIGN_REQUEST", "maybe"}}));
  });
  EXPECT_NE(msg.find("AWS_NO_SIGN_REQUEST"), std::string::npos) << msg;
}

TEST(S3Resolve, MissingCredentialsNameTheVariablesNeverTheValues) {
  std::string msg = message_of([] { (void)s3::resolve("s3://abc/k", {}); });
  EXPECT_NE(msg.find("AWS_ACCESS_KEY_ID"), std::string::npos) << msg;
  EXPECT_NE(msg.find("AWS_NO_SIGN_REQUEST"), std::string::npos) << msg;
  EXPECT_NE(msg.find("s3://abc/k"), std::string::npos) << msg;

  msg = message_of([] { (void)s3::resolve("s3://abc/k", {{"AWS_SECRET_ACCESS_KEY", "very-secret-value"}}); });
  EXPECT_NE(msg.find("AWS_ACCESS_KEY_ID is not"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("very-secret-value"), std::string::npos) << msg;

  msg = message_of([] { (void)s3::resolve("s3://abc/k", {{"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"}}); });
  EXPECT_NE(msg.find("AWS_SECRET_ACCESS_KEY is not"), std::string::npos) << msg;

  msg = message_of([] {
    (void)s3::resolve("s3://abc/k", {{"AWS_ACCESS_KEY_ID", "AK:ID"}, {"AWS_SECRET_ACCESS_KEY", "very-secret-value"}});
  });
  EXPECT_EQ(msg.find("very-secret-value"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("AK:ID"), std::string::npos) << msg;

  const auto req = s3::resolve("s3://abc/k", kKeys);
  EXPECT_EQ(req.describe().find("very-secret-value"), std::string::npos) << req.describe();
  EXPECT_EQ(req.describe(), "GET https://abc.s3.us-east-1.amazonaws.com/k (signed aws:amz:us-east-1:s3)");
}

TEST(S3EncodePath, KeepsUnreservedAndSlashesEncodesTheRest) {
  EXPECT_EQ(s3::encode_path("a-b_c.d~e/f"), "a-b_c.d~e/f");
  EXPECT_EQ(s3::encode_path("a b?c#d%e&f=g"), "a%20b%3Fc%23d%25e%26f%3Dg");
  EXPECT_EQ(s3::encode_path("\xc3\xa9"), "%C3%A9");
}

TEST(WebHdfs, MapsToTheRestApi) {
  const auto loc = webhdfs::parse_url("webhdfs://namenode:9870/data/run 1/file.h5");
  EXPECT_EQ(loc.base, "http://namenode:9870");
  EXPECT_EQ(loc.path, "/data/run 1/file.h5");
  EXPECT_EQ(webhdfs::open_url(loc, 4096, 1048576),
            "http://namenode:9870/webhdfs/v1/data/run%201/file.h5?op=OPEN&offset=4096&length=1048576");
  EXPECT_EQ(webhdfs::status_url(loc), "http://namenode:9870/webhdfs/v1/data/run%201/file.h5?op=GETFILESTATUS");
  EXPECT_EQ(webhdfs::parse_url("swebhdfs://nn:9871/f").base, "https://nn:9871");
}

TEST(WebHdfs, RefusesOtherSchemesAndMissingParts) {
  for (const std::string bad : {"hdfs://nn:9870/f", "webhdfs://nn:9870", "webhdfs://nn:9870/", "webhdfs:///f",
                                "webhdfs://:9870/f", "webhdfs://user@nn:9870/f"}) {
    const std::string msg = message_of([&] { (void)webhdfs::parse_url(bad); });
    EXPECT_NE(msg.find(without_secrets(bad)), std::string::npos) << msg;  // user information left out
  }
}

TEST(AwsProfile, TheProfilesKeysRegionAndEndpointAsTheSdksReadThem) {
  const std::string credentials =
      "[default]\naws_access_key_id = DEFAULTID\naws_secret_access_key = defaultsecret\n\n"
      "# a comment\n[work]\naws_access_key_id=WORKID\naws_secret_access_key = work/secret+=\n"
      "aws_session_token = TOKEN==\n";
  const std::string config =
      "[default]\nregion = eu-west-1\n[profile work]\nregion = us-west-2\nendpoint_url = http://127.0.0.1:9\n"
      "s3 =\n  endpoint_url = http://ignored\n[profile proc]\ncredential_process = /bin/echo x\n";
  const auto work = s3::profile_values(credentials, "creds", config, "config", "work");
  EXPECT_EQ(work.at("AWS_ACCESS_KEY_ID"), "WORKID");
  EXPECT_EQ(work.at("AWS_SECRET_ACCESS_KEY"), "work/secret+=");  // '=' inside a value kept
  EXPECT_EQ(work.at("AWS_SESSION_TOKEN"), "TOKEN==");
  EXPECT_EQ(work.at("AWS_REGION"), "us-west-2");
  EXPECT_EQ(work.at("AWS_ENDPOINT_URL"), "http://127.0.0.1:9");  // not the indented s3 sub-setting
  const auto fallback = s3::profile_values(credentials, "creds", config, "config", "default");
  EXPECT_EQ(fallback.at("AWS_ACCESS_KEY_ID"), "DEFAULTID");
  EXPECT_EQ(fallback.at("AWS_REGION"), "eu-west-1");
  EXPECT_EQ(s3::profile_values(credentials, "creds", config, "config", "proc").at("credential_process"), "/bin/echo x");
  EXPECT_TRUE(s3::profile_values(credentials, "creds", config, "config", "none").empty());
  const std::string msg =
      message_of([] { (void)s3::profile_values("[p]\nsecret-without-equals\n", "f", "", "", "p"); });
  EXPECT_NE(msg.find("'f', line 2"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("secret-without-equals"), std::string::npos) << msg;
}

TEST(AwsProfile, ProcessAndContainerAnswersGiveKeysOrNameWhatIsWrong) {
  const auto p = s3::process_credentials(
      R"({"Version": 1, "AccessKeyId": "ID", "SecretAccessKey": "S", "SessionToken": "T", "Expiration": "x"})", "p");
  EXPECT_EQ(p.at("AWS_ACCESS_KEY_ID"), "ID");
  EXPECT_EQ(p.at("AWS_SESSION_TOKEN"), "T");
  EXPECT_NE(message_of([] {
              (void)s3::process_credentials(R"({"AccessKeyId": "ID", "SecretAccessKey": "S"})", "p");
            }).find("Version"),
            std::string::npos);
  EXPECT_NE(message_of([] { (void)s3::process_credentials("not json", "the process"); }).find("the process"),
            std::string::npos);
  const auto c = s3::container_credentials(R"({"AccessKeyId": "ID", "SecretAccessKey": "S", "Token": "T"})", "c");
  EXPECT_EQ(c.at("AWS_SESSION_TOKEN"), "T");
  EXPECT_NE(
      message_of([] { (void)s3::container_credentials(R"({"AccessKeyId": "ID"})", "c"); }).find("SecretAccessKey"),
      std::string::npos);
}

TEST(AwsProfile, ContainerEndpointsOverPlainHttpOnlyOnLoopbackOrTheEcsHosts) {
  for (const char* ok : {"http://127.0.0.1:8080/creds", "http://localhost/x", "http://[::1]:9/x",
                         "http://169.254.170.2/v2/credentials/id", "http://169.254.170.23/v1/credentials",
                         "https://anywhere.example.org/creds"}) {
    EXPECT_TRUE(s3::container_host_allowed(ok)) << ok;
  }
  for (const char* bad : {"http://evil.example.org/creds", "http://127.evil.example.org/x", "http://10.0.0.1/x",
                          "ftp://127.0.0.1/x", "127.0.0.1/x"}) {
    EXPECT_FALSE(s3::container_host_allowed(bad)) << bad;
  }
}

TEST(AwsProfile, WithoutProfileVariablesTheEnvironmentIsAsGiven) {
  // No HOME, no AWS_PROFILE, no container variables: nothing is read, nothing added.
  EXPECT_EQ(s3::complete_credentials(kKeys), kKeys);
  const s3::Environment none;
  EXPECT_EQ(s3::complete_credentials(none), none);
}

// Settings given for URLs (h5tile.File's storage_options): the longest prefix's laid over the
// environment, an empty value unsetting a variable, other URLs untouched, bad input named.
TEST(S3Settings, TheLongestPrefixIsLaidOverTheEnvironment) {
  s3::set_settings("s3://settings-bucket/", {{"AWS_REGION", "eu-west-3"}});
  s3::set_settings("s3://settings-bucket/deep/file.nc",
                   {{"AWS_NO_SIGN_REQUEST", "YES"}, {"AWS_ACCESS_KEY_ID", ""}, {"AWS_SECRET_ACCESS_KEY", ""}});
  const auto env = with(kKeys, {{"AWS_REGION", "us-west-2"}});
  const auto shallow = s3::with_settings("s3://settings-bucket/other.nc", env);
  EXPECT_EQ(shallow.at("AWS_REGION"), "eu-west-3");
  EXPECT_EQ(shallow.at("AWS_ACCESS_KEY_ID"), "AKIDEXAMPLE");
  const auto deep = s3::with_settings("s3://settings-bucket/deep/file.nc", env);
  EXPECT_EQ(deep.at("AWS_REGION"), "us-west-2");  // the longest prefix alone applies
  EXPECT_EQ(deep.at("AWS_NO_SIGN_REQUEST"), "YES");
  EXPECT_FALSE(deep.contains("AWS_ACCESS_KEY_ID"));
  EXPECT_FALSE(deep.contains("AWS_SECRET_ACCESS_KEY"));
  EXPECT_EQ(s3::with_settings("s3://another-bucket/file.nc", env), env);
  EXPECT_EQ(s3::with_settings("s3://settings-bucket/deep/file.nc4", env).at("AWS_REGION"), "eu-west-3");  // not deep's
  EXPECT_TRUE(s3::with_settings("s3://settings-bucket/deep/file.nc4", env).contains("AWS_ACCESS_KEY_ID"));
  s3::set_settings("s3://settings-bucket/", {});
  s3::set_settings("s3://settings-bucket/deep/file.nc", {});
  EXPECT_EQ(s3::with_settings("s3://settings-bucket/deep/file.nc", env), env);
}

TEST(S3Settings, AKeyWithQuestionMarksAndHashesIsItsOwnObject) {
  s3::set_settings("s3://settings-bucket/data#v2.nc", {{"AWS_REGION", "ap-south-1"}});
  s3::set_settings("s3://someone@settings-bucket/q?x=1.nc", {{"AWS_REGION", "sa-east-1"}});
  EXPECT_EQ(s3::with_settings("s3://settings-bucket/data#v2.nc", {}).at("AWS_REGION"), "ap-south-1");
  EXPECT_EQ(s3::with_settings("s3://settings-bucket/q?x=1.nc", {}).at("AWS_REGION"), "sa-east-1");
  EXPECT_TRUE(s3::with_settings("s3://settings-bucket/data", {}).empty());
  EXPECT_TRUE(s3::with_settings("s3://settings-bucket/q", {}).empty());
  s3::set_settings("s3://settings-bucket/data#v2.nc", {});
  s3::set_settings("s3://settings-bucket/q?x=1.nc", {});
}

TEST(S3Settings, BadInputIsNamed) {
  EXPECT_NE(message_of([] {
              s3::set_settings("https://host/file.nc", {{"AWS_REGION", "x"}});
            }).find("https://host"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              s3::set_settings("s3://b/k", {{"AWS_SECRET", "x"}});
            }).find("'AWS_SECRET'"),
            std::string::npos);
}

}  // namespace
}  // namespace h5tile::detail
