// The one size syntax (settings::parse_size): environment variables and the h5tile command's
// size options read sizes through it.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>
#include <h5tile/version.hpp>

namespace h5tile {
namespace {

using settings::parse_size;

TEST(ParseSize, NumbersAndBinarySuffixesInAnyCase) {
  EXPECT_EQ(parse_size("4096"), 4096U);
  EXPECT_EQ(parse_size("1k"), 1024U);
  EXPECT_EQ(parse_size("1K"), 1024U);
  EXPECT_EQ(parse_size("512M"), 512U << 20);
  EXPECT_EQ(parse_size("1g"), std::uint64_t{1} << 30);
  EXPECT_EQ(parse_size("2GiB"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_size("2 gb"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_size("3T"), std::uint64_t{3} << 40);
  EXPECT_EQ(parse_size("100B"), 100U);
}

TEST(ParseSize, FractionsRoundDownToWholeBytes) {
  EXPECT_EQ(parse_size("1.5G"), std::uint64_t{3} << 29);
  EXPECT_EQ(parse_size(".5K"), 512U);
  EXPECT_EQ(parse_size("0.3K"), 307U);
  EXPECT_EQ(parse_size("1."), 1U);
}

TEST(ParseSize, AnythingElseIsAnErrorThatQuotesTheText) {
  for (const std::string bad : {"", "abc", "12X", "-5G", "0", "0.0001", "1.5.2", "G", "1GG", "1 ", " 1", "0x10", "1e9",
                                "nan", "inf", "18446744073709551616", "17179869184G"}) {
    try {
      (void)parse_size(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "' is not a size"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseSize, TheLargestSizesThatFit) {
  EXPECT_EQ(parse_size("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parse_size("16777215T"), std::uint64_t{16777215} << 40);
}

TEST(Version, TheMacrosAgree) {
  EXPECT_EQ(std::string(H5TILE_VERSION_STRING), std::to_string(H5TILE_VERSION_MAJOR) + "." +
                                                    std::to_string(H5TILE_VERSION_MINOR) + "." +
                                                    std::to_string(H5TILE_VERSION_PATCH));
  EXPECT_EQ(H5TILE_VERSION, H5TILE_VERSION_MAJOR * 10000 + H5TILE_VERSION_MINOR * 100 + H5TILE_VERSION_PATCH);
}

}  // namespace
}  // namespace h5tile
