#pragma once
/// @file
/// Process-wide defaults. Each is read once from its environment variable (validated; a bad
/// value throws InvalidArgument naming the variable) and can be changed at run time. all() lists
/// them (name, variable, the values taken, default, what each sets): the one table that the
/// parsing and the checks of settings.cpp, Python's h5tile.settings and docs/SETTINGS.md follow.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace h5tile::settings {

/// What a setting takes.
enum class Kind : unsigned char {
  Count,    ///< a whole number from `least` to `most` (no size suffix)
  Size,     ///< bytes (parse_size's syntax in the environment), from `least` to `most` (0: no bound)
  Flag,     ///< 0 or 1 (true or false)
  Mode,     ///< one of the words `values` lists
  Seconds,  ///< a number of seconds above `least` and at most `most`
  Text,     ///< a string (a path)
};

/// A setting's value as get() and set() carry it: a count, a size (bytes) or a flag (0 or 1) as a
/// whole number, seconds as a double, a mode (its word: "auto", "on", "stream", ...) or a text as
/// a string.
using Value = std::variant<std::uint64_t, double, std::string>;

/// One setting, as all() lists it. A new setting is a row of the table in settings.cpp (and its
/// typed getter and setter below): the environment is parsed, values checked, Python's
/// h5tile.settings functions made and docs/SETTINGS.md printed from the row.
struct Setting {
  std::string_view name;      ///< "threads": settings::threads() and set_threads(), Python h5tile.settings.threads()
  std::string_view variable;  ///< its environment variable: "H5TILE_THREADS"
  Kind kind = Kind::Count;
  std::uint64_t least = 0;              ///< Count, Size: the lowest value; Seconds: the value it must be above
  std::uint64_t most = 0;               ///< Count, Size, Seconds: the highest value (Size: 0 for no bound)
  std::string_view values;              ///< what it takes, as docs/SETTINGS.md says it: "1 to 4096"
  std::string_view fallback;            ///< its default, as docs/SETTINGS.md says it: "the number of cores"
  std::string_view doc;                 ///< what it sets, as docs/SETTINGS.md says it
  Value (*get)() = nullptr;             ///< its value, as its getter gives it
  void (*set)(const Value&) = nullptr;  ///< changes it, checked as its setter checks
};

/// Every setting, in the order docs/SETTINGS.md lists them.
[[nodiscard]] std::span<const Setting> all() noexcept;
/// The setting called `name`; throws InvalidArgument for a name no setting has.
[[nodiscard]] const Setting& setting(std::string_view name);
/// The value of the setting called `name` (what its getter gives, as a Value).
[[nodiscard]] Value get(std::string_view name);
/// Changes the setting called `name`, checked as its setter checks it; a mode takes one of its
/// words, a value of the wrong alternative throws InvalidArgument naming the setting.
void set(std::string_view name, const Value& value);

/// The size syntax of every size setting and of the h5tile command's size options: a positive
/// number of bytes, optionally with a fraction and a binary suffix K, M, G or T (also KB/KiB,
/// MB/MiB, ...; case does not matter): "4096", "512M", "1.5g", "2 GiB". A fraction of a byte
/// is dropped. Throws InvalidArgument, quoting the text, for anything else (empty, negative,
/// zero, unknown unit, too large for 64 bits).
[[nodiscard]] std::uint64_t parse_size(std::string_view text);

/// Reads every setting's environment variable now (each is otherwise read at its first use), so
/// that a bad value fails here, whatever the program goes on to use: throws InvalidArgument
/// naming the first bad variable and its value. Counts (H5TILE_THREADS) are whole numbers
/// without a size suffix; sizes take parse_size's syntax. Thread-safe.
void check_environment();

/// The most worker threads the `threads` setting allows.
inline constexpr unsigned kMaxThreads = 4096;

/// Worker threads (and default ranks of to_file), 1 to kMaxThreads. Thread-safe.
[[nodiscard]] unsigned threads();
void set_threads(unsigned n);

/// Bytes moved by one I/O task; larger transfers are split into tasks of this size.
[[nodiscard]] std::size_t task_size();
void set_task_size(std::size_t bytes);

/// File-space alignment of raw data in files h5tile writes (a power of two).
[[nodiscard]] std::size_t alignment();
void set_alignment(std::size_t bytes);

