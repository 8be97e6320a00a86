#pragma once
// One stored dataset that supplies bytes to a read, and the way its bytes are reached: through
// HDF5, with pread at the offset HDF5 reports (whole, or chunk by chunk), or, for a tile h5tile
// wrote, with pread at the offset its tile table gives once the file shows it is that tile.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <h5tile/array.hpp>
#include <h5tile/error.hpp>

#include "engine/codecs/pipeline.hpp"
#include "engine/raw_transfer.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/handle.hpp"
#include "io/byte_source.hpp"
#include "io/posix/posix_file.hpp"

namespace h5tile::detail {

// HDF5 reads it (filters, type conversion, compact or external storage, raw_io off).
struct ThroughHdf5 {
  FileHandle file;  // the source's own file, where it is not the virtual dataset's
  DatasetHandle dataset;
  TypeHandle memory_type;  // the type of the dataset being read (sources convert to it)
  // Where a filter h5tile does not decode is why HDF5 reads it: "h5tile does not decode lzf (h5tile
  // was built without its library)", added to HDF5's error when HDF5 cannot decode it either.
  std::string undecoded_filter{};
};

// Contiguous and stored as in memory: read at the offset HDF5 reports, from the file HDF5
// opened for the dataset (a duplicate of its descriptor: an external link leads elsewhere; for
// a URL, the byte source that HDF5's driver reads through).
struct RawBytes {
  std::shared_ptr<const ByteSource> file;
  std::uint64_t offset = 0;
};

// Chunked, unfiltered, stored as in memory: pread chunk by chunk at the addresses HDF5 reports
// (found once for all tasks); a box touching an unallocated chunk is read through HDF5 (fill
// values), and so is every box where this HDF5 cannot find the chunks cheaply (ChunkDirectory).
struct RawChunks {
  std::shared_ptr<const ByteSource> file;
  ThroughHdf5 hdf5;
  std::shared_ptr<const ChunkDirectory> directory;
};

// Chunked and filtered with codecs h5tile decodes (deflate, shuffle, fletcher32, zstd, lz4, blosc): each chunk's
// stored bytes are read with pread at the address HDF5 reports and decoded on the worker that
// reads them, outside HDF5's lock; an unallocated chunk's part is read through HDF5 (fill values).
// Where this HDF5 cannot find the chunks cheaply (ChunkDirectory), HDF5 reads each chunk's stored
// bytes (H5Dread_chunk), still decoded by the worker.
struct FilteredChunks {
  std::shared_ptr<const ByteSource> file;
  ThroughHdf5 hdf5;
  std::shared_ptr<const FilterPipeline> pipeline;
  std::shared_ptr<const ChunkDirectory> directory;
};

// A tile h5tile wrote, read by what its tile table says of it (raw offset, file size, identity)
// without HDF5 opening it: each read opens the file without following a symbolic link and
// checks that it is the file written before reading (IndexMismatch where `index_only`, a dataset
// known from its tile index alone; TileChanged otherwise: the tile changed meanwhile). A tile
// `held` (OpenOptions::hold_tiles) was opened and checked once, when the dataset was opened, and
// is read through that descriptor: what later replaces or removes its name does not change it.
struct TableTile {
  std::uint64_t offset = 0;
  std::uint64_t file_size = 0;
  std::uint64_t identity = 0;
  bool index_only = false;
  DirectIo direct_reads = DirectIo::Auto;  // how its reads treat the page cache
  std::shared_ptr<const PosixFile> held{};
};

// A tile read by its tile table that is no longer the file it was when the dataset was opened
// (a newer write replaced or removed it, or another program changed it).
class TileChanged : public VirtualSourceError {
  using VirtualSourceError::VirtualSourceError;
};

using SourceAccess = std::variant<ThroughHdf5, RawBytes, RawChunks, FilteredChunks, TableTile>;

struct Source {
  std::filesystem::path file;
  std::string dataset;
  Shape shape;
  Shape chunk;                // chunk shape when chunked (reads are aligned to it)
  std::size_t elem_size = 0;  // bytes per element as read
  SourceAccess access;

  // Reads `src` of this source into box `dst` of the row-major array `out` (of `out_shape`).
  void read(const Box& src, std::byte* out, const Shape& out_shape, const Box& dst) const;
  // Where the source's bytes start in a file that is open, for one contiguous run (GPUDirect
  // Storage): its RawBytes, or nullptr.
  [[nodiscard]] const RawBytes* raw_bytes() const noexcept { return std::get_if<RawBytes>(&access); }
  // The file offset of the source's bytes where it is read by offset (RawBytes, TableTile).
  [[nodiscard]] std::optional<std::uint64_t> raw_offset() const noexcept;
};

// How `dataset` (open in HDF5, of element type `memory_type` as read, chunked when `chunk` is
// not empty) is best read: by pread (treating the page cache as `direct` says) where `raw_io`
// and its storage allow, else through HDF5. Where HDF5 reads it, `why_hdf5` (if given) is set to
// why, where known: "raw_io is off", "h5tile does not decode szip", ... (empty otherwise).
// `named_file` and `dataset` name it in errors (a damaged chunk index).
[[nodiscard]] SourceAccess access_for(ThroughHdf5 hdf5, const Shape& chunk, bool raw_io, DirectIo direct,
                                      const std::filesystem::path& named_file, const std::string& dataset,
                                      std::string* why_hdf5 = nullptr);

// Whether `file` is the tile file that `tile` describes, holding `data_bytes` at its offset: a
// plain file of the size and identity (tile_identity) it had when it was written.
[[nodiscard]] bool is_written_tile(const PosixFile& file, const TableTile& tile, std::uint64_t data_bytes);

// Opens a tile file read by its tile table (no symbolic link, no waiting on a FIFO), or nullopt.
[[nodiscard]] std::optional<PosixFile> open_tile(const std::filesystem::path& file, DirectIo direct);

// The tile file `file` that `tile` describes, holding `data_bytes`, opened and checked to be that
// file (open_tile, is_written_tile), to be held for the reads of a dataset; nullptr otherwise.
[[nodiscard]] std::shared_ptr<const PosixFile> hold_tile(const std::filesystem::path& file, const TableTile& tile,
                                                         std::uint64_t data_bytes);

}  // namespace h5tile::detail
