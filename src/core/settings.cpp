// The one place where h5tile's process-wide defaults live (see include/h5tile/settings.hpp).
#include <h5tile/settings.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "core/host_pool.hpp"

namespace h5tile::settings {
namespace {

constexpr std::uint64_t kKiB = std::uint64_t{1} << 10;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr auto kMaxSeconds = static_cast<std::uint64_t>(kMaxProbeTimeout);

// What the rows' setters take from a Value: the alternative their kind carries, or an
// InvalidArgument naming the setting.
std::uint64_t whole(const Value& value, std::string_view name) {
  if (const auto* v = std::get_if<std::uint64_t>(&value)) return *v;
  throw InvalidArgument(fmt::format("the setting {} takes a whole number", name));
}

// A count: a whole number within the row's bounds (checked here, before it is narrowed).
unsigned count(const Value& value, std::string_view name) {
  const auto v = whole(value, name);
  const auto& row = setting(name);
  if (v < row.least || v > row.most) {
    throw InvalidArgument(fmt::format("the setting {} must be from {} to {}, got {}", name, row.least, row.most, v));
  }
  return static_cast<unsigned>(v);
}

bool flag(const Value& value, std::string_view name) {
  const auto v = whole(value, name);
  if (v > 1) throw InvalidArgument(fmt::format("the setting {} takes 0 or 1, got {}", name, v));
  return v == 1;
}

double seconds(const Value& value, std::string_view name) {
  if (const auto* v = std::get_if<double>(&value)) return *v;
  if (const auto* v = std::get_if<std::uint64_t>(&value)) return static_cast<double>(*v);
  throw InvalidArgument(fmt::format("the setting {} takes a number of seconds", name));
}

std::string text(const Value& value, std::string_view name) {
  if (const auto* v = std::get_if<std::string>(&value)) return *v;
  throw InvalidArgument(fmt::format("the setting {} takes a string", name));
}

template <class Mode>
std::string word(Mode mode) {
  if constexpr (std::is_same_v<Mode, ColdReads>) {
    return mode == ColdReads::Parallel ? "parallel" : mode == ColdReads::Stream ? "stream" : "auto";
  } else {
    return mode == Mode::On ? "on" : mode == Mode::Off ? "off" : "auto";
  }
}

template <class Mode>
Mode auto_on_off_word(const Value& value, std::string_view name) {
  const auto w = text(value, name);
  if (w == "auto") return Mode::Auto;
  if (w == "on") return Mode::On;
  if (w == "off") return Mode::Off;
  throw InvalidArgument(fmt::format("{} must be 'auto', 'on' or 'off', not '{}'", name, w));
}

ColdReads cold_reads_word(const Value& value) {
  const auto w = text(value, "cold_reads");
  if (w == "auto") return ColdReads::Auto;
  if (w == "parallel") return ColdReads::Parallel;
  if (w == "stream") return ColdReads::Stream;
  throw InvalidArgument(fmt::format("cold_reads must be 'auto', 'parallel' or 'stream', not '{}'", w));
}

// Every setting: what the environment is parsed against, what the setters check, what Python's
// h5tile.settings and docs/SETTINGS.md say (tests/python/test_settings.py checks that page
// against this table), and what settings::get and set (Python's h5tile.settings functions, made
// from the table) call. A new setting: a row here, its typed getter and setter below and in
// include/h5tile/settings.hpp, and a line in kAll.
constexpr Setting kThreads{"threads",
                           "H5TILE_THREADS",
                           Kind::Count,
                           1,
                           kMaxThreads,
                           "1 to 4096 (a count: no suffix)",
                           "hardware threads",
                           "worker threads (and default ranks of `to_file`)",
                           [] { return Value{std::uint64_t{threads()}}; },
                           [](const Value& v) { set_threads(count(v, "threads")); }};
constexpr Setting kTaskSize{"task_size",
                            "H5TILE_TASK_SIZE",
                            Kind::Size,
                            1,
                            0,
                            "a size",
                            "8 MiB",
                            "bytes per I/O task",
                            [] { return Value{std::uint64_t{task_size()}}; },
                            [](const Value& v) { set_task_size(whole(v, "task_size")); }};
constexpr Setting kAlignment{"alignment",
                             "H5TILE_ALIGNMENT",
                             Kind::Size,
                             1,
                             0,
                             "a power of two",
                             "4096",
                             "alignment of raw data in files written",
                             [] { return Value{std::uint64_t{alignment()}}; },
                             [](const Value& v) { set_alignment(whole(v, "alignment")); }};
constexpr Setting kStaging{"staging_bytes",
                           "H5TILE_STAGING_BYTES",
                           Kind::Size,
                           1,
                           0,
                           "a size",
                           "128 MiB",
                           "pinned staging memory per GPU",
                           [] { return Value{std::uint64_t{staging_bytes()}}; },
                           [](const Value& v) { set_staging_bytes(whole(v, "staging_bytes")); }};
constexpr Setting kHostPool{
    "host_pool_bytes",
    "H5TILE_HOST_POOL",
    Kind::Size,
    0,
    0,
    "a size; `0` or `off`: none",
    "a quarter of physical memory",
    "host memory kept for reuse by read results (freed results of 128 KiB or more; from 32 MiB up marked "
    "`MADV_FREE`, so the kernel takes it back under memory pressure; at most 256 MiB in smaller ones)",
    [] { return Value{host_pool_bytes()}; },
    [](const Value& v) { set_host_pool_bytes(whole(v, "host_pool_bytes")); }};
constexpr Setting kGds{"gds",
                       "H5TILE_GDS",
                       Kind::Mode,
                       0,
                       0,
                       "`auto`, `on` (fail if unusable), `off`",
                       "`auto`",
                       "GPUDirect Storage (cuFile)",
                       [] { return Value{word(gds())}; },
                       [](const Value& v) { set_gds(auto_on_off_word<Gds>(v, "gds")); }};
constexpr Setting kGpuDecode{
    "gpu_decode",
    "H5TILE_GPU_DECODE",
    Kind::Mode,
    0,
    0,
    "`auto`, `on`, `off`",
    "`auto`",
    "compressed chunks read into device memory decoded on the GPU (nvCOMP): `auto`: gzip, zstd and lz4 where "
    "nvCOMP loads, on whichever of the GPU and the CPU measured faster on the first read of 32 MiB or more per "
    "device and codec, kept for the process; gzip's Adler-32 checked either way, zstd and lz4 carry no "
    "checksum; `on`: on the GPU, and fail, naming why, where the GPU cannot; `off`: on the CPU",
    [] { return Value{word(gpu_decode())}; },
    [](const Value& v) { set_gpu_decode(auto_on_off_word<GpuDecode>(v, "gpu_decode")); }};
constexpr Setting kNvcompLibrary{
    "nvcomp_library",
    "H5TILE_NVCOMP_LIBRARY",
    Kind::Text,
    0,
    0,
    "a path, or empty",
    "`\"\"`: `libnvcomp.so.6` on the library path (Python: the `nvidia-libnvcomp-cu13` wheel's where installed)",
    "the nvCOMP library loaded for GPU decoding",
    [] { return Value{nvcomp_library()}; },
    [](const Value& v) { set_nvcomp_library(text(v, "nvcomp_library")); }};
constexpr Setting kRawIo{"raw_io",
                         "H5TILE_RAW_IO",
                         Kind::Flag,
                         0,
                         0,
                         "0 or 1",
                         "1",
                         "pread/pwrite where the storage allows (0: every read through HDF5)",
                         [] { return Value{std::uint64_t{raw_io()}}; },
                         [](const Value& v) { set_raw_io(flag(v, "raw_io")); }};
constexpr Setting kDirectIo{"direct_io",
                            "H5TILE_DIRECT_IO",
                            Kind::Mode,
                            0,
                            0,
                            "`auto` (files of half the memory or more), `on` (or 1), `off` (or 0)",
                            "`auto`",
                            "uncached data read with `O_DIRECT`",
                            [] { return Value{word(direct_io())}; },
                            [](const Value& v) { set_direct_io(auto_on_off_word<DirectIo>(v, "direct_io")); }};
constexpr Setting kColdReads{
    "cold_reads",
    "H5TILE_COLD_READS",
    Kind::Mode,
    0,
    0,
    "`auto`, `parallel`, `stream`",
    "`auto`",
    "how large reads of local data outside the page cache run: `parallel` (as warm data: one task per worker), "
    "`stream` (few readers of large requests in file order), `auto` (a `mincore` sample of the read's pages: "
    "reads of 64 MiB or more mostly not cached are streamed); `last_read_pattern()` says which ran",
    [] { return Value{word(cold_reads())}; },
    [](const Value& v) { set_cold_reads(cold_reads_word(v)); }};
constexpr Setting kColdReaders{"cold_readers",
                               "H5TILE_COLD_READERS",
                               Kind::Count,
                               1,
                               kMaxThreads,
                               "1 to 4096",
                               "1",
                               "readers of a streamed cold read",
                               [] { return Value{std::uint64_t{cold_readers()}}; },
                               [](const Value& v) { set_cold_readers(count(v, "cold_readers")); }};
constexpr Setting kColdRequest{"cold_request_size",
                               "H5TILE_COLD_REQUEST",
                               Kind::Size,
                               kMiB,
                               kGiB,
                               "1 MiB to 1 GiB",
                               "32 MiB",
                               "one request of a streamed cold read",
                               [] { return Value{cold_request_size()}; },
                               [](const Value& v) { set_cold_request_size(whole(v, "cold_request_size")); }};
constexpr Setting kEarlyReads{
    "early_reads",
    "H5TILE_EARLY_READS",
    Kind::Flag,
    0,
    0,
    "0 or 1",
    "1",
    "reads of virtual datasets start from h5tile's tile index while HDF5 opens them (0: wait)",
    [] { return Value{std::uint64_t{early_reads()}}; },
    [](const Value& v) { set_early_reads(flag(v, "early_reads")); }};
constexpr Setting kProbe{"probe",
                         "H5TILE_PROBE",
                         Kind::Flag,
                         0,
                         0,
                         "0 or 1",
                         "0 (per call: `ReadOptions::probe`, Python `probe=`)",
                         "untrusted files: open the metadata in a child process first (see "
                         "[RELIABILITY.md](RELIABILITY.md#untrusted-files-the-probe))",
                         [] { return Value{std::uint64_t{probe()}}; },
                         [](const Value& v) { set_probe(flag(v, "probe")); }};
constexpr Setting kProbeTimeout{"probe_timeout",
                                "H5TILE_PROBE_TIMEOUT",
                                Kind::Seconds,
                                0,
                                kMaxSeconds,
                                "seconds, above 0, at most 86400",
                                "60",
                                "the longest that child process may take",
                                [] { return Value{probe_timeout()}; },
                                [](const Value& v) { set_probe_timeout(seconds(v, "probe_timeout")); }};
constexpr Setting kRemoteConnections{"remote_connections",
                                     "H5TILE_REMOTE_CONNECTIONS",
                                     Kind::Count,
                                     1,
                                     1024,
                                     "1 to 1024",
                                     "16",
                                     "connections to a server for reads of a URL, shared by the workers",
                                     [] { return Value{std::uint64_t{remote_connections()}}; },
                                     [](const Value& v) { set_remote_connections(count(v, "remote_connections")); }};
constexpr Setting kRemoteBlock{"remote_block_size",
                               "H5TILE_REMOTE_BLOCK_SIZE",
                               Kind::Size,
                               4 * kKiB,
                               kGiB,
                               "4 KiB to 1 GiB",
                               "4 MiB",
                               "the first request of a URL, and HDF5's metadata blocks of it",
                               [] { return Value{remote_block_size()}; },
                               [](const Value& v) { set_remote_block_size(whole(v, "remote_block_size")); }};
constexpr Setting kRemoteTimeout{
    "remote_timeout",
    "H5TILE_REMOTE_TIMEOUT",
    Kind::Seconds,
    0,
    kMaxSeconds,
    "seconds, above 0, at most 86400",
    "30",
    "seconds to connect, or that a response may stall; one range is not retried after 4 times this",
    [] { return Value{remote_timeout()}; },
    [](const Value& v) { set_remote_timeout(seconds(v, "remote_timeout")); }};
constexpr Setting kRemoteRetries{"remote_retries",
                                 "H5TILE_REMOTE_RETRIES",
                                 Kind::Count,
                                 0,
                                 100,
                                 "0 to 100",
                                 "5",
                                 "retries of one range (HTTP 5xx and 429, dropped connections, timeouts, short bodies)",
                                 [] { return Value{std::uint64_t{remote_retries()}}; },
                                 [](const Value& v) { set_remote_retries(count(v, "remote_retries")); }};
constexpr Setting kLz4Block{
    "lz4_block_size",
    "H5TILE_LZ4_BLOCK_SIZE",
    Kind::Size,
    4 * kKiB,
    kGiB,
    "4 KiB to 1 GiB; 0: one block per chunk, hdf5plugin's `LZ4()` default",
    "0",
    "the blocks into which h5tile cuts each lz4 chunk it writes; every LZ4 filter reads any block size; small "
    "blocks let nvCOMP spread one chunk over the GPU and cost the CPU codec time (one H200, 1 GiB: `64K` reads "
    "27.4 GB/s into device memory against 18.8, and 17.5 into host memory against 20.3)",
    [] { return Value{lz4_block_size()}; },
    [](const Value& v) { set_lz4_block_size(whole(v, "lz4_block_size")); }};

constexpr std::array kAll = {
    kThreads,       kTaskSize,     kAlignment,         kStaging,     kHostPool,      kGds,           kGpuDecode,
    kNvcompLibrary, kRawIo,        kDirectIo,          kColdReads,   kColdReaders,   kColdRequest,   kEarlyReads,
    kProbe,         kProbeTimeout, kRemoteConnections, kRemoteBlock, kRemoteTimeout, kRemoteRetries, kLz4Block};

// Whether `value` is within the bounds of `setting` (a Count or a Size; a Size's `most` of 0 is no bound).
bool within(const Setting& setting, std::uint64_t value) {
  return value >= setting.least && (value <= setting.most || (setting.kind == Kind::Size && setting.most == 0));
}

// A size in the syntax of parse_size (settings.hpp); errors name the variable.
std::size_t parse_size(const char* variable, std::string_view text) {
  try {
    return settings::parse_size(text);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("environment variable {}: {}", variable, e.what()));
  }
}

std::size_t from_env(const char* variable, std::size_t fallback) {
  const char* text = std::getenv(variable);
  return (text != nullptr && *text != '\0') ? parse_size(variable, text) : fallback;
}

void check_power_of_two(const char* what, std::size_t value) {
  if (!std::has_single_bit(value)) {
    throw InvalidArgument(fmt::format("{} must be a power of two, got {}", what, value));
  }
}

// A count (threads, connections, retries): decimal digits only, from `least` to `most`. No size
// suffix: "2K" threads is a mistake, not 2048 of them. The bound is checked before the value is
// narrowed (4294967296 must not become 0), and a value past 64 bits is refused as too large, not
// wrapped.
unsigned count_from_env(const Setting& setting, unsigned fallback, std::string_view what) {
  const char* variable = setting.variable.data();  // a literal: NUL-terminated
  const auto least = static_cast<unsigned>(setting.least);
  const auto most = static_cast<unsigned>(setting.most);
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  const std::string_view v = text;
  const bool digits = std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    throw InvalidArgument(
        fmt::format("environment variable {}='{}' must be a whole number of {} from {} to {} "
                    "(a count takes no size suffix, sign or fraction)",
                    variable, v, what, least, most));
  }
  const auto first = v.find_first_not_of('0');
  const bool too_large =
      first != std::string_view::npos && (v.size() - first > 19 || std::stoull(std::string(v.substr(first))) > most);
  const unsigned value = first == std::string_view::npos || too_large
                             ? 0
                             : static_cast<unsigned>(std::stoull(std::string(v.substr(first))));
  if (too_large || value < least) {
    throw InvalidArgument(fmt::format("environment variable {}={} is {}: it must be from {} to {} {}", variable, v,
                                      too_large ? "too large" : (value == 0 ? "zero" : "too small"), least, most,
                                      what));
  }
  return value;
}

