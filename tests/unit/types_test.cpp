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
                                           "uint64", "float16", "float32", "float64", "complex64", "complex128", "V7"));

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
  const TypeHandle vlen(H5Tcopy(H5T_C_S1));
  ASSERT_GE(H5Tset_size(vlen.get(), H5T_VARIABLE), 0);
  try {
    (void)dtype_of_type(vlen.get(), "dataset '/s' in 'f.h5'");
    FAIL() << "a variable-length string was accepted";
  } catch (const UnsupportedType& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("variable-length string"), std::string::npos) << what;
    EXPECT_NE(what.find("'/s'"), std::string::npos) << what;
  }
  const TypeHandle ldouble(H5Tcopy(H5T_NATIVE_LDOUBLE));
  EXPECT_THROW((void)dtype_of_type(ldouble.get(), "here"), UnsupportedType);
}

}  // namespace
}  // namespace h5tile::detail
