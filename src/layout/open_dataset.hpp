#pragma once
// A dataset opened for reading: what it is (DatasetInfo) and where its bytes are, as a list
// of sources (layout/source.hpp: datasets read with pread or through HDF5) and the boxes they
// supply.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/dataset_info.hpp>

#include "engine/progress.hpp"
#include "engine/raw_transfer.hpp"
#include "gpu/backend.hpp"
#include "gpu/decode.hpp"
#include "hdf5/handle.hpp"
#include "io/location.hpp"
#include "io/posix/cold_reads.hpp"
#include "io/posix/posix_file.hpp"
#include "io/remote_options.hpp"
#include "layout/source.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {

struct TileIndex;

// `dst` (dataset coordinates) comes from `src` of sources[source].
struct Mapping {
  std::size_t source = 0;
  Box src;
  Box dst;
  std::optional<std::uint64_t> checksum{};  // from the tile table (tiles h5tile wrote)
  std::uint64_t raw_offset = 0;             // where the checksummed bytes start in the tile file
};

// One unit of a parallel read.
struct ReadTask {
  std::size_t source = 0;
  Box src;
  Box dst;  // relative to the region read
};

// How a dataset is opened and read: the caller's options and the process-wide defaults (and
// HDF5's own environment variables), as plain values resolved where the call entered the
// library (api/resolve.hpp).
struct OpenOptions {
  // Accept virtual sources outside the folder of the file (see ReadOptions).
  bool allow_external = false;
  // Reads check the stored checksum of every tile they touch first.
  bool verify_checksums = false;
  // Fill info() without opening a virtual dataset's sources (so that a damaged one can still be
  // described); such an OpenDataset must not be read.
  bool metadata_only = false;
  // Move bytes with pread where the storage allows; off: through HDF5.
  bool raw_io = true;
  // Threads for opening and checking many sources (a virtual dataset's tiles).
  unsigned threads = 1;
  // Bytes per read task.
  std::uint64_t task_size = std::uint64_t{8} << 20;
  // Start a read of a virtual dataset h5tile wrote from its tile index (open_for_read in
  // layout/virtual/early_open.hpp).
  bool early_reads = false;
  // Tile files read by their tile table that are opened, checked and held open for the life of
  // the OpenDataset (the first this many of its tiles; TableTile::held), so that a write that
  // replaces the file meanwhile does not change what is read (a batched read). 0: each read
  // opens its tile.
  std::size_t hold_tiles = 0;
  // How pread treats the page cache.
  DirectIo direct_reads = DirectIo::Auto;
  // How large reads of data not in the page cache are shaped (H5TILE_COLD_READS).
  ColdReads cold_reads{};
  // Reads into device memory: GPUDirect Storage, and the staging otherwise.
  gpu::GdsMode gds = gpu::GdsMode::Auto;
  gpu::Staging staging{};
  // Compressed chunks read into device memory: decoded on the GPU (nvCOMP from `nvcomp_library`,
  // "" for dlopen's search) or on the CPU.
  gpu::DecodeMode gpu_decode = gpu::DecodeMode::Auto;
  std::string nvcomp_library{};
  // HDF5_VDS_PREFIX and HDF5_EXTFILE_PREFIX ("" where unset): where HDF5 looks for virtual
  // sources first, and for external storage files.
  std::string vds_prefix{};
  std::string extfile_prefix{};
  // HDF5_EXT_PREFIX ("" where unset): where HDF5 looks for an external link's target first.
  std::string ext_prefix{};
  // Reads of a URL (connections, block size, timeouts, retries).
  RemoteOptions remote{};
};

class OpenDataset {
 public:
  // Opens `dataset` in the file at `location` and resolves a virtual dataset's sources. Throws
  // FileNotFound, NotHdf5File, DatasetNotFound, NotADataset, UnsupportedType, VirtualSourceError.
  // `file`, where valid, is that file already open (a remote file is then not opened again).
  OpenDataset(const Location& location, const std::string& dataset, const OpenOptions& options,
              FileHandle file = FileHandle());
  OpenDataset(OpenDataset&&) noexcept = default;
  OpenDataset& operator=(OpenDataset&&) noexcept = default;
  OpenDataset(const OpenDataset&) = delete;
  OpenDataset& operator=(const OpenDataset&) = delete;
  ~OpenDataset();