unsigned threads_from_env() {
  const auto fallback = std::min(kMaxThreads, std::max(1U, std::thread::hardware_concurrency()));
  return count_from_env(kThreads, fallback, "threads");
}

std::atomic<unsigned>& threads_value() {
  static std::atomic<unsigned> value = threads_from_env();
  return value;
}

std::atomic<std::size_t>& task_size_value() {
  static std::atomic<std::size_t> value = from_env(kTaskSize.variable.data(), std::size_t{8} << 20);
  return value;
}

std::atomic<std::size_t>& alignment_value() {
  static std::atomic<std::size_t> value = [] {
    const auto v = from_env(kAlignment.variable.data(), 4096);
    check_power_of_two("environment variable H5TILE_ALIGNMENT", v);
    return v;
  }();
  return value;
}

std::atomic<std::size_t>& staging_value() {
  static std::atomic<std::size_t> value = from_env(kStaging.variable.data(), std::size_t{128} << 20);
  return value;
}

// An auto/on/off variable (unset or empty: auto); with `numeric`, 1 and 0 also mean on and off.
template <class Mode>
Mode auto_on_off(const char* variable, bool numeric) {
  const char* text = std::getenv(variable);
  const std::string_view mode = text != nullptr ? text : "";
  if (mode.empty() || mode == "auto") return Mode::Auto;
  if (mode == "on" || (numeric && mode == "1")) return Mode::On;
  if (mode == "off" || (numeric && mode == "0")) return Mode::Off;
  throw InvalidArgument(fmt::format("environment variable {}='{}' must be auto, on or off", variable, mode));
}

