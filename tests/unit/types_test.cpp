// dtype <-> HDF5 type mapping: every dtype h5tile supports maps to a type that maps back to it,
// stored the way h5py stores the NumPy dtype (bool as an enum, complex as an r/i compound,
// float16 as IEEE half); types h5tile does not support are refused with their name.
#include <string>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "hdf5/types.hpp"

namespace h5tile::detail {
namespace {

class TypeMapping : public ::testing::TestWithParam<std::string> {};

TEST_P(TypeMapping, EveryDtypeMapsToATypeThatMapsBack) {
  const auto dtype = DType::from_name(GetParam());
  const auto type = make_type(dtype);
  EXPECT_EQ(H5Tget_size(type.get()), dtype.size());
  EXPECT_EQ(dtype_of_type(type.get(), "here"), dtype);
  const auto memory = memory_type_for(type.get(), dtype);
  EXPECT_GT(H5Tequal(memory.get(), type.get()), 0) << "stored as in memory on this host";
}

INSTANTIATE_TEST_SUITE_P(All, TypeMapping,
                         ::testing::Values("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                           "uint64", "float16", "float32", "float64", "complex64", "complex128", "V7",
                                           "S1", "S12"));

TEST(TypeMapping, StoredAsH5pyStoresThem) {
  const auto boolean = make_type(DType::from_name("bool"));
  EXPECT_EQ(H5Tget_class(boolean.get()), H5T_ENUM);
  const auto complex = make_type(DType::from_name("complex64"));
  ASSERT_EQ(H5Tget_class(complex.get()), H5T_COMPOUND);
  ASSERT_EQ(H5Tget_nmembers(complex.get()), 2);
  char* real = H5Tget_member_name(complex.get(), 0);
  char* imag = H5Tget_member_name(complex.get(), 1);
  EXPECT_EQ(std::string(real), "r");
  EXPECT_EQ(std::string(imag), "i");
  H5free_memory(real);
  H5free_memory(imag);
  const auto half = make_type(DType::from_name("float16"));
  EXPECT_EQ(H5Tget_class(half.get()), H5T_FLOAT);
  EXPECT_EQ(H5Tget_size(half.get()), 2U);
}

TEST(TypeMapping, UnsupportedTypesAreRefusedWithTheirName) {
  const TypeHandle vlen(H5Tvlen_create(H5T_NATIVE_INT));
  try {
    (void)dtype_of_type(vlen.get(), "dataset '/s' in 'f.h5'");
    FAIL() << "a variable-length sequence was accepted";
  } catch (const UnsupportedType& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("variable-length sequence"), std::string::npos) << what;
    EXPECT_NE(what.find("'/s'"), std::string::npos) << what;
  }
  const TypeHandle ldouble(H5Tcopy(H5T_NATIVE_LDOUBLE));
  EXPECT_THROW((void)dtype_of_type(ldouble.get(), "here"), UnsupportedType);
}

// Strings read as h5py reads them: fixed-length ones as S<n>, null-padded in the file's character
// set (read by offset where the file's type is that; converted by HDF5 otherwise), variable-
// length ones as char* (VarString), which h5tile does not write.
TEST(TypeMapping, StringsAsH5pyReadsThem) {
  const auto fixed = [](std::size_t size, H5T_str_t pad, H5T_cset_t cset) {
    TypeHandle t(H5Tcopy(H5T_C_S1));
    EXPECT_GE(H5Tset_size(t.get(), size), 0);
    EXPECT_GE(H5Tset_strpad(t.get(), pad), 0);
    EXPECT_GE(H5Tset_cset(t.get(), cset), 0);
    return t;
  };
  const auto utf8 = fixed(10, H5T_STR_NULLPAD, H5T_CSET_UTF8);
  EXPECT_EQ(dtype_of_type(utf8.get(), "here"), DType::bytes(10));
  EXPECT_EQ(string_charset(utf8.get()), "utf-8");
  EXPECT_GT(H5Tequal(memory_type_for(utf8.get(), DType::bytes(10)).get(), utf8.get()), 0);
  const auto nullterm = fixed(10, H5T_STR_NULLTERM, H5T_CSET_ASCII);
  EXPECT_EQ(string_charset(nullterm.get()), "ascii");
  EXPECT_EQ(H5Tequal(memory_type_for(nullterm.get(), DType::bytes(10)).get(), nullterm.get()), 0);
  const auto written = make_type(DType::bytes(4));  // as h5py writes NumPy's S4
  EXPECT_EQ(H5Tget_strpad(written.get()), H5T_STR_NULLPAD);
  EXPECT_EQ(H5Tget_cset(written.get()), H5T_CSET_ASCII);
  const auto vlen = fixed(H5T_VARIABLE, H5T_STR_NULLTERM, H5T_CSET_UTF8);
  EXPECT_EQ(dtype_of_type(vlen.get(), "here"), DType(DTypeKind::VarString));
  EXPECT_EQ(DType(DTypeKind::VarString).name(), "object");
  EXPECT_GT(H5Tis_variable_str(memory_type_for(vlen.get(), DType(DTypeKind::VarString)).get()), 0);
  EXPECT_THROW((void)make_type(DType(DTypeKind::VarString)), UnsupportedType);
  EXPECT_EQ(string_charset(make_type(DType::from_name("int32")).get()), "");
}

// Compound, enum and array types read as opaque bytes of their size, described as the NumPy
// dtype h5py gives them (members' byte order, offsets, enum values and sub-array shapes kept).
TEST(StructuredTypes, DescribedAsH5pyDescribesThem) {
  const TypeHandle colour(H5Tenum_create(H5T_STD_I16BE));
  // Values are given in the base type's byte order: big-endian -2 and 300.
  auto big_endian = [](std::int16_t v) {
    const auto u = static_cast<std::uint16_t>(v);
    return static_cast<std::int16_t>(static_cast<std::uint16_t>((u >> 8U) | (u << 8U)));
  };
  const std::int16_t red = big_endian(-2);
  const std::int16_t blue = big_endian(300);
  ASSERT_GE(H5Tenum_insert(colour.get(), "red", &red), 0);
  ASSERT_GE(H5Tenum_insert(colour.get(), "blue", &blue), 0);
  const hsize_t dims[2] = {2, 3};
  const TypeHandle grid(H5Tarray_create2(H5T_IEEE_F32LE, 2, dims));
  const TypeHandle record(H5Tcreate(H5T_COMPOUND, 40));
  ASSERT_GE(H5Tinsert(record.get(), "id", 0, H5T_STD_U64BE), 0);
  ASSERT_GE(H5Tinsert(record.get(), "colour", 8, colour.get()), 0);
  ASSERT_GE(H5Tinsert(record.get(), "grid", 12, grid.get()), 0);
  EXPECT_EQ(structured_numpy_type(colour.get()), R"({"base":">i2","enum":{"blue":300,"red":-2}})");
  EXPECT_EQ(structured_numpy_type(grid.get()), R"({"base":"<f4","shape":[2,3]})");
  EXPECT_EQ(structured_numpy_type(record.get()),
            R"({"formats":[">u8",{"base":">i2","enum":{"blue":300,"red":-2}},{"base":"<f4","shape":[2,3]}],)"
            R"("itemsize":40,"names":["id","colour","grid"],"offsets":[0,8,12]})");
  EXPECT_EQ(dtype_of_type(record.get(), "here"), DType::opaque(40));
  EXPECT_EQ(structured_numpy_type(make_type(DType(DTypeKind::Complex64)).get()), "") << "h5py's complex is a dtype";
  EXPECT_EQ(structured_numpy_type(make_type(DType(DTypeKind::Bool)).get()), "") << "h5py's bool is a dtype";
}

TEST(StructuredTypes, MembersWhoseBytesAreNotTheirValuesAreRefused) {
  const TypeHandle vlen(H5Tvlen_create(H5T_NATIVE_INT));
  const TypeHandle with_vlen(H5Tcreate(H5T_COMPOUND, 8 + sizeof(hvl_t)));
  ASSERT_GE(H5Tinsert(with_vlen.get(), "n", 0, H5T_STD_I32LE), 0);
  ASSERT_GE(H5Tinsert(with_vlen.get(), "v", 8, vlen.get()), 0);
  EXPECT_EQ(structured_numpy_type(with_vlen.get()), "");
  EXPECT_THROW((void)dtype_of_type(with_vlen.get(), "here"), UnsupportedType);
  const TypeHandle narrow(H5Tcopy(H5T_STD_I32LE));  // 20 significant bits: HDF5 converts, h5py too
  ASSERT_GE(H5Tset_precision(narrow.get(), 20), 0);
  const TypeHandle with_narrow(H5Tcreate(H5T_COMPOUND, 4));
  ASSERT_GE(H5Tinsert(with_narrow.get(), "n", 0, narrow.get()), 0);
  EXPECT_THROW((void)dtype_of_type(with_narrow.get(), "here"), UnsupportedType);
  const TypeHandle terminated(H5Tcopy(H5T_C_S1));  // null-terminated: HDF5 converts it for h5py
  ASSERT_GE(H5Tset_size(terminated.get(), 4), 0);
  const TypeHandle with_text(H5Tcreate(H5T_COMPOUND, 4));
  ASSERT_GE(H5Tinsert(with_text.get(), "s", 0, terminated.get()), 0);
  EXPECT_EQ(structured_numpy_type(with_text.get()), "");
}

}  // namespace
}  // namespace h5tile::detail