/// Pinned host memory used to stage device reads and writes, per device. It is cut into pieces
/// of at most one task, small enough that every thread has two (one filling while the other's
/// copy runs), and at least 1 MiB where the setting allows.
[[nodiscard]] std::size_t staging_bytes();
void set_staging_bytes(std::size_t bytes);

/// Move bytes with pread/pwrite where the storage allows (contiguous and unfiltered chunked
/// data stored as in memory, tiles h5tile wrote). Off: every read goes through the HDF5
/// library (slower; for comparison and as a fallback). Results are identical either way.
[[nodiscard]] bool raw_io();
void set_raw_io(bool on);

/// Reads of a virtual dataset that h5tile wrote start at once, from the tile index h5tile
/// stores beside the mapping (tile boxes, files and offsets), while HDF5 opens the dataset and
/// decodes its mapping (tens of milliseconds for thousands of tiles, on one thread). Once open,
/// the mapping must agree with the index, or the read is done again from the mapping (progress
/// then starts again from zero). Needs raw_io. Off: every read waits for HDF5's open. Results
/// are identical either way.
[[nodiscard]] bool early_reads();
void set_early_reads(bool on);

/// Untrusted files: before HDF5 opens a file in this process, open its metadata in a child
/// process (fork), with a time limit (probe_timeout): the dataset's header, type, space,
/// layout and filters, its chunk index, a virtual dataset's mapping, tile index and the
/// sources that the read opens with HDF5 (what the operation itself is about to open). HDF5
/// 1.10 crashes or loops forever on some damaged files; a crash (a signal) or a child still
/// running at the limit then throws ProbeFailed (a NotHdf5File), and this process never opens
/// the file. Applies to from_file, read_box, read_into, read_tile, from_file_batched,
/// consolidate (its input), describe, list_datasets, list_virtual_sources and verify; a per-call
/// option (ReadOptions::probe, ConsolidateOptions::probe) overrides it. It cannot catch damage
/// in the data itself (chunks decoded by filters), a file changed between the probe and the
/// read, or HDF5 opens outside these calls (to_file in Append mode opens the existing file
/// unprobed). Costs one fork and one more opening of the metadata per call (a few
/// milliseconds for a small file; more for a process with much memory mapped, or a dataset
/// with many sources).
[[nodiscard]] bool probe();
void set_probe(bool on);

/// The longest a probe (see probe) may take, in seconds (more than 0, at most kMaxProbeTimeout).
[[nodiscard]] double probe_timeout();
void set_probe_timeout(double seconds);
/// The longest probe_timeout allowed: one day.
inline constexpr double kMaxProbeTimeout = 86400;

/// Reads of data that is not in the page cache. Each large read copies what the page cache
/// holds from it (asked with mincore(2), which reads nothing) and reads the rest with O_DIRECT
/// (bypassing the cache: the disk's full speed, no extra copy, nothing evicted) where file
/// offset and memory line up on 4 KiB, else buffered. Auto does that for files of at
/// least half the machine's memory (which would not stay cached anyway) and reads smaller
/// files buffered (so that a file read again comes from the cache); On does it for every
/// file; Off never does. Results are identical either way.
enum class DirectIo : unsigned char { Auto, On, Off };
[[nodiscard]] DirectIo direct_io();
void set_direct_io(DirectIo mode);

/// How large reads of local files read data that is not in the page cache. Parallel reads every
/// read as warm data is read: one task of `task_size` per worker of `threads`, as many in flight as
/// threads. Stream reads it as one sequential stream in file order: `cold_readers` readers, each
/// taking the next request of `cold_request_size` bytes (the shape bench/probes/cold_read_shape.py
/// measured fastest for cold data on a virtual disk, where many parallel requests read slower than
/// a few large ones). Auto (the default) samples which pages of the read the page cache holds
/// (mincore(2), which reads nothing) and streams a read of 64 MiB or more whose sampled pages are
/// mostly not cached; warm reads stay parallel. Compressed chunks, decoded by every worker, are
/// always read in parallel. Results are identical either way; last_read_pattern() says which ran
/// and what the sample found.
enum class ColdReads : unsigned char { Auto, Parallel, Stream };
[[nodiscard]] ColdReads cold_reads();
void set_cold_reads(ColdReads mode);
/// Readers of a streamed cold read (1 to kMaxThreads).
[[nodiscard]] unsigned cold_readers();
void set_cold_readers(unsigned n);
/// Bytes of one request of a streamed cold read (1 MiB to 1 GiB).
[[nodiscard]] std::uint64_t cold_request_size();
void set_cold_request_size(std::uint64_t bytes);

