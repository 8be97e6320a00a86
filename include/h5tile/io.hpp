#pragma once
/// @file
/// Reading and writing tiled arrays: the whole-array API (one process, worker threads as
/// ranks) and the per-rank (SPMD) API over a Communicator.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <h5tile/array.hpp>
#include <h5tile/communicator.hpp>
#include <h5tile/dataset_info.hpp>
#include <h5tile/options.hpp>
#include <h5tile/read_pattern.hpp>

namespace h5tile {

// ----------------------------------------------------------------------------------------
// Writing

/// A write in progress. Copyable; every copy refers to the same write.
class [[nodiscard]] WriteHandle {
 public:
  WriteHandle() = default;
  explicit WriteHandle(std::shared_future<void> future) : future_(std::move(future)) {}
  /// Blocks until the file is complete and visible to other programs; rethrows the write's
  /// error (the previous file, if any, is then intact).
  void wait() const;
  /// True when the write has finished (successfully or not); never blocks.
  [[nodiscard]] bool done() const;
  /// Blocks until the write has finished or `timeout` has passed; true when it has finished.
  /// Never throws the write's error (wait() does). For waits that must stay interruptible.
  [[nodiscard]] bool wait_for(std::chrono::nanoseconds timeout) const;

 private:
  std::shared_future<void> future_;
};

/// Writes `array` to `dataset` in `path`, split into `options.ranks` tiles written in
/// parallel (with `options.compression`, each rank also compresses its own chunks, in host
/// memory only). Validates every argument before returning (throws InvalidArgument and its
/// subclasses, FileExists); the rest runs in the background.
///
/// Lifetime: the memory behind `array` must stay valid and unchanged until the handle (or
/// fence()) reports completion. Reads and writes of the same path issued later by this
/// process are ordered after this write.
WriteHandle to_file(const ArrayView& array, const std::filesystem::path& path, const std::string& dataset,
                    const WriteOptions& options = {});

/// Waits for every write started by to_file; throws the first error among them.
void fence();

/// Collective (SPMD): every rank of `comm` passes the same path, dataset, global shape and
/// options, and its own tiles (zero or more). Together the tiles must cover the global
/// shape exactly once; with compression in layout Chunked, every chunk must lie in one tile. Blocks until the file is
/// complete. If any rank fails, every rank throws the same error and the previous file is left intact.
void write_tiles(Communicator& comm, const Shape& global_shape, std::span<const Tile> tiles,
                 const std::filesystem::path& path, const std::string& dataset, const WriteOptions& options = {});

/// The dataset name as every write checks it before anything is written: the normalised path
/// ("/group/data" for "group/data"). Throws InvalidArgument for an empty name, or one with an
/// empty, '.' or '..' component or a NUL character (which no write accepts: a tile folder is
/// named after the dataset, and must stay inside the file's `.tiles` folder). Thread-safe.
[[nodiscard]] std::string check_dataset_name(const std::string& dataset);

/// Copies `dataset` of `in` (any layout, a virtual dataset and its tiles included) into one
/// self-contained dataset of the same name in `out`, contiguous or (with `options.chunk`)
/// chunked and filtered as `options.compression` says, in parallel blocks, streaming (memory
/// stays at a few blocks per thread). `out` appears only when complete; in
/// Mode::Overwrite, tiles an earlier write left beside `out` are removed.
/// Throws as from_file and to_file; Cancelled if the progress callback says stop.
void consolidate(const std::filesystem::path& in, const std::string& dataset, const std::filesystem::path& out,
                 const ConsolidateOptions& options = {});

// ----------------------------------------------------------------------------------------
// Reading

/// One mapping of a virtual dataset: which region of it comes from which source.
struct VirtualSource {
  /// The region of the virtual dataset; nullopt where the mapping is not a plain box (an
  /// irregular or unlimited selection, or a "%b" name that HDF5 expands per block).
  std::optional<Box> region;
  std::string file;     ///< the source file's name as stored ("." for the same file; relative to its folder)
  std::string dataset;  ///< the source dataset (empty where region is nullopt)
  /// The part of the source dataset read; nullopt: all of it.
  std::optional<Box> source_region;
  /// Whether the source file exists where HDF5 looks for it (true for "%b" names, not checked).
  bool found = true;
};

/// The mappings of a virtual dataset, in the order stored (empty for other layouts), read from
/// its metadata only: sources need not exist. Throws as describe().
[[nodiscard]] std::vector<VirtualSource> list_virtual_sources(const std::filesystem::path& path,
                                                              const std::string& dataset);

/// The full names of every dataset in the file ("/a", "/g/b"), in name order.
[[nodiscard]] std::vector<std::string> list_datasets(const std::filesystem::path& path);

/// Every dataset of the file once, with every name its hard links give it (in the groups reached
/// from the root, each group by its first name): the names of one dataset in name order, the
/// datasets in the order of their first names. Soft and external links are not followed.
[[nodiscard]] std::vector<std::vector<std::string>> list_dataset_names(const std::filesystem::path& path);

/// Checks a dataset without trusting it: for a virtual dataset, that every source exists, opens,
/// has the dtype and shape its mapping needs and that the mappings cover the dataset without gaps
/// or overlaps, and that h5tile's tile index (where there is one) agrees with the mapping; with
/// `read_all`, also reads every byte (HDF5 verifies stored checksums, such as
/// fletcher32, as it reads). Returns one line per problem (empty: none found).
/// Throws (FileNotFound, NotHdf5File, DatasetNotFound, ...) when the dataset itself cannot be opened.
/// Where the `probe` setting is on, what it opens (the sources too) is opened in a child process
/// first, and HDF5 crashing or hanging there throws ProbeFailed (so do list_datasets and
/// list_virtual_sources, for what they open); with `read_all`, a dataset whose reads run HDF5's
/// own decoders (raw_io off, a filter h5tile does not decode) is also read in a child first,
/// and HDF5 crashing there is a problem in the list.
[[nodiscard]] std::vector<std::string> verify(const std::filesystem::path& path, const std::string& dataset,
                                              bool read_all = false, const ProgressCallback& progress = {});

/// What verify_report() found.
struct VerifyReport {
  std::vector<std::string> problems;  ///< one line per problem (empty: none found)
  /// With `read_all` and no problem, what was read: "every byte read"; for a chunked dataset of
  /// more than 64 MiB whose allocated chunks hold less than half of it, "N of M chunks allocated,
  /// each read; the rest is the fill value (not stored)"; for a contiguous one never written,
  /// "nothing stored: ...". Reads of fill values that nothing stores would check nothing, and a
  /// sparse dataset of 2^63 bytes would take for ever. Empty where nothing was read.
  std::string read;
};

/// verify(), also saying what the read of every byte covered. A dataset whose size in bytes does
/// not fit in 64 bits is a problem (it cannot be read whole), named with its shape.
[[nodiscard]] VerifyReport verify_report(const std::filesystem::path& path, const std::string& dataset,
                                         bool read_all = false, const ProgressCallback& progress = {});

/// Every function here that reads a file (describe, from_file, read_box, read_into,
/// from_file_batched, consolidate's input, list_datasets, verify, verify_report) also takes an
/// `http://` or `https://` URL as `path` (README, "Files on HTTP(S) servers"): FileNotFound for
/// HTTP 404, IoError with EACCES for 401/403, IoError naming the URL (without its query string)
/// where the server fails past the retries or answers wrongly, RuntimeError in a build without
/// libcurl. Writes to a URL throw InvalidArgument at once.

/// How many HDF5 objects (files, datasets, groups, datatypes, attributes) the HDF5 library that
/// h5tile uses has open in this process: 0 between h5tile's calls. For leak checks (tests, long-
/// running services); with the Python module's private HDF5 it counts that HDF5's objects only.
[[nodiscard]] std::int64_t open_hdf5_objects();

/// Stops the HDF5 library that h5tile uses from loading filter plugins (HDF5_PLUGIN_PATH and
/// HDF5's default plugin folder), for the rest of the process. For a program or module whose HDF5
/// is a copy of its own (the Python module's): a plugin built against another HDF5 calls that
/// other library from its callbacks, and every write naming its filter fails. h5tile encodes and
/// decodes its filters itself, so only filters h5tile does not know become unreadable (the error
/// names them). With a shared HDF5, this also applies to the program's own HDF5 calls.
void disable_hdf5_plugins();

/// Describes `dataset` in `path` without reading its data. `probe`: open its metadata in a
/// child process first (see settings::probe); nullopt: the `probe` setting.
/// Throws FileNotFound, NotHdf5File (ProbeFailed), DatasetNotFound, NotADataset, UnsupportedType.
[[nodiscard]] DatasetInfo describe(const std::filesystem::path& path, const std::string& dataset,
                                   std::optional<bool> probe = std::nullopt);

/// Describes each of `datasets`, in order, as describe() does, with the file opened once for all
/// (for a URL: its first block and metadata fetched once, not once a dataset). Throws as
/// describe() for the first dataset that fails. `stored_bytes` false leaves DatasetInfo's
/// stored_bytes 0 for datasets stored in the file: HDF5 learns a chunked dataset's by walking its
/// chunk index, which over a URL fetches the blocks that index is spread across.
[[nodiscard]] std::vector<DatasetInfo> describe_each(const std::filesystem::path& path,
                                                     const std::vector<std::string>& datasets,
                                                     std::optional<bool> probe = std::nullopt,
                                                     bool stored_bytes = true);

/// Reads the whole dataset into host memory, tiles in parallel, the tiling following the
/// on-disk layout. Throws as describe(), and VirtualSourceError for a virtual dataset whose
/// source is missing or unreadable.
[[nodiscard]] Array from_file(const std::filesystem::path& path, const std::string& dataset,
                              const ReadOptions& options = {});

/// Reads the region `box` of the dataset. Throws InvalidArgument if it does not fit.
[[nodiscard]] Array read_box(const std::filesystem::path& path, const std::string& dataset, const Box& box,
                             const ReadOptions& options = {});

/// Reads a dataset of variable-length strings (dtype "object": DTypeKind::VarString), all of it
/// or the region `box`, through HDF5 (the strings live in the file's global heap, which h5tile
/// does not read itself): each string's bytes, in row-major order of the region's elements (a
/// scalar dataset gives one), as h5py's `ds[...]` gives them (a null string as ""). Throws as
/// describe(), UnsupportedType for a dataset of any other dtype (from_file reads those, fixed-
/// length strings included), InvalidArgument if `box` does not fit.
[[nodiscard]] std::vector<std::string> read_strings(const std::filesystem::path& path, const std::string& dataset,
                                                    const std::optional<Box>& box = std::nullopt,
                                                    const ReadOptions& options = {});

/// Reads into the caller's memory `out`: the whole dataset when `offset` is empty (then
/// `out.shape` must be the dataset's shape), else the region of `out.shape` at `offset`. `out`
/// is host or device memory (as detected, or as `out.memory` declares), C-contiguous, of the
/// dataset's dtype. Nothing is allocated, so a buffer reused from read to read costs no page
/// faults (a fresh array's first touch of each page costs more than the copy into it).
/// `out.data` is written. `options.device` is not used: `out` says where the memory is.
/// Throws InvalidArgument when `out` has another dtype or shape, is strided or does not fit.
void read_into(const std::filesystem::path& path, const std::string& dataset, const ArrayView& out,
               const Shape& offset = {}, const ReadOptions& options = {});

/// Writes `data` into the existing dataset `dataset` of the local file `path`, in place: the
/// elements at `offset` + i * `step` for i < data.shape along each axis (`offset` empty: the
/// whole dataset, whose shape `data.shape` must then be; `step` empty: every element). The object
/// the name leads to is written (through soft links; every hard link to it sees the change) and
/// keeps its layout, chunks, filters, fill value, attributes and other names. A chunked
/// dataset's chunks that the part touches are read, merged and encoded again on `threads`
/// workers (0: the threads setting), a chunk covered whole is encoded from `data` alone; where
/// h5tile does not encode its filters, and for steps other than 1, HDF5 writes it. `data` is host
/// memory, C-contiguous, of the dataset's dtype (as describe() gives it). When the call returns
/// the data is in the file (written to the kernel) and `data` may change. Throws InvalidArgument
/// (another dtype, a part that does not fit, device memory, a URL), DatasetNotFound,
/// NotADataset, UnsupportedType (variable-length strings, a virtual dataset), IoError,
/// RuntimeError (a damaged stored chunk). On an error, each chunk is wholly old or wholly new.
void write_into(const std::filesystem::path& path, const std::string& dataset, const ArrayView& data,
                const Shape& offset = {}, const Shape& step = {}, unsigned threads = 0);

/// Writes `values` (row-major, as many as `shape` has elements) into the part of shape `shape` at
/// `offset` (every `step`-th element; empty: 1) of the dataset of variable-length strings (dtype
/// "object") `dataset` in the local file `path`, in place, through HDF5 (the strings go to the
/// file's global heap). Each string's bytes are stored as given (h5py stores str as UTF-8). Empty
/// `offset`: the whole dataset (`shape` must be its shape). Throws InvalidArgument for another
/// dtype, a part that does not fit, a count of values that differs or a string with an embedded
/// NUL (HDF5 stores a variable-length string up to its first NUL), UnsupportedType for a
/// virtual dataset, and as write_into for the file.
void write_strings(const std::filesystem::path& path, const std::string& dataset,
                   const std::vector<std::string>& values, const Shape& shape, const Shape& offset = {},
                   const Shape& step = {});

/// A dataset kept open for many small reads, as h5py's Dataset keeps its file: the file, the
/// dataset and where its bytes lie (chunk addresses, a virtual dataset's mapping) are opened at
/// the first read and kept until close() or destruction, instead of being found again by every
/// read_box (h5tile.File's datasets and h5tile.dask's blocks read through one).
///
/// Every read first checks, with stat(2), that the file (and each source file a virtual dataset
/// reads through HDF5) is still the one opened: device, inode, size, modification and change
/// times. A file replaced (renamed over) or rewritten since is opened again; nothing is read
/// through what was learnt of the old one. Nothing is kept where that check could miss a change:
/// a file changed less than two seconds before (file times have a coarse granularity), a
/// dataset reached through an external link, in external storage, or a virtual dataset whose
/// sources HDF5 finds itself or that has more than 64 source files; such reads open the dataset
/// each time, as read_box does.
///
/// A URL's dataset is kept where every request names the version opened: the object (and each
/// object a virtual dataset reads) has a strong ETag, sent as If-Match, and was last modified
/// two seconds or more before it was opened (by the server's Last-Modified and Date). Each read
/// first asks the server, with one request of one byte, whether the object is still that
/// version (what it reads from memory, the first block fetched at open, the metadata blocks and
/// decoded chunks, is then of the object as it is); a read whose request is refused because the
/// object changed opens it again and reads the new version whole. Elsewhere (WebHDFS, which has
/// no ETag; an object modified a moment ago) each read opens the URL.
/// While kept, the file is open in HDF5 (and, with HDF5's file locking, locked against HDF5
/// writers, as a file h5py holds open is); h5tile's own writes of the path let it go first.
///
/// A reader stands for the dataset as its first read found it (or as expect() said it is): where a
/// later open finds another shape or type (the file replaced by one with another dataset of that
/// name), every read throws RuntimeError naming both ("... changed since it was first opened by
/// this reader: it was [40, 10] int32, it is now [80, 10] int32 ..."; not an IoError: reading
/// again cannot help); a new reader reads it as it is. A dataset grown along its unlimited axes
/// (netCDF's record dimension) still holds every box of the old shape, and is read.
///
/// Thread-safe: reads from many threads run at once. A child of fork() opens the file anew.
class DatasetReader {
 public:
  /// Opens nothing yet. `options` as for read_box (`progress` is called by every read).
  DatasetReader(std::filesystem::path path, std::string dataset, ReadOptions options = {});
  DatasetReader(DatasetReader&&) noexcept;
  DatasetReader& operator=(DatasetReader&&) noexcept;
  DatasetReader(const DatasetReader&) = delete;
  DatasetReader& operator=(const DatasetReader&) = delete;
  ~DatasetReader();

