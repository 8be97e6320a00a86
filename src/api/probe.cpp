#include "api/probe.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

#include "api/resolve.hpp"
#include "engine/isolated.hpp"
#include "engine/raw_transfer.hpp"
#include "engine/thread_pool.hpp"
#include "hdf5/file.hpp"
#include "hdf5/handle.hpp"
#include "layout/virtual/early_open.hpp"

namespace h5tile::detail {

bool probe_wanted(std::optional<bool> option) { return option.value_or(settings::probe()); }

void probe(const std::string& what, const std::function<void()>& open) {
  const double limit = settings::probe_timeout();
  // The child is forked (not spawned): it needs no helper program (the library is used from
  // C++, Python and MPI programs alike, with nothing installed beside it), it opens the file
  // with this very HDF5 and these settings, and it costs milliseconds. fork_outside_hdf5
  // forks while no h5tile thread is inside HDF5, so that the child's HDF5 is whole; the child
  // runs only h5tile's opening code on one thread (no thread is started after the fork), then
  // _exit. The cost is the caller's: a fork copies its page tables (more for a process with
  // much memory mapped), and a library that forbids fork (some MPI transports) forbids this.
  // No thread may start in the child: the pool that the opening code's loops name (run there on
  // the calling thread alone) is made here, before the fork, if it is not yet (a read uses it).
  (void)default_pool();
  const auto end = run_isolated(
      fork_outside_hdf5,
      [&] {
        // Every loop of the opening code on this thread: the pool's workers are not in the child,
        // and one of them may have held the pool's lock at the fork.
        settings::set_threads(1);
        open();
      },
      std::chrono::duration<double>(limit));
  if (end.finished) {
    return;
  }
  const auto said = end.last_words.empty() ? std::string() : fmt::format(", which said '{}'", end.last_words);
  if (end.timed_out) {
    throw ProbeFailed(fmt::format(
        "HDF5 did not finish opening the metadata of {} within {} s in a child process (probe; the limit is the "
        "probe_timeout setting, H5TILE_PROBE_TIMEOUT), which was killed: the file is damaged so that HDF5 loops "
        "on it, or its storage does not answer; this process did not open it",
        what, limit));
  }
  if (end.signal != 0) {
    throw ProbeFailed(fmt::format(
        "HDF5 crashed with {} while opening the metadata of {} in a child process (probe){}: the file is damaged "
        "in a way that this HDF5 cannot read safely; this process did not open it",
        describe_signal(end.signal), what, said));
  }
  throw ProbeFailed(fmt::format(
      "the child process that opened the metadata of {} (probe) ended with exit status {} before finishing{}: "
      "the file is damaged in a way that this HDF5 cannot read safely; this process did not open it",
      what, end.exit_status, said));
}

void open_as_a_read_does(const Location& file, const std::string& dataset, OpenOptions options) {
  options.threads = 1;  // a forked child starts no thread
  if (options.early_reads) {
    (void)open_from_tile_index(file, dataset, options);
  }
  OpenDataset(file, dataset, options).walk_chunk_indexes();
}

bool read_isolated_where_hdf5_decodes(const Location& file, const std::string& dataset, OpenOptions options,
                                      double limit) {
  options.threads = 1;  // a forked child starts no thread
  options.early_reads = false;
  if (!OpenDataset(file, dataset, options).hdf5_decodes()) {
    return false;
  }
  (void)default_pool();
  constexpr int kReadFailed = 3;
  const auto end = run_isolated(
      fork_outside_hdf5,
      [&] {
        settings::set_threads(1);
        try {
          const OpenDataset source(file, dataset, options);
          const auto& info = source.info();
          constexpr std::uint64_t kBlockBytes = std::uint64_t{64} << 20;
          for (const auto& block : split_rowmajor(Box::whole(info.shape), info.dtype.size(), kBlockBytes)) {
            (void)source.read(block, 1);
          }
        } catch (const std::exception& e) {
          fmt::print(stderr, "{}\n", e.what());
          std::fflush(stderr);
          ::_exit(kReadFailed);  // an ordinary error: the caller meets it when it reads
        }
      },
      std::chrono::duration<double>(limit));
  if (end.finished) {
    return true;
  }
  if (!end.timed_out && end.signal == 0 && end.exit_status == kReadFailed) {
    return false;
  }
  const auto what = where(file.path(), dataset);
  const auto said = end.last_words.empty() ? std::string() : fmt::format(", which said '{}'", end.last_words);
  if (end.timed_out) {
    throw ProbeFailed(fmt::format(
        "HDF5 did not finish decoding the stored bytes of {} within {} s in a child process, which was killed: "
        "a chunk is damaged so that HDF5 loops on it, or its storage does not answer; this process did not read it",
        what, limit));
  }
  if (end.signal != 0) {
    throw ProbeFailed(fmt::format(
        "HDF5 crashed with {} while decoding the stored bytes of {} in a child process{}: a chunk is damaged in a "
        "way that this HDF5 cannot decode safely (h5tile's own decoders refuse such chunks, but this dataset is "
        "decoded by HDF5: raw_io is off, or a filter h5tile does not decode); this process did not read it",
        describe_signal(end.signal), what, said));
  }
  throw ProbeFailed(fmt::format(
      "the child process that read {} through HDF5's decoders ended with exit status {} before finishing{}; this "
      "process did not read it",
      what, end.exit_status, said));
}

void probe_if_wanted(std::optional<bool> option, const std::string& what, const std::function<void()>& open) {
  if (probe_wanted(option)) {
    probe(what, open);
  }
}

}  // namespace h5tile::detail
