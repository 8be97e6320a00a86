// Location: a path parsed once into local or remote, and the schemes h5tile does not serve refused
// by name where the path enters.
#include <gtest/gtest.h>

#include <string>

#include <h5tile/error.hpp>

#include "io/location.hpp"

namespace h5tile::detail {
namespace {

std::string refusal(const std::string& given, Location::Use use) {
  try {
    (void)Location::of(given, use);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(Location, PathsAreLocalAndUrlsOfTheSchemesH5tileReadsAreRemote) {
  for (const char* local : {"x.h5", "/data/run 1/x.h5", "data/x://y.h5", "./s3:x.h5", ""}) {
    const auto location = Location::of(local);
    EXPECT_FALSE(location.remote()) << local;
    EXPECT_EQ(location.text(), local);
    EXPECT_EQ(location.shown(), local);
  }
  for (const char* url : {"http://h/x.h5", "HTTPS://h:8443/a/x.h5", "s3://bucket/k.h5", "webhdfs://nn:9870/x.h5",
                          "swebhdfs://nn/x.h5", "python://object-1"}) {
    const auto location = Location::of(url);
    EXPECT_TRUE(location.remote()) << url;
    EXPECT_EQ(location.text(), url);  // as given: the opener needs all of it
  }
}

TEST(Location, MessagesShowAUrlWithoutItsSecrets) {
  const auto location = Location::of("https://user:PASSWORD@h/x.h5?X-Amz-Signature=SECRET#frag");
  EXPECT_TRUE(location.remote());
  EXPECT_EQ(location.shown(), "https://h/x.h5");
  EXPECT_NE(location.text().find("SECRET"), std::string::npos);
}

TEST(Location, SchemesH5tileDoesNotServeAreRefusedByName) {
  for (const auto& [given, scheme] :
       std::initializer_list<std::pair<const char*, const char*>>{{"gs://b/x.h5", "gs"},
                                                                  {"az://c/x.h5", "az"},
                                                                  {"file:///x.h5", "file"},
                                                                  {"ftp://h/x.h5", "ftp"},
                                                                  {"s3a://b/x.h5", "s3a"},
                                                                  {"simplecache::s3://b/x.h5", "simplecache::s3"}}) {
    const auto read = refusal(given, Location::Use::Read);
    EXPECT_NE(read.find(std::string("does not read '") + scheme + "://'"), std::string::npos) << read;
    EXPECT_NE(read.find("s3://"), std::string::npos) << read;  // and says what it reads
    const auto write = refusal(given, Location::Use::Write);
    EXPECT_NE(write.find(std::string("does not write '") + scheme + "://'"), std::string::npos) << write;
  }
}

TEST(Location, ALocalOneIsNotParsed) {
  EXPECT_FALSE(Location::local("https://h/x.h5").remote());
  EXPECT_FALSE(Location().remote());
  EXPECT_TRUE(Location().text().empty());
}

}  // namespace
}  // namespace h5tile::detail