std::atomic<Gds>& gds_value() {
  static std::atomic<Gds> value = auto_on_off<Gds>(kGds.variable.data(), false);
  return value;
}

std::atomic<GpuDecode>& gpu_decode_value() {
  static std::atomic<GpuDecode> value = auto_on_off<GpuDecode>(kGpuDecode.variable.data(), false);
  return value;
}

// A string setting: no atomic holds one, so a mutex guards it.
struct NvcompLibrary {
  std::mutex mutex;
  std::string path;
};
NvcompLibrary& nvcomp_library_value() {
  static NvcompLibrary value{{}, [] {
                               const char* text = std::getenv(kNvcompLibrary.variable.data());
                               return std::string(text != nullptr ? text : "");
                             }()};
  return value;
}

std::atomic<DirectIo>& direct_io_value() {
  static std::atomic<DirectIo> value = auto_on_off<DirectIo>(kDirectIo.variable.data(), true);
  return value;
}

// The shape bench/probes/cold_read_shape.py measured fastest for cold data (BENCHMARKS.md).
constexpr unsigned kColdReadersDefault = 1;
constexpr std::uint64_t kColdRequestDefault = std::uint64_t{32} << 20;

std::atomic<ColdReads>& cold_reads_value() {
  static std::atomic<ColdReads> value = [] {
    const char* text = std::getenv(kColdReads.variable.data());
    const std::string_view mode = text != nullptr ? text : "";
    if (mode.empty() || mode == "auto") return ColdReads::Auto;
    if (mode == "parallel") return ColdReads::Parallel;
    if (mode == "stream") return ColdReads::Stream;
    throw InvalidArgument(
        fmt::format("environment variable H5TILE_COLD_READS='{}' must be auto, parallel or stream", mode));
  }();
  return value;
}