/// Host memory kept for reuse by the arrays that reads return: a result of 128 KiB or more
/// freed by the program is kept, and the next read of the same size reuses it without the
/// page faults and zero-fill of new memory (a loop of from_file calls then runs as fast as
/// reads into one reused buffer). At most this many bytes are kept (the oldest go first);
/// kept buffers of 32 MiB or more are marked MADV_FREE, so the kernel takes their pages back
/// when memory is needed elsewhere (smaller ones, at most 256 MiB of them, are kept as they
/// are). 0 keeps nothing. Setting a lower value frees kept memory down to it at once.
[[nodiscard]] std::uint64_t host_pool_bytes();
void set_host_pool_bytes(std::uint64_t bytes);
/// Host memory kept for reuse now (at most host_pool_bytes()).
[[nodiscard]] std::uint64_t host_pool_held_bytes();

/// Reads of a URL (http://, https://): connections kept open to the server and shared by the
/// workers, which is also how many requests are in flight at once (1 to 1024).
[[nodiscard]] unsigned remote_connections();
void set_remote_connections(unsigned n);
/// The block of a remote object that its first request fetches (the superblock and root group
/// of most files, a small file whole) and the unit in which HDF5's metadata reads of it are
/// fetched and cached (4 KiB to 1 GiB).
[[nodiscard]] std::uint64_t remote_block_size();
void set_remote_block_size(std::uint64_t bytes);
/// Seconds to connect to a server, and the longest a response may stall; one range is not
/// retried once four times this has passed since its first try (above 0, at most
/// kMaxProbeTimeout).
[[nodiscard]] double remote_timeout();
void set_remote_timeout(double seconds);
/// Retries of one range after a failure worth retrying (HTTP 5xx and 429, a dropped connection,
/// a timeout, a short body), with exponential backoff and jitter (0 to 100).
[[nodiscard]] unsigned remote_retries();
void set_remote_retries(unsigned n);

/// The blocks into which h5tile's writer cuts each lz4 chunk (the LZ4 filter's format, as
/// hdf5plugin reads and writes it, states the block size in every chunk, so any block size reads
/// back anywhere). 0, the default, writes one block per chunk (hdf5plugin's LZ4() default); else
/// 4 KiB to 1 GiB. Smaller blocks let nvCOMP decode one chunk on many parts of the GPU at once,
/// but cost the CPU codec time (64 KiB on 2 cores: reads 24% and writes 26% slower, BENCHMARKS.md);
/// the default stays until a GPU measurement shows a size that wins (bench/probes/lz4_blocks.py).
[[nodiscard]] std::uint64_t lz4_block_size();
void set_lz4_block_size(std::uint64_t bytes);

/// GPUDirect Storage (cuFile): Auto uses it where it works and falls back to staging;
/// On fails where it cannot be used; Off never tries.
enum class Gds : unsigned char { Auto, On, Off };
[[nodiscard]] Gds gds();
void set_gds(Gds mode);

/// Decoding compressed chunks read into device memory with nvCOMP on the GPU (only the compressed
/// bytes cross PCIe). Auto (the default) decodes deflate (gzip) there, with or without shuffle,
/// where nvCOMP loads, and checks each chunk's Adler-32 there (nvCOMP does not), so a damaged
/// chunk fails the read as it fails with HDF5 and the CPU decoder; zstd and lz4 go to the CPU
/// (hdf5plugin's chunks carry no checksum to check nvCOMP's output against, and the CPU decoded
/// them faster where measured). On decodes every codec nvCOMP has (deflate, zstd, lz4, each with
/// or without shuffle) on the GPU and fails, naming why, where the GPU cannot decode a filtered
/// dataset. Off always decodes on the CPU. last_device_io() says which one did and why.
enum class GpuDecode : unsigned char { Auto, On, Off };
[[nodiscard]] GpuDecode gpu_decode();
void set_gpu_decode(GpuDecode mode);

/// The nvCOMP library that GPU decoding loads at run time (dlopen): a path, or "" for
/// dlopen's own search for libnvcomp.so.6 (LD_LIBRARY_PATH, the system's libraries). The Python
/// package sets it, where it is still "", to the nvidia-libnvcomp-cu13 wheel's library if that
/// is installed. Each path is loaded once per process. Thread-safe.
[[nodiscard]] std::string nvcomp_library();
void set_nvcomp_library(std::string path);

}  // namespace h5tile::settings
