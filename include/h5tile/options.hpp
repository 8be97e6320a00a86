#pragma once
/// @file
/// Per-call options. Fields left at their defaults take the process-wide settings
/// (see settings.hpp), so `WriteOptions{.ranks = 8}` changes only what it names.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <h5tile/array.hpp>

namespace h5tile {

/// How `to_file` lays the dataset out on disk.
enum class Layout : std::uint8_t {
  /// The default: one self-contained file where one process writes the whole array (`to_file`:
  /// Contiguous, or Chunked when a compression or a chunk shape is given), and Virtual where
  /// separate writers each write their own tiles (`write_tiles`: MPI ranks, Legate tasks).
  Auto,
  /// One small file per tile in the sidecar folder `<file>.tiles/`, and a virtual dataset in
  /// the main file that maps every tile (paths relative to the main file).
  Virtual,
  /// One self-contained file; every rank writes its tile into its place in one contiguous dataset.
  Contiguous,
  /// One self-contained file with one chunked dataset. Unfiltered: all chunks allocated when
  /// the file is created, every rank writes its tile's part of each chunk in place. Compressed
  /// (WriteOptions::compression): every chunk must lie in one tile; each rank compresses its
  /// chunks and writes them whole where HDF5 allocated them.
  Chunked,
};

/// "auto", "virtual", "contiguous", "chunked".
[[nodiscard]] std::string_view layout_name(Layout layout) noexcept;
/// The layout of that name; throws InvalidArgument naming the accepted ones.
[[nodiscard]] Layout layout_from_name(std::string_view name);

/// The compressor of the chunks `to_file` and `consolidate` write, under the name h5py (or
/// hdf5plugin) gives it. Readers need hdf5plugin (or HDF5_PLUGIN_PATH set to its plugins) for
/// all but gzip; h5tile decodes them all itself.
enum class Compressor : std::uint8_t {
  None,
  Gzip,   ///< HDF5's deflate filter (ID 1), as h5py's compression="gzip"
  Zstd,   ///< hdf5plugin's Zstd (filter 32015)
  Lz4,    ///< hdf5plugin's LZ4 (filter 32004), blocks of 1 GiB (one per chunk)
  Blosc,  ///< hdf5plugin's Blosc (filter 32001) with its LZ4 compressor (hdf5plugin's default)
  Lzf,    ///< h5py's LZF (filter 32000): fast, moderate ratio; h5py reads it without hdf5plugin
};

/// "none", "gzip", "zstd", "lz4", "blosc", "lzf".
[[nodiscard]] std::string_view compressor_name(Compressor compressor) noexcept;
/// The compressor of that name; throws InvalidArgument naming the accepted ones.
[[nodiscard]] Compressor compressor_from_name(std::string_view name);
/// The compressors this build of h5tile writes and decodes: gzip always; zstd, lz4 and blosc
/// where their libraries were found when it was built.
[[nodiscard]] std::vector<Compressor> built_compressors();

/// A compressor as h5tile's codec table describes it.
struct CompressorInfo {
  Compressor compressor = Compressor::None;
  std::string_view name;   ///< "gzip"
  bool built = false;      ///< its library was found when h5tile was built
  bool has_level = false;  ///< takes a level (lz4 takes none)
  int lowest_level = 0;    ///< where it takes a level: the lowest,
  int highest_level = 0;   ///< the highest,
  int default_level = 0;   ///< and the one a level of -1 means
};
/// Every compressor h5tile writes, built or not, in the order built_compressors() lists them
/// (Compressor::None not among them).
[[nodiscard]] std::vector<CompressorInfo> known_compressors();

/// How the chunks of a write are filtered (layouts Chunked and Virtual, and `consolidate` into
/// chunks). Each rank compresses its own chunks on its worker threads and writes them whole.
struct Compression {
  Compressor compressor = Compressor::None;
  /// The compressor's level; -1: its default (gzip 4, as h5py; zstd 3 and blosc 5, as
  /// hdf5plugin). gzip and blosc take 0 to 9, zstd -131072 to 22 (hdf5plugin's range); lz4 none.
  int level = -1;
  /// Byte k of every element together before compressing: HDF5's shuffle filter, or for blosc
  /// Blosc's own byte shuffle (as hdf5plugin's Blosc(shuffle=SHUFFLE)).
  bool shuffle = false;
  /// HDF5's Fletcher-32 checksum after the compressor, checked by every reader.
  bool fletcher32 = false;
  /// Whether any filter is asked for.
  [[nodiscard]] bool any() const noexcept { return compressor != Compressor::None || shuffle || fletcher32; }
};

/// "shuffle + gzip 6 + fletcher32" (the filters in the order applied), "none" for none.
[[nodiscard]] std::string to_string(const Compression& compression);

/// What `to_file` does with an existing file.
enum class Mode : std::uint8_t {
  Overwrite,  ///< replace the whole file (default)
  Append,     ///< keep the file's other objects; add the dataset or replace it
  Exclusive,  ///< fail with FileExists if the file exists
};

/// Progress of a long operation: called with the bytes done so far and the total, from a
/// worker thread, at least once per I/O task. Return false to cancel: the operation stops as
/// soon as it can and throws Cancelled (a cancelled write leaves the previous file intact).
/// Must be thread-safe; it is never called concurrently for one operation.
using ProgressCallback = std::function<bool(std::uint64_t bytes_done, std::uint64_t bytes_total)>;

/// Options of `to_file` and `write_tiles`.
struct WriteOptions {
  Layout layout = Layout::Auto;
  Mode mode = Mode::Overwrite;
  /// Worker ranks of the whole-array API (threads); 0: the `threads` setting. A compressed
  /// chunked write is one rank with this many workers compressing its chunks.
  unsigned ranks = 0;
  /// Flush data to stable storage (fdatasync) before the new file replaces the old one.
  bool sync = true;
  /// Keep the tile folder that this write replaces until the next write of the file, so that
  /// readers which opened the old file before the commit (h5py, h5dump, h5tile) still read
  /// it whole. Off: remove it at once (less disk at rest; such readers then see fill values
  /// or errors for the removed tiles).
  bool keep_previous = true;
  /// Layout Chunked: the chunk shape (one positive length per axis, each at most the
  /// dataset's, under 4 GiB in all). Empty: the shape of the first tile, halved along the
  /// leading axes until a chunk holds at most 1 GiB (1 MiB when compressed); `to_file` then also
  /// aligns its tiles to whole chunks along the first axis. Layout Virtual with compression: the
  /// chunk shape of the tile files (each clipped to its tile).
  Shape chunk{};
  /// Filters for the chunks (layouts Chunked and Virtual; Contiguous cannot be filtered).
  Compression compression{};
  /// Progress and cancellation (for write_tiles: this rank's bytes).
  ProgressCallback progress{};
};

/// Options of `from_file`, `read_box` and `from_file_batched`.
struct ReadOptions {
  /// Worker threads; 0: the `threads` setting.
  unsigned threads = 0;
  /// Where the result goes: -1 host memory, otherwise the CUDA device of that ordinal.
  int device = -1;
  /// Progress and cancellation (not used by from_file_batched, whose caller sees every block).
  ProgressCallback progress{};
  /// Read virtual-dataset sources outside the folder of the file (absolute paths elsewhere,
  /// or '..' escapes). Off by default: a file from elsewhere cannot make h5tile read, say,
  /// /etc/shadow into an array.
  bool allow_external_sources = false;
  /// Before reading a virtual dataset h5tile wrote, check each tile's stored XXH64 checksum;
  /// a changed tile throws VirtualSourceError naming it. Costs one more pass over the bytes.
  bool verify_checksums = false;
  /// Open the file's metadata in a child process first, with a time limit, so that HDF5
  /// crashing or hanging on a damaged file throws ProbeFailed instead (untrusted files; see
  /// settings::probe). nullopt: the `probe` setting.
  std::optional<bool> probe{};
};

/// Options of `consolidate`.
struct ConsolidateOptions {
  Layout layout = Layout::Contiguous;   ///< the output layout (Contiguous)
  bool allow_external_sources = false;  ///< as in ReadOptions
  Mode mode = Mode::Overwrite;
  unsigned threads = 0;  ///< 0: the `threads` setting
  bool sync = true;
  bool keep_previous = true;  ///< as in WriteOptions
  ProgressCallback progress{};
  /// Empty: one contiguous dataset. Otherwise a chunked dataset with this chunk shape (one
  /// positive length per axis), its chunks written whole.
  Shape chunk{};
  /// Filters for the chunks (needs `chunk`), compressed in parallel.
  Compression compression{};
  /// Probe the input first, as in ReadOptions; where a read of it runs HDF5's own decoders
  /// (raw_io off, a filter h5tile does not decode), also read it whole in the child first, so
  /// that HDF5 crashing on a damaged chunk is a ProbeFailed. nullopt: the `probe` setting.
  std::optional<bool> probe{};
};

}  // namespace h5tile