std::atomic<unsigned>& cold_readers_value() {
  static std::atomic<unsigned> value = count_from_env(kColdReaders, kColdReadersDefault, "readers");
  return value;
}

std::atomic<std::uint64_t>& cold_request_value() {
  static std::atomic<std::uint64_t> value = [] {
    const std::uint64_t v = from_env(kColdRequest.variable.data(), kColdRequestDefault);
    if (!within(kColdRequest, v)) {
      throw InvalidArgument(
          fmt::format("environment variable H5TILE_COLD_REQUEST={} ({} bytes) must be from 1 MiB to 1 GiB",
                      std::getenv("H5TILE_COLD_REQUEST"), v));
    }
    return v;
  }();
  return value;
}

// A 0/1 variable (unset or empty: `fallback`).
bool from_env_flag(const char* variable, bool fallback) {
  const char* text = std::getenv(variable);
  const std::string_view v = text != nullptr ? text : "";
  if (v.empty()) return fallback;
  if (v == "1") return true;
  if (v == "0") return false;
  throw InvalidArgument(fmt::format("environment variable {}='{}' must be 0 or 1", variable, v));
}

std::atomic<bool>& raw_io_value() {
  static std::atomic<bool> value = from_env_flag(kRawIo.variable.data(), true);
  return value;
}

