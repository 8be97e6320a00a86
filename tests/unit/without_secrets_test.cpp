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

TEST(WithoutSecrets, QuotesSlashesAndAtSignsInsideSecretsDoNotEndThem) {
  // A review's cases: a URL ends at white space only, so a quote, '/' or '@' in a password or a
  // query never leaves its rest behind; the quote that closes a quoted URL comes back.
  EXPECT_EQ(without_secrets("open 'http://u:it'sPASS@h/f.h5' now"), "open 'http://h/f.h5' now");
  EXPECT_EQ(without_secrets("'gs://u:PASS@b/f.h5?a=it's&sig=SECRET': no"), "'gs://b/f.h5': no");
  EXPECT_EQ(without_secrets("'http://u:PA/SS@127.0.0.1:9/f.h5'"), "'http://127.0.0.1:9/f.h5'");
  EXPECT_EQ(without_secrets("'ftp://u:it'sPASS@h' must"), "'ftp://h' must");
  EXPECT_EQ(without_secrets("x ://u:P@h y _://u:P@h"), "x ://h y _://h");
  EXPECT_EQ(without_secrets("(http://u:p@h/x?sig=S)"), "(http://h/x");
  // An '@' of the path is not user information.
  EXPECT_EQ(without_secrets("'http://h/users/a@b.h5'"), "'http://h/users/a@b.h5'");
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
