#pragma once
/// @file
/// What a dataset is (DatasetInfo, as describe() gives it) and one tile of a per-rank write:
/// types of io.hpp's functions, apart from those functions, so that every layer may name them.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <h5tile/array.hpp>
#include <h5tile/dtype.hpp>

namespace h5tile {

/// One tile of a per-rank write: its region of the global array and its memory.
struct Tile {
  Box box;
  ArrayView data;  ///< data.shape must equal box.extent
};

/// DatasetInfo::max_shape's value on an axis without a bound (HDF5's H5S_UNLIMITED).
inline constexpr std::uint64_t kUnlimitedExtent = ~std::uint64_t{0};

/// What a dataset is: its dtype, shape and storage.
struct DatasetInfo {
  DType dtype{DTypeKind::UInt8};
  Shape shape;
  /// The largest shape the dataset may be extended to (HDF5's maxdims): kUnlimitedExtent on
  /// an unlimited axis (netCDF-4's unlimited dimensions); equal to `shape` for a fixed one.
  Shape max_shape;
  std::string layout;                ///< "contiguous", "chunked", "compact", "virtual" (or "other")
  Shape chunk;                       ///< chunk shape (chunked only)
  std::vector<std::string> filters;  ///< filter names (chunked only), e.g. "deflate", "lzf"
  std::string charset;               ///< string dtypes (S<n>, object): "ascii" or "utf-8"; empty otherwise
  /// Each filter's client data as stored (chunked only), e.g. {4} for deflate at level 4.
  std::vector<std::vector<unsigned>> filter_values;
  /// Who decodes a filtered dataset's chunks when it is read: "h5tile" (h5tile's own decoder,
  /// on its worker threads, in parallel) or "hdf5" (the HDF5 library, one call at a time).
  /// Empty when nothing is filtered, and for a virtual dataset (its sources decide one by one).
  std::string decoder;
  /// Where `decoder` is "hdf5": why, e.g. "h5tile does not decode szip" (also scaleoffset, nbit,
  /// unknown filter IDs), "the stored type differs from the type read (HDF5 converts it)".
  std::string decoder_reason;
  /// Compound (other than h5py's complex {r, i}), enum (other than h5py's bool) and HDF5 array
  /// types read as opaque bytes (`dtype` "V<n>", n the type's size), exactly as stored and as h5py
  /// returns them; this is the NumPy dtype h5py gives them, as JSON: a NumPy type string
  /// ("<i4", ">f8", "|S5", "|V4", "|b1", "<c8"), or an object: {"names", "formats", "offsets",
  /// "itemsize"} (a compound, NumPy's form, formats nested), {"base", "shape"} (an array type),
  /// {"base", "enum": {name: value}} (an enum; h5py's metadata), {"base", "h5py_encoding"} (a
  /// fixed-length string member), {"base", "h5py_opaque": true} (an opaque type h5py tagged
  /// "NUMPY:<dtype>": datetime64, timedelta64). Empty for every other dtype.
  std::string numpy_type;
  /// A null dataspace (h5py: shape None, reads give h5py.Empty): `shape` is empty and every read
  /// throws UnsupportedType. Only describe() gives such an info; it is no scalar.
  bool null_space = false;
  /// One element of the fill value (HDF5's, or the one set at creation) as read: `dtype.size()`
  /// bytes; for variable-length strings the string's bytes (empty where none is set).
  std::vector<std::uint8_t> fill_value;
  std::size_t virtual_sources = 0;  ///< number of mappings (virtual only)
  std::uint64_t stored_bytes = 0;   ///< bytes on disk: the dataset's storage, plus its source files if virtual
};

}  // namespace h5tile
