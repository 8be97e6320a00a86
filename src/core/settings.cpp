// The one place where h5tile's process-wide defaults live (see include/h5tile/settings.hpp).
#include <h5tile/settings.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "core/host_pool.hpp"

namespace h5tile::settings {
namespace {

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
unsigned count_from_env(const char* variable, unsigned fallback, unsigned least, unsigned most, std::string_view what) {
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
  return count_from_env("H5TILE_THREADS", fallback, 1, kMaxThreads, "threads");
}

std::atomic<unsigned>& threads_value() {
  static std::atomic<unsigned> value = threads_from_env();
  return value;
}

std::atomic<std::size_t>& task_size_value() {
  static std::atomic<std::size_t> value = from_env("H5TILE_TASK_SIZE", std::size_t{8} << 20);
  return value;
}

std::atomic<std::size_t>& alignment_value() {
  static std::atomic<std::size_t> value = [] {
    const auto v = from_env("H5TILE_ALIGNMENT", 4096);
    check_power_of_two("environment variable H5TILE_ALIGNMENT", v);
    return v;
  }();
  return value;
}

std::atomic<std::size_t>& staging_value() {
  static std::atomic<std::size_t> value = from_env("H5TILE_STAGING_BYTES", std::size_t{128} << 20);
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
  static std::atomic<Gds> value = auto_on_off<Gds>("H5TILE_GDS", false);
  return value;
}

std::atomic<GpuDecode>& gpu_decode_value() {
  static std::atomic<GpuDecode> value = auto_on_off<GpuDecode>("H5TILE_GPU_DECODE", false);
  return value;
}

// A string setting: no atomic holds one, so a mutex guards it.
struct NvcompLibrary {
  std::mutex mutex;
  std::string path;
};
NvcompLibrary& nvcomp_library_value() {
  static NvcompLibrary value{{}, [] {
                               const char* text = std::getenv("H5TILE_NVCOMP_LIBRARY");
                               return std::string(text != nullptr ? text : "");
                             }()};
  return value;
}

std::atomic<DirectIo>& direct_io_value() {
  static std::atomic<DirectIo> value = auto_on_off<DirectIo>("H5TILE_DIRECT_IO", true);
  return value;
}

constexpr std::uint64_t kMinColdRequest = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxColdRequest = std::uint64_t{1} << 30;
// The shape bench/probes/cold_read_shape.py measured fastest for cold data (BENCHMARKS.md).
constexpr unsigned kColdReaders = 1;
constexpr std::uint64_t kColdRequest = std::uint64_t{32} << 20;

std::atomic<ColdReads>& cold_reads_value() {
  static std::atomic<ColdReads> value = [] {
    const char* text = std::getenv("H5TILE_COLD_READS");
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
  static std::atomic<unsigned> value = count_from_env("H5TILE_COLD_READERS", kColdReaders, 1, kMaxThreads, "readers");
  return value;
}

std::atomic<std::uint64_t>& cold_request_value() {
  static std::atomic<std::uint64_t> value = [] {
    const std::uint64_t v = from_env("H5TILE_COLD_REQUEST", kColdRequest);
    if (v < kMinColdRequest || v > kMaxColdRequest) {
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
  static std::atomic<bool> value = from_env_flag("H5TILE_RAW_IO", true);
  return value;
}

std::atomic<bool>& early_reads_value() {
  static std::atomic<bool> value = from_env_flag("H5TILE_EARLY_READS", true);
  return value;
}

// H5TILE_HOST_POOL: a size, or 0/off for none; unset or empty: a quarter of physical memory.
std::atomic<std::uint64_t>& host_pool_value() {
  static std::atomic<std::uint64_t> value = [] {
    const char* text = std::getenv("H5TILE_HOST_POOL");
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
  static std::atomic<bool> value = from_env_flag("H5TILE_PROBE", false);
  return value;
}

// A time limit in seconds: a number (a fraction allowed) above 0 and at most kMaxProbeTimeout.
bool valid_timeout(double seconds) { return seconds > 0 && seconds <= kMaxProbeTimeout; }

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
  static std::atomic<double> value = timeout_from_env("H5TILE_PROBE_TIMEOUT", 60);
  return value;
}

constexpr unsigned kMaxConnections = 1024;
constexpr unsigned kMaxRetries = 100;
constexpr std::uint64_t kMinBlock = 4096;
constexpr std::uint64_t kMaxBlock = std::uint64_t{1} << 30;

std::atomic<unsigned>& remote_connections_value() {
  static std::atomic<unsigned> value =
      count_from_env("H5TILE_REMOTE_CONNECTIONS", 16, 1, kMaxConnections, "connections");
  return value;
}

std::atomic<std::uint64_t>& remote_block_value() {
  static std::atomic<std::uint64_t> value = [] {
    const std::uint64_t v = from_env("H5TILE_REMOTE_BLOCK_SIZE", std::size_t{4} << 20);
    if (v < kMinBlock || v > kMaxBlock) {
      throw InvalidArgument(
          fmt::format("environment variable H5TILE_REMOTE_BLOCK_SIZE={} must be from 4 KiB to 1 GiB", v));
    }
    return v;
  }();
  return value;
}

std::atomic<double>& remote_timeout_value() {
  static std::atomic<double> value = timeout_from_env("H5TILE_REMOTE_TIMEOUT", 30);
  return value;
}

std::atomic<unsigned>& remote_retries_value() {
  static std::atomic<unsigned> value = count_from_env("H5TILE_REMOTE_RETRIES", 5, 0, kMaxRetries, "retries");
  return value;
}

// H5TILE_LZ4_BLOCK_SIZE: a size from 4 KiB to 1 GiB, or 0 (one block per chunk).
constexpr std::uint64_t kLz4Block = 0;  // until the GPU machine measures a block size that wins (issue 28)
std::atomic<std::uint64_t>& lz4_block_value() {
  static std::atomic<std::uint64_t> value = [] {
    const char* text = std::getenv("H5TILE_LZ4_BLOCK_SIZE");
    const std::string_view v = text != nullptr ? text : "";
    if (v == "0") return std::uint64_t{0};
    const std::uint64_t bytes = from_env("H5TILE_LZ4_BLOCK_SIZE", kLz4Block);
    if (bytes != 0 && (bytes < kMinBlock || bytes > kMaxBlock)) {
      throw InvalidArgument(fmt::format(
          "environment variable H5TILE_LZ4_BLOCK_SIZE={} must be from 4 KiB to 1 GiB, or 0 (one block per chunk)", v));
    }
    return bytes;
  }();
  return value;
}

}  // namespace

void check_environment() {
  (void)threads();
  (void)task_size();
  (void)alignment();
  (void)staging_bytes();
  (void)raw_io();
  (void)early_reads();
  (void)direct_io();
  (void)cold_reads();
  (void)cold_readers();
  (void)cold_request_size();
  (void)host_pool_bytes();
  (void)probe();
  (void)probe_timeout();
  (void)gds();
  (void)gpu_decode();
  (void)nvcomp_library();
  (void)remote_connections();
  (void)remote_block_size();
  (void)remote_timeout();
  (void)remote_retries();
  (void)lz4_block_size();
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
  if (n < 1 || n > kMaxConnections) {
    throw InvalidArgument(
        fmt::format("settings::set_remote_connections: connections must be from 1 to {}, got {}", kMaxConnections, n));
  }
  remote_connections_value().store(n);
}

std::uint64_t remote_block_size() { return remote_block_value().load(); }
void set_remote_block_size(std::uint64_t bytes) {
  if (bytes < kMinBlock || bytes > kMaxBlock) {
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
  if (bytes != 0 && (bytes < kMinBlock || bytes > kMaxBlock)) {
    throw InvalidArgument(fmt::format(
        "settings::set_lz4_block_size: the block size must be from 4 KiB to 1 GiB, or 0 (one block per chunk), got {}",
        bytes));
  }
  lz4_block_value().store(bytes);
}

unsigned remote_retries() { return remote_retries_value().load(); }
void set_remote_retries(unsigned n) {
  if (n > kMaxRetries) {
    throw InvalidArgument(
        fmt::format("settings::set_remote_retries: retries must be from 0 to {}, got {}", kMaxRetries, n));
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
  if (n < 1 || n > kMaxThreads) {
    throw InvalidArgument(
        fmt::format("settings::set_cold_readers: readers must be from 1 to {}, got {}", kMaxThreads, n));
  }
  cold_readers_value().store(n);
}

std::uint64_t cold_request_size() { return cold_request_value().load(); }
void set_cold_request_size(std::uint64_t bytes) {
  if (bytes < kMinColdRequest || bytes > kMaxColdRequest) {
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
  if (n > kMaxThreads) {
    throw InvalidArgument(
        fmt::format("settings::set_threads: {} threads is more than {}, the most h5tile starts", n, kMaxThreads));
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