std::atomic<bool>& early_reads_value() {
  static std::atomic<bool> value = from_env_flag(kEarlyReads.variable.data(), true);
  return value;
}

// H5TILE_HOST_POOL: a size, or 0/off for none; unset or empty: a quarter of physical memory.
std::atomic<std::uint64_t>& host_pool_value() {
  static std::atomic<std::uint64_t> value = [] {
    const char* text = std::getenv(kHostPool.variable.data());
    const std::string_view v = text != nullptr ? text : "";
    if (v == "0" || v == "off") return std::uint64_t{0};
    if (!v.empty()) return std::uint64_t{parse_size("H5TILE_HOST_POOL", v)};
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 4 : 0;
  }();
  return value;
}

std::atomic<bool>& probe_value() {
  static std::atomic<bool> value = from_env_flag(kProbe.variable.data(), false);
  return value;
}

// A time limit in seconds: a number (a fraction allowed) above 0 and at most kMaxProbeTimeout.
bool valid_timeout(double seconds) {
  return seconds > static_cast<double>(kProbeTimeout.least) && seconds <= static_cast<double>(kProbeTimeout.most);
}

double timeout_from_env(const char* variable, double fallback) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !valid_timeout(value)) {
    throw InvalidArgument(fmt::format("environment variable {}='{}' must be a number of seconds above 0 and at most {}",
                                      variable, text, kMaxProbeTimeout));
  }
  return value;
}

