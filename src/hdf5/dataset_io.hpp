#pragma once
// Reading and writing through the HDF5 library: the fallback for storage h5tile cannot
// address by offset (filters, type conversion, compact, external, unallocated data).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/array.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// Reads `src` of dataset `dataset` as `memory_type` into `dst` of a row-major array of
// `dst_shape` at `dst_base`.
void hdf5_read(hid_t dataset, hid_t memory_type, const Box& src, std::byte* dst_base, const Shape& dst_shape,
               const Box& dst);

// Reads `src` of a dataset of variable-length strings as `memory_type` (a variable-length string
// type), through HDF5 and its global heap: each string's bytes, row-major (a null string as "").
[[nodiscard]] std::vector<std::string> hdf5_read_strings(hid_t dataset, hid_t memory_type, const Box& src);

// Writes a whole row-major buffer of `shape` to `dataset` as `memory_type`.
void hdf5_write_all(hid_t dataset, hid_t memory_type, const void* data);

// Writes `data` (row-major, `count` elements per axis, as `memory_type`) to the elements of
// `dataset` at `start` + i * `step` (H5Dwrite: HDF5 converts, filters and allocates).
void hdf5_write(hid_t dataset, hid_t memory_type, const Shape& start, const Shape& count, const Shape& step,
                const void* data);

// Whether this HDF5 can apply every filter of `dataset`'s pipeline itself (H5Zfilter_avail: its
// built-in ones; h5tile loads no plugins): it then writes partial chunks (H5Dwrite, a shrink).
[[nodiscard]] bool hdf5_applies_filters(hid_t dataset);

// Writes what HDF5 holds of `dataset` in memory (its chunk cache) to the file (H5Dflush).
void flush_dataset(hid_t dataset);

// Writes one whole chunk (`data` holds the full chunk, padded at the dataset's edges, and
// already filtered, except the filters whose bit is set in `filter_mask`) at element offset
// `offset`, without type conversion or filters (H5Dwrite_chunk).
void write_chunk(hid_t dataset, const Shape& offset, const void* data, std::size_t bytes, unsigned filter_mask = 0);

// Where a contiguous dataset's bytes start in its file (H5Dget_offset), whatever their type;
// nullopt for other storage, external storage, or space not allocated.
[[nodiscard]] std::optional<std::uint64_t> contiguous_offset(hid_t dataset);

// The file offset of a dataset's raw bytes when they can be moved with pread/pwrite as
// `memory_type`: contiguous, allocated, not external, stored exactly as in memory.
[[nodiscard]] std::optional<std::uint64_t> raw_offset(hid_t dataset, hid_t memory_type);

// True when a chunked dataset's chunks hold exactly the bytes of memory (no filters, same type),
// so that each chunk can be read with pread at the address HDF5 reports.
[[nodiscard]] bool raw_chunks(hid_t dataset, hid_t memory_type);

// True when HDF5 reading `dataset` runs decoders: a filter pipeline (HDF5 1.10 crashes on some
// damaged chunks), or a virtual mapping (its sources may have one).
[[nodiscard]] bool hdf5_decodes(hid_t dataset);

// A filter of a chunked dataset's pipeline, as its creation list gives it.
struct StoredFilter {
  unsigned id = 0;
  std::vector<unsigned> params;  // client data (cd_values)
};

// The filter pipeline of a chunked dataset, in the order HDF5 applies it when writing (empty for
// other storage or none), and, where the decoded chunks are not the bytes of memory as the type
// read, why not: then only HDF5 can read them ("the stored type ... differs from the type read",
// "partial edge chunks are stored unfiltered").
struct ChunkFilters {
  std::vector<StoredFilter> filters;
  std::string obstacle;
};
[[nodiscard]] ChunkFilters chunk_filters(hid_t dataset, hid_t memory_type);

// The file names of a dataset's HDF5 external storage (H5Pset_external) as stored, in order;
// empty for data stored in the HDF5 file.
[[nodiscard]] std::vector<std::string> external_storage_names(hid_t dcpl);

}  // namespace h5tile::detail
