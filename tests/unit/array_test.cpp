#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include <h5tile/h5tile.hpp>

namespace h5tile {
namespace {

TEST(DType, NamesRoundTrip) {
  for (const char* name : {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                           "float32", "float64", "complex64", "complex128", "V1", "V13", "S1", "S13", "object"}) {
    EXPECT_EQ(DType::from_name(name).name(), name);
  }
  EXPECT_EQ(DType::from_name("complex128").size(), 16U);
  EXPECT_EQ(DType::from_name("V13").size(), 13U);
  EXPECT_EQ(dtype_of<std::complex<float>>(), DType(DTypeKind::Complex64));
}

TEST(DType, RejectsUnknownNamesWithTheName) {
  try {
    (void)DType::from_name("str");
    FAIL() << "no exception";
  } catch (const UnsupportedType& e) {
    EXPECT_NE(std::string(e.what()).find("'str'"), std::string::npos);
  }
  EXPECT_THROW((void)DType::from_name("V0"), UnsupportedType);
  EXPECT_THROW((void)DType::from_name("Vx"), UnsupportedType);
  EXPECT_THROW(DType{DTypeKind::Opaque}, InvalidArgument);
  EXPECT_THROW((void)DType::from_name("S0"), UnsupportedType);
  EXPECT_THROW(DType{DTypeKind::Bytes}, InvalidArgument);
  EXPECT_EQ(DType::from_name("S13"), DType::bytes(13));
  EXPECT_NE(DType::bytes(7), DType::opaque(7));
}

TEST(Errors, EveryTypeIsCaughtByItsStandardBaseAndByError) {
  EXPECT_THROW(throw DatasetNotFound("x"), std::invalid_argument);
  EXPECT_THROW(throw DatasetNotFound("x"), Error);
  EXPECT_THROW(throw IoError("x", 5), std::runtime_error);
  EXPECT_THROW(throw VirtualSourceError("x"), Error);
  try {
    throw NotADataset("message");
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "message");
  }
}

TEST(Shape, ElementCountDetectsOverflow) {
  EXPECT_EQ(element_count({}), 1U);
  EXPECT_EQ(element_count({3, 0, 5}), 0U);
  EXPECT_EQ(element_count({3, 4, 5}), 60U);
  EXPECT_THROW((void)element_count({std::uint64_t{1} << 40, std::uint64_t{1} << 30}), InvalidArgument);
  EXPECT_THROW(Array(DType(DTypeKind::Float64), {std::uint64_t{1} << 62}), InvalidArgument);
}

TEST(Shape, ByteCountDetectsOverflowOfTheBytesToo) {
  EXPECT_EQ(byte_count({}, 8), 8U);
  EXPECT_EQ(byte_count({3, 0, 5}, 8), 0U);
  EXPECT_EQ(byte_count({3, 4, 5}, 2), 120U);
  // 2^61 elements count, but 2^61 x 8 bytes wrapped to 0 where computed unchecked.
  const Shape wraps{std::uint64_t{1} << 61};
  EXPECT_EQ(element_count(wraps), std::uint64_t{1} << 61);
  try {
    (void)byte_count(wraps, 8);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("[2305843009213693952] of 8-byte elements holds 2^64 bytes or more"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(byte_count({(std::uint64_t{1} << 61) - 1}, 8), std::numeric_limits<std::uint64_t>::max() - 7);
  EXPECT_THROW((void)byte_count({std::uint64_t{1} << 40, std::uint64_t{1} << 30}, 1), InvalidArgument);
  const ArrayView view{.data = nullptr, .dtype = DType(DTypeKind::Float64), .shape = wraps, .byte_strides = {}};
  EXPECT_THROW((void)view.nbytes(), InvalidArgument);
}

TEST(Box, FitsAndOverlaps) {
  const Box a{{0, 0}, {4, 4}};
  EXPECT_TRUE(a.fits({4, 4}));
  EXPECT_FALSE(a.fits({3, 4}));
  EXPECT_FALSE(a.fits({4}));
  EXPECT_FALSE((Box{{5}, {0}}).fits({4}));
  EXPECT_TRUE((Box{{4}, {0}}).fits({4}));
  EXPECT_TRUE(a.overlaps(Box{{3, 3}, {2, 2}}));
  EXPECT_FALSE(a.overlaps(Box{{4, 0}, {2, 2}}));
  EXPECT_FALSE(a.overlaps(Box{{1, 1}, {0, 2}}));
  EXPECT_EQ(to_string(Box{{0, 0}, {512, 300}}), "[0:512, 0:300]");
  EXPECT_EQ(to_string(Shape{500, 300}), "[500, 300]");
}

TEST(ArrayView, StridesAndContiguity) {
  const std::int32_t data[6] = {};
  ArrayView v = view(data, {2, 3});
  EXPECT_EQ(v.strides(), (std::vector<std::int64_t>{12, 4}));
  EXPECT_TRUE(v.is_contiguous());
  v.byte_strides = {4, 8};  // Fortran order
  EXPECT_FALSE(v.is_contiguous());
  v.shape = {1, 3};
  v.byte_strides = {999, 4};  // the stride of a length-1 axis does not matter
  EXPECT_TRUE(v.is_contiguous());
}

TEST(Array, IsPageAlignedAndSized) {
  const Array a(DType(DTypeKind::Complex128), {3, 5});
  EXPECT_EQ(a.nbytes(), 3U * 5U * 16U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 4096, 0U);
  const Array scalar(DType(DTypeKind::Int8), {});
  EXPECT_EQ(scalar.nbytes(), 1U);
}

TEST(Settings, RejectInvalidValues) {
  EXPECT_THROW(settings::set_threads(0), InvalidArgument);
  try {
    settings::set_threads(settings::kMaxThreads + 1);
    ADD_FAILURE() << "set_threads took more than kMaxThreads";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("4096"), std::string::npos) << e.what();
  }
  EXPECT_THROW(settings::set_alignment(3000), InvalidArgument);
  EXPECT_THROW(settings::set_task_size(0), InvalidArgument);
  EXPECT_THROW(settings::set_probe_timeout(0), InvalidArgument);
  EXPECT_THROW(settings::set_probe_timeout(settings::kMaxProbeTimeout * 2), InvalidArgument);
  EXPECT_THROW(settings::set_probe_timeout(std::numeric_limits<double>::quiet_NaN()), InvalidArgument);
  const auto old = settings::task_size();
  settings::set_task_size(12345);
  EXPECT_EQ(settings::task_size(), 12345U);
  settings::set_task_size(old);
}

// Every row of the table carries its value: get() gives what the typed getter gives, set() of that
// value changes nothing, and set() refuses a value of another kind or beyond a count's bounds.
TEST(Settings, TheTableGetsAndSetsEverySetting) {
  for (const auto& row : settings::all()) {
    ASSERT_NE(row.get, nullptr) << row.name;
    ASSERT_NE(row.set, nullptr) << row.name;
    const auto before = settings::get(row.name);
    settings::set(row.name, before);
    EXPECT_EQ(settings::get(row.name), before) << row.name;
    const bool takes_text = row.kind == settings::Kind::Mode || row.kind == settings::Kind::Text;
    EXPECT_EQ(std::holds_alternative<std::string>(before), takes_text) << row.name;
    if (row.kind == settings::Kind::Seconds) {
      EXPECT_THROW(settings::set(row.name, settings::Value{std::string("1")}), InvalidArgument) << row.name;
    } else if (takes_text) {
      EXPECT_THROW(settings::set(row.name, settings::Value{std::uint64_t{1}}), InvalidArgument) << row.name;
    } else {
      EXPECT_THROW(settings::set(row.name, settings::Value{1.5}), InvalidArgument) << row.name;
    }
    if (row.kind == settings::Kind::Count) {
      EXPECT_THROW(settings::set(row.name, settings::Value{std::uint64_t{row.most} + 1}), InvalidArgument) << row.name;
      EXPECT_THROW(settings::set(row.name, settings::Value{std::uint64_t{1} << 40}), InvalidArgument) << row.name;
    }
    EXPECT_EQ(settings::get(row.name), before) << row.name;
  }
  const auto threads = settings::threads();
  settings::set("threads", settings::Value{std::uint64_t{3}});
  EXPECT_EQ(settings::threads(), 3U);
  settings::set("threads", settings::Value{std::uint64_t{threads}});
  settings::set("cold_reads", settings::Value{std::string("stream")});
  EXPECT_EQ(settings::cold_reads(), settings::ColdReads::Stream);
  EXPECT_THROW(settings::set("cold_reads", settings::Value{std::string("on")}), InvalidArgument);
  settings::set("cold_reads", settings::Value{std::string("auto")});
  EXPECT_THROW((void)settings::get("no_such_setting"), InvalidArgument);
}

}  // namespace
}  // namespace h5tile