  /// As read_box(path, dataset, box, options).
  [[nodiscard]] Array read_box(const Box& box) const;
  /// As read_into(path, dataset, out, offset, options).
  void read_into(const ArrayView& out, const Shape& offset = {}) const;
  /// The shape and type the caller planned its reads by (describe()'s, taken before the reader's
  /// first read): from now on every open must find them, the first one too, or the reads throw
  /// as where the dataset changed since the first open.
  void expect(const Shape& shape, const DType& dtype);
  /// Lets the open file go (it is opened again by the next read). Waits for reads in progress.
  void close();
  /// Whether the dataset is kept open now (false before the first read, after close(), and where
  /// it is not kept at all).
  [[nodiscard]] bool is_open() const;
  /// How many decoded chunks the reader holds now (0 where it keeps none): a read of a part of
  /// one chunk of a filtered chunked dataset decodes the whole chunk once and keeps it, up to
  /// 8 MiB of chunks (or one chunk of up to 16 MiB), for the reads of that chunk that follow
  /// while the dataset is kept open. Every change that lets the open dataset go drops them.
  [[nodiscard]] std::size_t cached_chunks() const;
  /// How many times the reader has opened the dataset to keep it. A result put together from
  /// several reads (a stepped selection read box by box) is one version of the file where this
  /// is the same after its first read and after its last: a kept open answers some reads from
  /// memory (a URL's first block, decoded chunks), as the file was when opened, while a read
  /// that finds the file changed opens it again.
  [[nodiscard]] std::uint64_t opens() const;