std::atomic<double>& probe_timeout_value() {
  static std::atomic<double> value = timeout_from_env(kProbeTimeout.variable.data(), 60);
  return value;
}

std::atomic<unsigned>& remote_connections_value() {
  static std::atomic<unsigned> value = count_from_env(kRemoteConnections, 16, "connections");
  return value;
}

std::atomic<std::uint64_t>& remote_block_value() {
  static std::atomic<std::uint64_t> value = [] {
    const std::uint64_t v = from_env(kRemoteBlock.variable.data(), std::size_t{4} << 20);
    if (!within(kRemoteBlock, v)) {
      throw InvalidArgument(
          fmt::format("environment variable H5TILE_REMOTE_BLOCK_SIZE={} must be from 4 KiB to 1 GiB", v));
    }
    return v;
  }();
  return value;
}

std::atomic<double>& remote_timeout_value() {
  static std::atomic<double> value = timeout_from_env(kRemoteTimeout.variable.data(), 30);
  return value;
}

std::atomic<unsigned>& remote_retries_value() {
  static std::atomic<unsigned> value = count_from_env(kRemoteRetries, 5, "retries");
  return value;
}

// H5TILE_LZ4_BLOCK_SIZE: a size from 4 KiB to 1 GiB, or 0 (one block per chunk).
constexpr std::uint64_t kLz4BlockDefault = 0;  // until the GPU machine measures a block size that wins (issue 28)
std::atomic<std::uint64_t>& lz4_block_value() {
  static std::atomic<std::uint64_t> value = [] {
    const char* text = std::getenv(kLz4Block.variable.data());
    const std::string_view v = text != nullptr ? text : "";
    if (v == "0") return std::uint64_t{0};
    const std::uint64_t bytes = from_env(kLz4Block.variable.data(), kLz4BlockDefault);
    if (bytes != 0 && !within(kLz4Block, bytes)) {
      throw InvalidArgument(fmt::format(
          "environment variable H5TILE_LZ4_BLOCK_SIZE={} must be from 4 KiB to 1 GiB, or 0 (one block per chunk)", v));
    }
    return bytes;
  }();
  return value;
}

}  // namespace

