#pragma once
// What opening a dataset for reading finds: what it is (DatasetInfo) and where its bytes are, as
// a list of sources (layout/source.hpp: datasets read with pread or through HDF5) and the boxes
// they supply. The opener makes it (layout/opener.hpp; a virtual dataset's sources are opened by
// layout/virtual/), the reader reads it (layout/open_dataset.hpp), nothing changes it in between.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/dataset_info.hpp>

#include "gpu/backend.hpp"
#include "gpu/decode.hpp"
#include "hdf5/handle.hpp"
#include "io/location.hpp"
#include "io/posix/cold_reads.hpp"
#include "io/posix/posix_file.hpp"
#include "io/remote_options.hpp"
#include "layout/source.hpp"

namespace h5tile::detail {

// `dst` (dataset coordinates) comes from `src` of sources[source].
struct Mapping {
  std::size_t source = 0;
  Box src;
  Box dst;
  std::optional<std::uint64_t> checksum{};  // from the tile table (tiles h5tile wrote)
  std::uint64_t raw_offset = 0;             // where the checksummed bytes start in the tile file
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
  // described); such a dataset must not be read.
  bool metadata_only = false;
  // info().stored_bytes of a dataset stored in the file computed (H5Dget_storage_size walks a
  // chunked dataset's index); false: 0.
  bool stored_bytes = true;
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
  // the opened dataset (the first this many of its tiles; TableTile::held), so that a write that
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

struct OpenedDataset {
  OpenedDataset() = default;
  OpenedDataset(OpenedDataset&&) noexcept = default;
  OpenedDataset& operator=(OpenedDataset&&) noexcept = default;
  OpenedDataset(const OpenedDataset&) = delete;
  OpenedDataset& operator=(const OpenedDataset&) = delete;
  ~OpenedDataset();  // frees thousands of sources on several threads

  Location location;
  std::string name;  // normalized ("/a/b")
  OpenOptions options;
  DatasetInfo info;
  FileHandle file;
  DatasetHandle dataset;  // invalid for a dataset known from its tile index alone
  TypeHandle memory_type;
  std::vector<std::unique_ptr<Source>> sources;
  std::vector<Mapping> mappings;  // a virtual dataset's tiles; one whole-dataset mapping otherwise
  // Whether two mappings supply the same elements (a virtual dataset made so): HDF5 reads the
  // mappings in order, so the last one that maps an element gives its value.
  bool overlapping = false;
  // For each mapping, the later mappings that share elements with it, in order.
  std::vector<std::vector<std::size_t>> later_overlaps;
  // The local files held open and read through (OpenDataset::kept_files), and whether they are
  // all the files read.
  std::vector<std::filesystem::path> kept_files;
  bool files_known = true;
};

// What the opening code of every layout shares.

// open_dataset (hdf5/file.hpp) of `name` in `file`, following external links only where
// external_link_check allows for `opened`'s location and options.
[[nodiscard]] DatasetHandle open_guarded(const OpenedDataset& opened, hid_t file, const std::string& name,
                                         const std::filesystem::path& where_from);
// Notes in kept_files the file holding `dataset` (open in HDF5 from `file`), which must be
// `file` itself and keep its data there (else files_known is cleared).
void note_kept_file(OpenedDataset& opened, const std::filesystem::path& file, hid_t dataset, hid_t dcpl);
// Sets `overlapping` and `later_overlaps` once every mapping is in place.
void finish_mappings(OpenedDataset& opened);

}  // namespace h5tile::detail