  struct State;  ///< private

 private:
  std::shared_ptr<State> state_;
};

/// A tile read by one rank: where it lies in the dataset, and its data.
struct ReadTile {
  Box box;
  Array data;
};

/// Collective (SPMD): every rank reads its share of the dataset, the split following the
/// on-disk layout (a virtual dataset written by as many ranks: each rank its own source).
[[nodiscard]] ReadTile read_tile(Communicator& comm, const std::filesystem::path& path, const std::string& dataset,
                                 const ReadOptions& options = {});

/// One block of a batched read: its data and the offset of its first element.
struct Block {
  Array data;
  Shape offset;
};

/// Iterates over a dataset in blocks of at most `chunk_size`, in row-major order of their
/// offsets, boundary blocks clipped. Reads ahead in the background, holding at most a few
/// blocks in memory. Move-only; usable from one thread at a time.
///
/// An iteration reads one version of the file: the one it opened. The file, its sources and its
/// tile files (as many as a quarter of the process's descriptor limit, at most 4096) stay open
/// until the reader is destroyed, so a write that replaces the file meanwhile does not change
/// what it yields. Where a tile it could not hold open was removed or replaced meanwhile, next()
/// throws VirtualSourceError ("... was replaced during the iteration ..."); it never yields a
/// block of another version.
class BatchedReader {
 public:
  BatchedReader(const std::filesystem::path& path, const std::string& dataset, Shape chunk_size,
                const ReadOptions& options = {});
  BatchedReader(BatchedReader&&) noexcept;
  BatchedReader& operator=(BatchedReader&&) noexcept;
  ~BatchedReader();