std::span<const Setting> all() noexcept { return kAll; }

const Setting& setting(std::string_view name) {
  for (const auto& s : kAll) {
    if (s.name == name) return s;
  }
  throw InvalidArgument(fmt::format("no setting is called '{}'", name));
}

Value get(std::string_view name) { return setting(name).get(); }
void set(std::string_view name, const Value& value) { setting(name).set(value); }

void check_environment() {
  for (const auto& row : kAll) (void)row.get();
}

std::uint64_t host_pool_bytes() { return host_pool_value().load(); }
void set_host_pool_bytes(std::uint64_t bytes) {
  host_pool_value().store(bytes);
  detail::host_pool::trim_to(bytes);
}
std::uint64_t host_pool_held_bytes() { return detail::host_pool::held_bytes(); }

bool raw_io() { return raw_io_value().load(); }
void set_raw_io(bool on) { raw_io_value().store(on); }

bool early_reads() { return early_reads_value().load(); }
void set_early_reads(bool on) { early_reads_value().store(on); }

bool probe() { return probe_value().load(); }
void set_probe(bool on) { probe_value().store(on); }

unsigned remote_connections() { return remote_connections_value().load(); }
void set_remote_connections(unsigned n) {
  if (!within(kRemoteConnections, n)) {
    throw InvalidArgument(fmt::format("settings::set_remote_connections: connections must be from 1 to {}, got {}",
                                      kRemoteConnections.most, n));
  }
  remote_connections_value().store(n);
}

std::uint64_t remote_block_size() { return remote_block_value().load(); }
void set_remote_block_size(std::uint64_t bytes) {
  if (!within(kRemoteBlock, bytes)) {
    throw InvalidArgument(
        fmt::format("settings::set_remote_block_size: the block size must be from 4 KiB to 1 GiB, got {}", bytes));
  }
  remote_block_value().store(bytes);
}

double remote_timeout() { return remote_timeout_value().load(); }
void set_remote_timeout(double seconds) {
  if (!valid_timeout(seconds)) {
    throw InvalidArgument(
        fmt::format("settings::set_remote_timeout: the timeout must be above 0 and at most {} seconds, got {}",
                    kMaxProbeTimeout, seconds));
  }
  remote_timeout_value().store(seconds);
}

