#pragma once
/// @file
/// The communicator of the per-rank (SPMD) API. h5tile ships a thread implementation
/// (ranks are threads of one process); an MPI implementation plugs in through the same
/// interface.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace h5tile {

/// A group of ranks that run the same collective calls in the same order.
/// Every method is collective except rank() and size().
class Communicator {
 public:
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  virtual ~Communicator() = default;

  [[nodiscard]] virtual int rank() const noexcept = 0;
  [[nodiscard]] virtual int size() const noexcept = 0;
  /// Returns every rank's `data`, indexed by rank.
  [[nodiscard]] virtual std::vector<std::string> all_gather(const std::string& data) = 0;
  /// Returns rank `root`'s `data` on every rank.
  [[nodiscard]] virtual std::string broadcast(const std::string& data, int root) = 0;
  /// Returns every rank's `data`, indexed by rank, on rank `root`, and nothing (an empty vector)
  /// on the others. By default through all_gather; a communicator that can send to one rank
  /// alone (MPI's gather) overrides it.
  [[nodiscard]] virtual std::vector<std::string> gather(const std::string& data, int root) {
    auto all = all_gather(data);
    if (rank() != root) all.clear();
    return all;
  }
  /// Whether every rank is a thread of this process (h5tile's thread communicator), so that
  /// ranks may share what one of them made in memory. False by default: ranks of separate
  /// processes (MPI) share only what they exchange.
  [[nodiscard]] virtual bool threads_of_one_process() const noexcept { return false; }
};

/// Runs `body(comm)` on `ranks` threads, each with its own rank of one shared thread
/// communicator, and waits for all of them. If ranks throw, rethrows the exception of the
/// lowest failing rank. Throws InvalidArgument if ranks == 0.
void run_thread_ranks(unsigned ranks, const std::function<void(Communicator&)>& body);

}  // namespace h5tile