  // A virtual dataset that h5tile wrote, known from its tile index alone: HDF5 has not opened
  // it (nor decoded its mapping), so its tiles can be read at once, and checked meanwhile
  // against the dataset as HDF5 opens it (mapping_agrees). nullopt where there is no usable
  // index: none stored, tiles that do not cover the dataset once, a tile outside the folder of
  // `path` (unless `options.allow_external`). Each tile is looked for beside `path` (HDF5's
  // first choice when HDF5_VDS_PREFIX is unset).
  // `file`, where valid, is `path` already open.
  [[nodiscard]] static std::optional<OpenDataset> from_tile_index(const Location& location, const std::string& dataset,
                                                                  const OpenOptions& options,
                                                                  FileHandle file = FileHandle());
  // For a dataset from from_tile_index: whether HDF5, opening the dataset, finds the dtype,
  // shape and mapping that the index gave (each tile the whole of "/tile" in the file the index
  // names, at the box it gives). What the index says of each tile's file (offset, size, plain
  // file) is checked as the tile is read. False too where HDF5 cannot open the dataset (the
  // open through HDF5 that follows says why).
  [[nodiscard]] bool mapping_agrees() const;
  // For a dataset from from_tile_index: whether `entries` (a mapping as read_virtual_map gives
  // it) map the same tiles to the same boxes as the index.
  [[nodiscard]] bool maps_like(const std::vector<VirtualEntry>& entries) const;

