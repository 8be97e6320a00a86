#pragma once
/// @file
/// The Communicator over MPI, header-only: include it in MPI programs (it needs <mpi.h>);
/// libh5tile itself does not depend on MPI. Under `mpirun -n N`, every rank passes an
/// MpiCommunicator to write_tiles / read_tile and h5tile runs the per-rank API across
/// processes: metadata by rank 0, data by every rank in parallel.

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include <h5tile/communicator.hpp>
#include <h5tile/device.hpp>
#include <h5tile/error.hpp>

namespace h5tile {

/// A Communicator over a duplicate of an MPI communicator (so h5tile's messages never mix
/// with the application's). Construct and destroy it collectively, between MPI_Init and
/// MPI_Finalize.
class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD) {
    check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    MPI_Comm local = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
    check(MPI_Comm_rank(local, &local_rank_), "MPI_Comm_rank(local)");
    MPI_Comm_free(&local);
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0 && comm_ != MPI_COMM_NULL) {
      MPI_Comm_free(&comm_);
    }
  }

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  /// The rank among the ranks of this node (shared memory).
  [[nodiscard]] int local_rank() const noexcept { return local_rank_; }
  /// The GPU this rank uses by default: its node-local rank modulo the visible devices
  /// (-1 without devices).
  [[nodiscard]] int default_device() const noexcept {
    const int n = cuda_device_count();
    return n > 0 ? local_rank_ % n : -1;
  }
  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }

  [[nodiscard]] std::vector<std::string> all_gather(const std::string& data) override {
    if (data.size() > static_cast<std::size_t>(INT_MAX)) {
      throw InvalidArgument("MpiCommunicator::all_gather: message larger than 2 GiB");
    }
    const int length = static_cast<int>(data.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_), "MPI_Allgather");
    long long total = 0;
    const auto displacements = displacements_of(lengths, total);
    if (total > INT_MAX) {
      throw InvalidArgument("MpiCommunicator::all_gather: messages larger than 2 GiB together");
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Allgatherv(data.data(), length, MPI_BYTE, all.data(), lengths.data(), displacements.data(), MPI_BYTE,
                         comm_),
          "MPI_Allgatherv");
    return split(all, lengths, displacements);
  }

  [[nodiscard]] std::vector<std::string> gather(const std::string& data, int root) override {
    if (data.size() > static_cast<std::size_t>(INT_MAX)) {
      throw InvalidArgument("MpiCommunicator::gather: message larger than 2 GiB");
    }
    const int length = static_cast<int>(data.size());
    std::vector<int> lengths(rank_ == root ? static_cast<std::size_t>(size_) : 0);
    check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm_), "MPI_Gather");
    long long total = 0;
    const auto displacements = displacements_of(lengths, total);
    // Every rank learns whether the root can take them all, so that none is left in the gather.
    int fits = total <= INT_MAX ? 1 : 0;
    check(MPI_Bcast(&fits, 1, MPI_INT, root, comm_), "MPI_Bcast");
    if (fits == 0) {
      throw InvalidArgument("MpiCommunicator::gather: messages larger than 2 GiB together");
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Gatherv(data.data(), length, MPI_BYTE, all.data(), lengths.data(), displacements.data(), MPI_BYTE, root,
                      comm_),
          "MPI_Gatherv");
    return split(all, lengths, displacements);
  }

  [[nodiscard]] std::string broadcast(const std::string& data, int root) override {
    std::uint64_t length = rank_ == root ? data.size() : 0;
    check(MPI_Bcast(&length, 1, MPI_UINT64_T, root, comm_), "MPI_Bcast");
    std::string out = rank_ == root ? data : std::string(length, '\0');
    for (std::uint64_t done = 0; done < length;) {  // in pieces below INT_MAX bytes
      const auto n = static_cast<int>(std::min<std::uint64_t>(length - done, 1U << 30));
      check(MPI_Bcast(out.data() + done, n, MPI_BYTE, root, comm_), "MPI_Bcast");
      done += static_cast<std::uint64_t>(n);
    }
    return out;
  }

 private:
  // Where each rank's message starts among all of them, and (`total`) their length together.
  static std::vector<int> displacements_of(const std::vector<int>& lengths, long long& total) {
    std::vector<int> displacements(lengths.size(), 0);
    total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      displacements[r] = static_cast<int>(total);
      total += lengths[r];
    }
    return displacements;
  }
  // The messages gathered into `all`, one per rank.
  static std::vector<std::string> split(const std::string& all, const std::vector<int>& lengths,
                                        const std::vector<int>& displacements) {
    std::vector<std::string> out;
    out.reserve(lengths.size());
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      out.push_back(all.substr(static_cast<std::size_t>(displacements[r]), static_cast<std::size_t>(lengths[r])));
    }
    return out;
  }

  static void check(int status, const char* what) {
    if (status != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING] = {};
      int length = 0;
      MPI_Error_string(status, text, &length);
      throw RuntimeError(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
};

}  // namespace h5tile