  /// The next block, or nullopt after the last one. Rethrows read errors. `options.progress`
  /// counts the bytes of the blocks as they are read (ahead of the caller, with the dataset's
  /// bytes as the total); a false answer cancels the block being read: next() throws Cancelled.
  [[nodiscard]] std::optional<Block> next();
  /// Number of blocks in total.
  [[nodiscard]] std::uint64_t block_count() const noexcept;
  [[nodiscard]] const DatasetInfo& info() const noexcept;

  class Iterator;
  [[nodiscard]] Iterator begin();
  [[nodiscard]] static std::default_sentinel_t end() noexcept { return {}; }

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Input iterator over a BatchedReader: `for (Block& b : from_file_batched(...))`.
class BatchedReader::Iterator {
 public:
  using value_type = Block;
  using difference_type = std::ptrdiff_t;
  explicit Iterator(BatchedReader* reader) : reader_(reader) { ++*this; }
  Block& operator*() { return *current_; }
  Iterator& operator++() {
    current_ = reader_->next();
    return *this;
  }
  void operator++(int) { ++*this; }
  friend bool operator==(const Iterator& it, std::default_sentinel_t) { return !it.current_; }

 private:
  BatchedReader* reader_;
  std::optional<Block> current_;
};

/// Opens a batched read; validates `chunk_size` (one positive length per axis) at once.
[[nodiscard]] BatchedReader from_file_batched(const std::filesystem::path& path, const std::string& dataset,
                                              Shape chunk_size, const ReadOptions& options = {});

/// What the remote reads (URLs) of the last call that read a URL cost (process-wide, like
/// last_device_io: with calls on several threads at once, their counts mix).
struct RemoteIoReport {
  std::uint64_t requests = 0;  ///< HTTP requests made, retries included
  std::uint64_t bytes = 0;     ///< bytes of the response bodies taken
  std::uint64_t retries = 0;   ///< requests that were retries of a failed one
  /// The most requests one thread made one after another: the round trips on the call's
  /// critical path (HDF5's metadata reads are serial; data requests run in parallel).
  std::uint64_t critical_path = 0;
};
[[nodiscard]] RemoteIoReport last_remote_io();

/// S3 settings for the s3:// URLs under `prefix` where it ends with '/' (s3://bucket/dir/), else
/// for the URL `prefix` alone (s3://bucket/key, as redacted_path shows URLs), laid over the
/// environment's AWS variables where such a URL opens, in this process: each value replaces the
/// variable's (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION,
/// AWS_DEFAULT_REGION, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3, AWS_NO_SIGN_REQUEST, AWS_PROFILE,
/// AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), an empty value unsets it. The longest prefix
/// covering a URL applies; setting a prefix again replaces its settings, an empty map forgets
/// them. h5tile.File's `storage_options` (fsspec's keys) set them for its URL. InvalidArgument,
/// naming it, for a prefix that is not an s3:// URL or another variable.
void set_s3_settings(const std::string& prefix, const std::map<std::string, std::string>& settings);

/// An S3 multipart upload that began and was neither completed nor aborted: what a writer killed
/// outright (kill -9, a lost machine) leaves in a bucket. Its parts take space (and cost) until
/// aborted; no object appears from it.
struct PendingUpload {
  std::string url;        ///< s3://bucket/key: the object it would have made
  std::string upload_id;  ///< the server's id of the upload
  std::string initiated;  ///< when it began, as the server says (ISO 8601, UTC)
};
/// The unfinished multipart uploads of the objects whose keys start with the key of `prefix`
/// (s3://bucket/ for the whole bucket, s3://bucket/runs/ for a folder), with the credentials and
/// settings of reads (AWS_* variables, set_s3_settings). InvalidArgument for a URL that is not
/// s3://; IoError where the server refuses (EACCES) or cannot be reached.
[[nodiscard]] std::vector<PendingUpload> pending_uploads(const std::string& prefix);
/// Aborts `upload` (AbortMultipartUpload): its parts are discarded; one already gone is no error.
void abort_upload(const PendingUpload& upload);

/// While a KeptOpen of a URL lives, every call of this process that opens that URL (listings,
/// descriptions, attributes, datasets) uses that one open (HDF5's H5Freopen of it): the object is
/// fetched once and its metadata blocks are read once, and all those calls see the one version
/// the object had when the KeptOpen was made. For a sequence of calls over one URL (h5tile.File's
/// catalog, xarray's open_dataset); nothing for a local path. Throws what an open of the URL
/// throws. Keeps of one URL nest (the first made is used until the last ends). Other threads'
/// opens of the URL meanwhile use it too (their work runs on h5tile's workers as well): a read
/// that found the object changed then fails (HTTP 412) rather than reading the new version.
class KeptOpen {
 public:
  explicit KeptOpen(const std::filesystem::path& path);
  ~KeptOpen();
  KeptOpen(const KeptOpen&) = delete;
  KeptOpen& operator=(const KeptOpen&) = delete;
  KeptOpen(KeptOpen&&) = delete;
  KeptOpen& operator=(KeptOpen&&) = delete;