  [[nodiscard]] const DatasetInfo& info() const noexcept { return info_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const Location& location() const noexcept { return location_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return location_.path(); }

  // The tasks that read `region`, each at most about `task_bytes` and aligned to the layout
  // (a chunked source is read in whole rows of chunks unless `bounded`, where no task
  // exceeds `task_bytes`).
  [[nodiscard]] std::vector<ReadTask> plan(const Box& region, std::size_t task_bytes, bool bounded = false) const;
  // Reads `region` into a new array with `threads` threads, in host memory (device < 0) or
  // in the memory of CUDA device `device`.
  // `progress`, if given, counts the bytes read and may cancel.
  [[nodiscard]] Array read(const Box& region, unsigned threads, int device = -1, Progress* progress = nullptr) const;
  // Reads `region` into `out`, row-major memory of region.extent elements in host memory
  // (device < 0) or in the memory of CUDA device `device`.
  void read_into(const Box& region, std::byte* out, int device, unsigned threads, Progress* progress = nullptr) const;
  // Reads `region` of a dataset of variable-length strings through HDF5 (row-major). Throws
  // UnsupportedType for any other dtype.
  [[nodiscard]] std::vector<std::string> read_strings(const Box& region) const;
  // Throws UnsupportedType naming the dataset where its elements are variable-length strings,
  // which the reads of fixed-size elements (`read`, `read_into`) cannot hold.
  void require_fixed_size() const;
  // Walks the whole chunk index of every chunked source opened with HDF5, as reads that look
  // chunks up will (for a probe of the metadata that a read touches: api/probe.hpp).
  void walk_chunk_indexes() const;
  // Whether a read runs HDF5's own decoders on stored bytes: a source that HDF5 reads (raw_io off,
  // a filter h5tile does not decode) and that is filtered (or virtual). HDF5 1.10 crashes on some
  // damaged chunks (a fletcher32 chunk shorter than its checksum), which h5tile's decoders refuse.
  [[nodiscard]] bool hdf5_decodes() const;
  // The mappings (a virtual dataset's tiles; one whole-dataset mapping otherwise).
  [[nodiscard]] const std::vector<Mapping>& mappings() const noexcept { return mappings_; }
  // The local files that this dataset keeps open and reads through (the file itself, and the
  // sources of a virtual dataset opened with HDF5; not the tiles read by their tile table, which
  // each read checks), so that a holder can tell by their stat whether any has changed; nullopt
  // where a file it reads is not known here (a URL, a dataset reached through an external link
  // or kept in external storage, a virtual dataset whose sources HDF5 finds as it reads).
  [[nodiscard]] std::optional<std::vector<std::filesystem::path>> kept_files() const;
  // Whether this is a URL's dataset every remote object of which (the file, and the sources of
  // a virtual dataset) is pinned to the version it opened (ByteSource::pinned): a read of it
  // then comes wholly from those versions, or fails with IoError ESTALE.
  [[nodiscard]] bool pinned_remote() const;
  // Lets go of the metadata blocks that opening a remote file kept (drop_cached_blocks), the
  // file's and each virtual source's: for a dataset kept open, whose reads need little of them.
  void drop_remote_blocks() const;
  // The byte source of the remote file itself (through h5tile's HDF5 driver), or nullptr for a
  // local file.
  [[nodiscard]] std::shared_ptr<const ByteSource> remote_file() const;

 private:
  OpenDataset() = default;  // for from_tile_index
  // open_dataset, following external links only where external_link_check allows.
  [[nodiscard]] DatasetHandle open_guarded(hid_t file, const std::string& name,
                                           const std::filesystem::path& where_from) const;
  std::size_t add_source(const std::filesystem::path& file, const std::string& dataset, hid_t memory_type);
  // One mapping of a virtual dataset onto source `index` (`src`: its region, nullopt the whole
  // source): VirtualSourceError where the region does not fit the source or differs in shape from
  // `dst`; an empty `dst` maps nothing.
  // (Throws ReshapedMapping where `src` and `dst` hold the same elements in other shapes.)
  void map_source(std::size_t index, const std::optional<Box>& src, const Box& dst,
                  std::optional<std::uint64_t> checksum, std::uint64_t raw_offset);
  // A mapping h5tile's box-to-box reads do not model but HDF5 reads (same_but_unit_axes).
  struct ReshapedMapping {};
  void open_virtual(hid_t dcpl);
  // The mappings read box to box by h5tile; or the whole dataset read by HDF5, its sources checked
  // first (they exist, inside the folder, regular files).
  void map_virtual(const std::vector<VirtualEntry>& entries, const std::vector<ResolvedSource>& resolved);
  void open_virtual_through_hdf5(hid_t dcpl, const std::vector<std::string>& names,
                                 const std::vector<ResolvedSource>& resolved);
  // The mappings' overlaps, once every mapping is in place.
  void finish_mappings();
  // For a remote file (layout/virtual/remote_sources.cpp): the sources of its virtual dataset,
  // each an object beside it; one opened by HDF5 on h5tile's driver (`object`; nullptr for the
  // file itself); and, for from_tile_index, the tiles of `index` opened and checked (false where
  // the index is unusable).
  void open_remote_virtual(hid_t dcpl);
  std::size_t add_remote_source(std::shared_ptr<const ByteSource> object, const std::string& dataset);
  [[nodiscard]] bool open_remote_tiles(const TileIndex& index);
  void check_fits(const Box& region) const;  // InvalidArgument naming the dataset
  void fill(std::byte* out, std::uint64_t count) const;
  void read_to_device(const Box& region, std::byte* out, int device, unsigned threads, Progress* progress) const;
  // How a read of `region` by `threads` in `tasks` (planned at the warm task size) is shaped:
  // unchanged (parallel), or, where options_.cold_reads says so (auto: after a sample of the
  // page cache finds the region cold), a stream of few readers of large requests (tasks planned
  // again). Records the report of last_read_pattern (layout/shape_read.cpp).
  struct ReadShape {
    unsigned threads = 1;
    std::vector<ReadTask> tasks;
    bool stream = false;
  };
  [[nodiscard]] ReadShape shape_read(const Box& region, unsigned threads, std::vector<ReadTask> tasks) const;
  // The file offsets of the first byte of some of `tasks` (at most kColdSamples, spread evenly)
  // added to `sample`; returns "", or, where a source they touch is not a local file read
  // buffered by pread of its stored bytes (compressed, remote, through HDF5, O_DIRECT), why the
  // read stays parallel (nothing sampled).
  [[nodiscard]] std::string sample_tasks(const std::vector<ReadTask>& tasks, PageSample& sample) const;
  // For read_to_device: the chunks of `region` that source `s` supplies through `maps` (the
  // indices of its mappings that the region touches), to decode on the GPU, or why the GPU does
  // not decode them ("" and nullopt: the source is not compressed). Under auto, where `device`
  // has chosen the CPU for the codec already, the chunks are not listed.
  [[nodiscard]] std::optional<gpu::DecodeRequest> gpu_decoding(std::size_t s, const std::vector<std::size_t>& maps,
                                                               const Box& region, int device,
                                                               std::string& why_not) const;

  // `link`: whether lstat(2) found `source` to be a symbolic link.
  void check_inside(const std::filesystem::path& source, const std::string& stored_name, bool link);
  void check_checksums(const Box& region, unsigned threads) const;

  Location location_;
  std::string name_;
  OpenOptions options_;
  std::unique_ptr<FolderCheck> folder_check_;  // for check_inside, made at first use
  DatasetInfo info_;
  FileHandle file_;
  DatasetHandle dataset_;
  TypeHandle memory_type_;
  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<Mapping> mappings_;
  // Whether two mappings supply the same elements (a virtual dataset made so): HDF5 reads the
  // mappings in order, so the last one that maps an element gives its value.
  bool overlapping_ = false;
  // For each mapping, the later mappings that share elements with it, in order.
  std::vector<std::vector<std::size_t>> later_overlaps_;
  // For kept_files: the files held open, and whether they are all the files read.
  std::vector<std::filesystem::path> kept_files_;
  bool files_known_ = true;
  // Notes in kept_files_ the file holding `dataset` (open in HDF5 from `file`), which must be
  // `file` itself and keep its data there.
  void note_kept_file(const std::filesystem::path& file, hid_t dataset, hid_t dcpl);
};

}  // namespace h5tile::detail