std::uint64_t lz4_block_size() { return lz4_block_value().load(); }
void set_lz4_block_size(std::uint64_t bytes) {
  if (bytes != 0 && !within(kLz4Block, bytes)) {
    throw InvalidArgument(fmt::format(
        "settings::set_lz4_block_size: the block size must be from 4 KiB to 1 GiB, or 0 (one block per chunk), got {}",
        bytes));
  }
  lz4_block_value().store(bytes);
}

unsigned remote_retries() { return remote_retries_value().load(); }
void set_remote_retries(unsigned n) {
  if (!within(kRemoteRetries, n)) {
    throw InvalidArgument(
        fmt::format("settings::set_remote_retries: retries must be from 0 to {}, got {}", kRemoteRetries.most, n));
  }
  remote_retries_value().store(n);
}

double probe_timeout() { return probe_timeout_value().load(); }
void set_probe_timeout(double seconds) {
  if (!valid_timeout(seconds)) {
    throw InvalidArgument(
        fmt::format("settings::set_probe_timeout: the time limit must be above 0 and at most {} seconds, got {}",
                    kMaxProbeTimeout, seconds));
  }
  probe_timeout_value().store(seconds);
}

std::size_t staging_bytes() { return staging_value().load(); }
void set_staging_bytes(std::size_t bytes) {
  if (bytes == 0) {
    throw InvalidArgument("settings::set_staging_bytes: the staging size must be at least 1 byte");
  }
  staging_value().store(bytes);
}

DirectIo direct_io() { return direct_io_value().load(); }
void set_direct_io(DirectIo mode) { direct_io_value().store(mode); }

ColdReads cold_reads() { return cold_reads_value().load(); }
void set_cold_reads(ColdReads mode) { cold_reads_value().store(mode); }

unsigned cold_readers() { return cold_readers_value().load(); }
void set_cold_readers(unsigned n) {
  if (!within(kColdReaders, n)) {
    throw InvalidArgument(
        fmt::format("settings::set_cold_readers: readers must be from 1 to {}, got {}", kColdReaders.most, n));
  }
  cold_readers_value().store(n);
}

std::uint64_t cold_request_size() { return cold_request_value().load(); }
void set_cold_request_size(std::uint64_t bytes) {
  if (!within(kColdRequest, bytes)) {
    throw InvalidArgument(
        fmt::format("settings::set_cold_request_size: the request size must be from 1 MiB to 1 GiB, got {}", bytes));
  }
  cold_request_value().store(bytes);
}

Gds gds() { return gds_value().load(); }
void set_gds(Gds mode) { gds_value().store(mode); }

GpuDecode gpu_decode() { return gpu_decode_value().load(); }
void set_gpu_decode(GpuDecode mode) { gpu_decode_value().store(mode); }

std::string nvcomp_library() {
  auto& v = nvcomp_library_value();
  const std::lock_guard lock(v.mutex);
  return v.path;
}
void set_nvcomp_library(std::string path) {
  auto& v = nvcomp_library_value();
  const std::lock_guard lock(v.mutex);
  v.path = std::move(path);
}

unsigned threads() { return threads_value().load(); }
void set_threads(unsigned n) {
  if (n == 0) {
    throw InvalidArgument("settings::set_threads: the number of threads must be at least 1");
  }
  if (!within(kThreads, n)) {
    throw InvalidArgument(
        fmt::format("settings::set_threads: {} threads is more than {}, the most h5tile starts", n, kThreads.most));
  }
  threads_value().store(n);
}

std::size_t task_size() { return task_size_value().load(); }
void set_task_size(std::size_t bytes) {
  if (bytes == 0) {
    throw InvalidArgument("settings::set_task_size: the task size must be at least 1 byte");
  }
  task_size_value().store(bytes);
}

std::size_t alignment() { return alignment_value().load(); }
void set_alignment(std::size_t bytes) {
  check_power_of_two("settings::set_alignment", bytes);
  alignment_value().store(bytes);
}

}  // namespace h5tile::settings