 private:
  std::filesystem::path path_;
  bool kept_ = false;
};

/// Files that are not at a path: h5tile.File over a Python file-like object. Each is known by a
/// name of the form "python://<id>/<name>", which every read function then takes as its path
/// (read-only, as a remote object is: no external links followed, no virtual sources beside
/// it), until unregister_file. register_memory_file keeps `contents` (a copy of io.BytesIO's
/// bytes); register_descriptor_file reads a duplicate of `fd`, a regular file's descriptor (the
/// caller keeps and closes its own). InvalidArgument for a name of another form, or one taken;
/// IoError where `fd` cannot be duplicated or is not a regular file.
void register_memory_file(const std::string& name, std::vector<std::byte> contents);
void register_descriptor_file(const std::string& name, int fd);
void unregister_file(const std::string& name);

/// How h5tile's messages show `path`: a URL as scheme://host/path, without user information,
/// query string or fragment (presigned URLs carry signatures there); a local path as it is.
[[nodiscard]] std::string redacted_path(const std::string& path);

/// Whether h5tile reads `path` as a URL (http, https, s3, webhdfs, swebhdfs; python for a
/// registered file-like object) rather than as a local path: the test every call makes where the
/// path enters. Throws InvalidArgument naming the scheme for a URL of a scheme h5tile does not
/// serve ("gs://", "file://"), as every call given it does (`writing`: in the words of a write).
[[nodiscard]] bool is_remote(const std::filesystem::path& path, bool writing = false);

}  // namespace h5tile
