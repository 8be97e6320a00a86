// The one redaction of messages: every URL in a text loses its user information, query string and
// fragment; the rest of the text is kept as it is.
#include <gtest/gtest.h>

#include <h5tile/error.hpp>

namespace h5tile {
namespace {

TEST(WithoutSecrets, UserInformationQueryStringsAndFragmentsGo) {
  EXPECT_EQ(without_secrets("cannot read 'http://u:PASS@h:8/x.h5?X-Amz-Signature=SIG#frag': 403"),
            "cannot read 'http://h:8/x.h5': 403");
  EXPECT_EQ(without_secrets("AWS_ENDPOINT_URL 'ftp://u:PASS@h' must start with http://"),
            "AWS_ENDPOINT_URL 'ftp://h' must start with http://");
  EXPECT_EQ(without_secrets("a https://h/a?sig=1 and \"webhdfs://user@h:9/p?delegation=T\" end"),
            "a https://h/a and \"webhdfs://h:9/p\" end");
  // A URL in a URL's query goes with it.
  EXPECT_EQ(without_secrets("'http://h/f.h5?next=https://x/y&sig=S'"), "'http://h/f.h5'");
  EXPECT_EQ(without_secrets("GS://k:s@b/o.h5#x"), "GS://b/o.h5");
}

TEST(WithoutSecrets, TextWithoutUrlsIsKept) {
  for (const char* kept : {"", "plain text", "data/a?b@c.h5", "://x", "ratio 3:// 4", "http://h/x.h5"}) {
    EXPECT_EQ(without_secrets(kept), kept);
  }
  // An s3:// key may hold '?' and '#': messages show it up to them, as any URL (never a secret).
  EXPECT_EQ(without_secrets("s3://u:p@b/k?x=1.h5#f"), "s3://b/k");
}

TEST(WithoutSecrets, EveryExceptionsMessageGoesThroughIt) {
  EXPECT_STREQ(InvalidArgument("bad 'http://h/x?sig=S'").what(), "bad 'http://h/x'");
  EXPECT_STREQ(IoError("cannot read 'https://a:b@h/x': EIO", 5).what(), "cannot read 'https://h/x': EIO");
  EXPECT_STREQ(FileNotFound(std::string("'http://h/x#t' is missing")).what(), "'http://h/x' is missing");
}

}  // namespace
}  // namespace h5tile
