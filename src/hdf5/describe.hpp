#pragma once
// What an open dataset is, as one value: the sequence of H5Dget_type / H5Dget_space /
// H5Dget_create_plist calls that every reader needs, in one place.

#include <string>
#include <vector>

#include <h5tile/array.hpp>
#include <h5tile/object_types.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// How a dataset's bytes are stored.
enum class Storage : std::uint8_t { Contiguous, Chunked, Compact, Virtual, Other };

// "contiguous", "chunked", "compact", "virtual" (DatasetInfo::layout), "other".
[[nodiscard]] const char* storage_name(Storage storage) noexcept;

struct DatasetDescription {
  DType dtype{DTypeKind::UInt8};
  TypeHandle memory_type;  // the in-memory type to read it as `dtype`
  Shape shape;
  Shape max_shape;  // H5Sget_simple_extent_dims' maxdims: kUnlimitedExtent where unbounded
  Storage storage = Storage::Other;
  Shape chunk;                                       // Chunked: the chunk shape
  std::vector<std::string> filters;                  // Chunked: the filter pipeline, by name ("deflate", "lzf")
  std::string charset;                               // strings: "ascii" or "utf-8"
  std::string numpy_type;                            // structured types: DatasetInfo::numpy_type
  bool null_space = false;                           // a null dataspace (only where allowed): shape {}
  std::vector<std::vector<unsigned>> filter_values;  // Chunked: each filter's client data, as stored
};

// The dataset's creation property list (what its mapping, chunks and filters are read from).
[[nodiscard]] PlistHandle creation_plist(hid_t dataset);

// Describes `dataset`. Throws UnsupportedType naming `where` for a type h5tile does not read,
// or for a null dataspace (no elements, no shape) unless `allow_null_space` (then `null_space`
// says so, with an empty shape that no read may take for a scalar's).
[[nodiscard]] DatasetDescription describe_dataset(hid_t dataset, const std::string& where,
                                                  bool allow_null_space = false);

// `object` (a named datatype, else NotADataset naming `where`) described as a dataset's
// elements are (describe_dataset): dtype, numpy_type, charset.
[[nodiscard]] NamedType named_type_of(hid_t object, const std::string& where);

// The bytes the dataset's own storage takes in its file (H5Dget_storage_size).
[[nodiscard]] std::uint64_t storage_bytes(hid_t dataset);

// The dataset's fill value as `memory_type`, into `out` (one element).
void fill_value(hid_t dataset, hid_t memory_type, void* out);
// The fill value of a dataset of variable-length strings (`memory_type`: char*): its bytes, or ""
// where none is set.
[[nodiscard]] std::string string_fill_value(hid_t dataset, hid_t memory_type);

}  // namespace h5tile::detail
