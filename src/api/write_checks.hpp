#pragma once
// Checks that run before any byte of a write is written, and the default split into tiles.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <h5tile/io.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

struct WriteConfig;  // layout/write_plan.hpp

// The one check of a dataset name that every write makes where it enters the library (to_file,
// write_tiles, consolidate; the Python module, the Legate tasks, MPI and the command all come
// through these): the normalised name ("/group/data"), or InvalidArgument naming the name and
// the file, for an empty name or one with an empty, '.' or '..' component or a NUL (which
// would lead the tile folder out of the file's '.tiles' folder). A URL as `path` is refused first
// (check_not_remote), so that no message names it unredacted.
// `object`: `path` may be an object's URL (is_object_target).
[[nodiscard]] std::string checked_dataset_name(const std::string& dataset, const std::filesystem::path& path,
                                               bool object = false);

// Whether `path` is an object to upload (an s3:// URL) rather than a local path; InvalidArgument
// for a URL of another scheme (HTTP(S), WebHDFS: no standard multipart upload).
[[nodiscard]] bool is_object_target(const std::filesystem::path& path);
// An object target takes the write: one self-contained file (layout Contiguous or Chunked,
// resolved) or tile objects beside a virtual dataset's (Virtual), written whole (not mode
// Append). InvalidArgument saying what to do otherwise.
void check_object_target(const std::filesystem::path& path, Layout layout, Mode mode, const std::string& dataset);

// An object target's part of a write's config: how to reach it (remote_options) and about the
// most bytes the object will hold (the data, edge chunks stored whole, compressed chunks grown a
// little, HDF5's metadata), which sizes its parts. `chunk` empty: contiguous.
void configure_object_write(WriteConfig& config, const Shape& shape, const Shape& chunk, std::size_t elem_size);

// The array is usable: a dtype, a pointer when it has elements, strides of its rank.
void check_array(const ArrayView& array, const std::filesystem::path& path, const std::string& dataset);
// The tile is a usable array whose shape is its box's extent, and the box fits `shape`.
void check_tile(const Tile& tile, const Shape& shape, const std::filesystem::path& path, const std::string& dataset);
// How boxes cover a shape: the pairs that overlap (at most `max_overlaps`) and the elements
// counted over all boxes (equal to the shape's count, with no overlap, when covered once).
struct Coverage {
  std::vector<std::pair<Box, Box>> overlaps;
  std::uint64_t covered = 0;
};
[[nodiscard]] Coverage coverage_of(const std::vector<Box>& boxes, const Shape& shape,
                                   std::size_t max_overlaps = SIZE_MAX);

// The boxes cover `shape` exactly once (no overlap, no gap).
void check_coverage(const std::vector<Box>& boxes, const Shape& shape, const std::filesystem::path& path,
                    const std::string& dataset);

// Throws InvalidArgument where `path` is a URL: remote writes are not supported yet.
void check_not_remote(const std::filesystem::path& path);

// Dataset `name` (normalised) of the local file `path`, open in `file`, for a change in place:
// external links on the way followed only where reads follow them (inside the folder of `path`,
// to regular files). Throws DatasetNotFound, NotADataset, VirtualSourceError (a link refused).
[[nodiscard]] DatasetHandle open_dataset_to_change(hid_t file, const std::string& name,
                                                   const std::filesystem::path& path);

// The target can be written in `mode`: not a directory, parent creatable and writable,
// absent for Exclusive, an HDF5 file (or absent) for Append in which `dataset` (normalised) is
// absent or a dataset, below groups (check_replaceable).
void check_target(const std::filesystem::path& path, Mode mode, const std::string& dataset);
// Creates the missing folders above `target`; IoError (with errno) naming the folder and the
// target when one cannot be made.
void create_parent_folders(const std::filesystem::path& target);
// Layout::Auto resolved: where one process writes the whole array (`one_process`: to_file), one
// self-contained file, Chunked when a compression or a chunk shape is given and Contiguous
// otherwise; where separate writers each write their own tiles (write_tiles), Virtual. Any
// other layout as given.
[[nodiscard]] Layout resolved_layout(const WriteOptions& options, bool one_process) noexcept;
// The options fit the layout: a chunk shape only with Layout::Chunked, or with Layout::Virtual
// and compression (the tiles' chunks); compression not with Layout::Contiguous, and at a level
// its compressor takes.
void check_layout_options(const WriteOptions& options, const std::filesystem::path& path, const std::string& dataset);

// Every chunk of `chunk` shape that a tile of `boxes` touches lies in that tile (or past the edge
// of `shape`): each tile starts and ends on chunk boundaries. Compressed chunks are written by
// the rank that holds them, whole; InvalidArgument names the first tile that does not.
void check_chunks_in_tiles(const std::vector<Box>& boxes, const Shape& chunk, const Shape& shape,
                           const std::filesystem::path& path, const std::string& dataset);
// Splits `shape` along its first axis into at most `ranks` non-empty boxes (one box for a
// 0-d or empty shape); with `align_rows` > 1, every box but the last starts and ends on a
// multiple of it.
[[nodiscard]] std::vector<Box> split_for_ranks(const Shape& shape, unsigned ranks, std::uint64_t align_rows = 1);

// `shape` with its leading axes halved (rounding up), first axis first, until `elem_size`-byte
// elements of it take at most `max_bytes` (or every axis is 1): a block shape that fits.
[[nodiscard]] Shape halved_to_fit(Shape shape, std::size_t elem_size, std::uint64_t max_bytes);

// The most bytes of a chunk that to_file picks: unfiltered (read and written in place, so
// large), and compressed (each compressed and decoded whole by one thread; as h5py's at most).
inline constexpr std::uint64_t kDefaultChunkBytes = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kDefaultCompressedChunkBytes = std::uint64_t{1} << 20;

// The chunk shape of a chunked write: `requested` checked against `shape` (InvalidArgument
// naming what is wrong), or, when empty, `first_tile` halved along the leading axes until a
// chunk of `elem_size`-byte elements holds at most `max_bytes`.
[[nodiscard]] Shape chunk_for(const Shape& requested, const Shape& shape, const Shape& first_tile,
                              std::size_t elem_size, const std::filesystem::path& path, const std::string& dataset,
                              std::uint64_t max_bytes = kDefaultChunkBytes);

}  // namespace h5tile::detail
