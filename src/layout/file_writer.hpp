#pragma once
// Creating what `to_file` writes: files with aligned raw data, contiguous datasets whose
// bytes ranks then move with pwrite, and virtual datasets that map tile files.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/array.hpp>

#include "engine/codecs/codec.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/file.hpp"
#include "hdf5/handle.hpp"
#include "layout/virtual/tile_index.hpp"

namespace h5tile::detail {

// Creates a new HDF5 file whose raw data is aligned to `alignment` bytes (a power of two), its
// objects made in formats of `low` or later (write_access). The
// path must not exist (O_EXCL: a symbolic link planted there is refused, not followed). Call
// close() on it once it is complete.
[[nodiscard]] WritableFile create_file(const std::filesystem::path& path, std::uint64_t alignment,
                                       H5F_libver_t low = H5F_LIBVER_V18);

// Opens an existing file for adding a dataset (raw data aligned as in create_file); removes
// `dataset` first if it exists (which must be a dataset: check_replaceable). Call close() on it
// once it is complete.
[[nodiscard]] WritableFile open_for_update(const std::filesystem::path& path, const std::string& dataset,
                                           std::uint64_t alignment, H5F_libver_t low = H5F_LIBVER_V18);

// Creates a contiguous dataset with its space allocated now and no fill written, creating
// missing groups on the way; returns the file offset of its raw bytes.
std::uint64_t create_raw_dataset(hid_t file, const std::string& name, DType dtype, const Shape& shape);

// Creates a chunked dataset with `chunk` (which must fit `shape`'s rank), unfiltered or with
// `filters`. With `allocate_now` (unfiltered only), every chunk gets its space in the file at once
// (no fill written), so that ranks can then pwrite into chunks at the addresses chunk_addresses()
// reports; filtered chunks get theirs as they are written (write_chunk).
[[nodiscard]] DatasetHandle create_chunked_dataset(hid_t file, const std::string& name, DType dtype, const Shape& shape,
                                                   const Shape& chunk, bool allocate_now = false,
                                                   const std::vector<FilterSpec>& filters = {});

// Opens the new main file `path` (being written: create_file or WriteCommit::start_main_file,
// then closed) again to add to it, with the access of create_file (raw data aligned to
// `alignment`). Call close() on it.
[[nodiscard]] WritableFile reopen_file(const std::filesystem::path& path, std::uint64_t alignment);

// Where each chunk (given by its origin, in elements) of a chunked dataset is stored, or nullopt
// for one not allocated, in `file` opened read-only (WriteCommit::open_main_read_only: a file not
// open for writing, so that without H5Dchunk_iter a version-1 B-tree is listed in one pass,
// chunk_directory.hpp). `shown` names the file in messages.
[[nodiscard]] std::vector<std::optional<StoredChunk>> stored_chunks_in(hid_t file, const std::string& shown,
                                                                       const std::string& name,
                                                                       const std::vector<Shape>& origins);

// The file address of each chunk (given by its origin, in elements) of a chunked dataset whose
// chunks are all allocated, in `file` opened read-only. Throws Hdf5Error for an unallocated chunk.
[[nodiscard]] std::vector<std::uint64_t> chunk_addresses(hid_t file, const std::string& shown, const std::string& name,
                                                         const std::vector<Shape>& origins);

// Creates a contiguous (or, for a 0-d or empty shape, small) dataset and writes `data`
// (row-major) into it through HDF5.
void create_dataset_with(hid_t file, const std::string& name, DType dtype, const Shape& shape, const void* data);

// Creates a virtual dataset that maps box `dst` of each tile to the whole of "/tile" in its
// file (a path relative to the virtual dataset's file, stored escaped: virtual_map.hpp), with
// the tile index (tile_index.hpp), which keeps the paths as they are, where `with_index` (tiles
// whose raw bytes lie at one offset of their file: not filtered ones).
void create_virtual_dataset(hid_t file, const std::string& name, DType dtype, const Shape& shape,
                            const std::vector<IndexedTile>& tiles, bool with_index = true);

}  // namespace h5tile::detail
