// The Communicator over threads of one process: ranks meet at a generation-counted barrier
// and exchange strings through shared slots. Each rank runs on a thread started for it, not on
// the engine's pool (engine/thread_pool.hpp): the ranks of a team wait for each other in every
// collective, so all of them must run at once for the whole of their body, however many a
// caller asks for. On a pool of bounded size they would deadlock; as tasks (a worker of its own
// each) every rank would still need a thread started for it, and comm/ would depend on the
// engine, which run_thread_ranks (public) does not need.
#include <h5tile/communicator.hpp>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile {
namespace {

class ThreadTeam {
 public:
  explicit ThreadTeam(int size) : size_(size), slots_(static_cast<std::size_t>(size)) {}

  // Every rank deposits `data`; returns all deposits once every rank has deposited.
  std::vector<std::string> exchange(int rank, const std::string& data) {
    std::unique_lock lock(mutex_);
    // Wait until the previous exchange has been collected by every rank.
    collected_.wait(lock, [&] { return !publishing_ || aborted_; });
    throw_if_aborted();
    slots_[static_cast<std::size_t>(rank)] = data;
    if (++arrived_ == size_) {
      result_ = slots_;
      publishing_ = true;
      ++generation_;
      arrived_ = 0;
      ready_.notify_all();
    } else {
      const auto generation = generation_;
      ready_.wait(lock, [&] { return generation_ != generation || aborted_; });
      if (generation_ == generation) {
        throw_if_aborted();  // the exchange can never complete
      }
      // Otherwise it completed: return its result even if a rank has left since.
    }
    auto out = result_;
    if (++departed_ == size_) {
      departed_ = 0;
      publishing_ = false;
      collected_.notify_all();
    }
    return out;
  }

  [[nodiscard]] int size() const noexcept { return size_; }

  // A rank left the team with an exception: ranks waiting in a collective, or entering
  // one later, throw instead of waiting for it forever.
  void abort(int rank, const std::string& reason) {
    {
      const std::lock_guard lock(mutex_);
      if (aborted_) {
        return;
      }
      aborted_ = true;
      abort_reason_ = "rank " + std::to_string(rank) + " failed: " + reason;
    }
    ready_.notify_all();
    collected_.notify_all();
  }

 private:
  void throw_if_aborted() const {
    if (aborted_) {
      throw RuntimeError("collective call abandoned: " + abort_reason_);
    }
  }

  int size_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable collected_;
  std::vector<std::string> slots_;
  std::vector<std::string> result_;
  int arrived_ = 0;
  int departed_ = 0;
  bool publishing_ = false;
  bool aborted_ = false;
  std::string abort_reason_;
  std::uint64_t generation_ = 0;
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(ThreadTeam& team, int rank) : team_(team), rank_(rank) {}
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return team_.size(); }
  [[nodiscard]] std::vector<std::string> all_gather(const std::string& data) override {
    return team_.exchange(rank_, data);
  }
  [[nodiscard]] std::string broadcast(const std::string& data, int root) override {
    auto all = team_.exchange(rank_, rank_ == root ? data : std::string());
    return std::move(all[static_cast<std::size_t>(root)]);
  }
  [[nodiscard]] bool threads_of_one_process() const noexcept override { return true; }

 private:
  ThreadTeam& team_;
  int rank_;
};

}  // namespace

void run_thread_ranks(unsigned ranks, const std::function<void(Communicator&)>& body) {
  if (ranks == 0) {
    throw InvalidArgument("run_thread_ranks: the number of ranks must be at least 1");
  }
  ThreadTeam team(static_cast<int>(ranks));
  std::vector<std::exception_ptr> errors(ranks);
  std::vector<std::thread> threads;
  threads.reserve(ranks);
  std::exception_ptr not_started;
  for (unsigned r = 0; r < ranks && !not_started; ++r) {
    try {
      threads.emplace_back([&, r] {
        ThreadCommunicator comm(team, static_cast<int>(r));
        try {
          body(comm);
        } catch (const std::exception& e) {
          errors[r] = std::current_exception();
          team.abort(static_cast<int>(r), e.what());
        } catch (...) {
          errors[r] = std::current_exception();
          team.abort(static_cast<int>(r), "unknown exception");
        }
      });
    } catch (const std::system_error& e) {
      // The ranks already running would wait for this one in their first collective: abort
      // the team so that they return, join them, then fail (a joinable thread must never be
      // destroyed: that is std::terminate).
      const auto reason = fmt::format("cannot start the thread of rank {} of {}: {}", r, ranks, e.what());
      team.abort(static_cast<int>(r), reason);
      not_started = std::make_exception_ptr(RuntimeError(reason));
    }
  }
  for (auto& t : threads) {
    t.join();
  }
  if (not_started) {
    std::rethrow_exception(not_started);
  }
  for (const auto& e : errors) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
}

}  // namespace h5tile
