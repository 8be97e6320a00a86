#pragma once
// h5tile dtypes <-> HDF5 datatypes, stored the way h5py stores each NumPy dtype.

#include <string>

#include <h5tile/dtype.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// The type h5tile writes for `dtype`; on this (little-endian) host it is also the in-memory type.
[[nodiscard]] TypeHandle make_type(DType dtype);

// A string type as h5py makes it: fixed-length null-padded for DTypeKind::Bytes, variable-length for
// DTypeKind::VarString (HDF5's H5T_VARIABLE: a char* in memory), in UTF-8 or ASCII.
[[nodiscard]] TypeHandle make_string_type(DType dtype, bool utf8);

// The HDF5 type h5py makes for the NumPy dtype that `numpy_type` describes, in the JSON form of
// DatasetInfo::numpy_type (a compound, an array, an enum, a tagged or encoded type, or a type
// string such as ">i4"), of `size` bytes. Throws InvalidArgument for text not in that form or a
// size that differs, UnsupportedType for a NumPy type h5py stores otherwise (datetime units aside).
[[nodiscard]] TypeHandle make_structured_type(const std::string& numpy_type, std::size_t size);

// The dtype that a dataset of HDF5 type `type` reads as. Throws UnsupportedType naming the
// HDF5 type (for example "variable-length string") and `where` (file and dataset).
[[nodiscard]] DType dtype_of_type(hid_t type, const std::string& where);

// A compound (other than h5py's complex), enum (other than h5py's bool) or array type that h5py
// reads into NumPy unconverted, as the NumPy dtype h5py gives it, in JSON (DatasetInfo::numpy_type
// documents the form); such a type reads as opaque bytes of its size. Also an opaque type that
// h5py tagged "NUMPY:<dtype>" (datetime64). "" for any other type.
[[nodiscard]] std::string structured_numpy_type(hid_t type);

// The in-memory type to read a dataset of file type `file_type` as `dtype`.
[[nodiscard]] TypeHandle memory_type_for(hid_t file_type, DType dtype);

// A copy of `type` (types are shared by handles that close them independently).
[[nodiscard]] TypeHandle copy_type(hid_t type);

// "ascii" or "utf-8" for a string type; "" for any other.
[[nodiscard]] std::string string_charset(hid_t type);

// Bytes per element of `type`.
[[nodiscard]] std::size_t type_size(hid_t type);

}  // namespace h5tile::detail
