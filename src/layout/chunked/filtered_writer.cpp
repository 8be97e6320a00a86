#include "layout/chunked/filtered_writer.hpp"

#include <fcntl.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "comm/collective.hpp"
#include "engine/task.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "hdf5/upload_driver.hpp"
#include "io/posix/posix_file.hpp"
#include "layout/boxes.hpp"
#include "layout/chunk_encoding.hpp"
#include "layout/file_writer.hpp"
#include "layout/tile_bytes.hpp"

namespace h5tile::detail {
namespace {

// Raw bytes of the chunks one rank compresses in one round, in task sizes (256 MiB for the
// default 8 MiB): their compressed copies stay in memory until they are written.
constexpr std::uint64_t kRoundTasks = 32;
// Ranks in several processes writing one object: the chunks of a round that all of them exchange
// (rank 0 writes them; MPI's gathers take less than 2 GiB).
constexpr std::uint64_t kGatheredRoundBytes = std::uint64_t{1} << 30;
// A rank that writes alone starts the writeback of its chunks every this many task sizes of them.
constexpr std::uint64_t kWritebackTasks = 4;

// A chunk that a rank writes: the tile it lies in (its index among the rank's tiles) and its box
// (the whole chunk, which reaches past the dataset's edge there).
struct OwnedChunk {
  std::size_t tile = 0;
  Box box;
};

// The chunks of tiles `boxes[begin, end)`, tile by tile, each in row-major order.
std::vector<OwnedChunk> chunks_of(const std::vector<Box>& boxes, std::size_t begin, std::size_t end,
                                  const Shape& chunk) {
  std::vector<OwnedChunk> out;
  for (std::size_t t = begin; t < end; ++t) {
    if (boxes[t].count() == 0) continue;
    for (auto& c : chunks_touching(boxes[t], chunk)) out.push_back({t - begin, std::move(c)});
  }
  return out;
}

// Compressed chunks on their way from the workers that encode them to the one thread that writes
// them, in chunk order; a worker whose chunk is `window` or more ahead of the next one to write
// waits, so that at most `window` encoded chunks wait in memory.
class ChunkQueue {
 public:
  explicit ChunkQueue(std::size_t window) : slots_(window), ready_(window, 0) {}

  // A worker: hands chunk `i` over, swapping `bytes` with the buffer of a chunk already written
  // (its memory reused for the worker's next chunk). Returns false, handing nothing over, once
  // the write has failed.
  bool put(std::size_t i, ByteBuffer& bytes) {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [&] { return failed_ || i < next_ + slots_.size(); });
    if (failed_) return false;
    slots_[i % slots_.size()].swap(bytes);
    ready_[i % slots_.size()] = 1;
    lock.unlock();
    filled_.notify_one();
    return true;
  }
  // The writer: waits for the next chunk and returns its bytes, which stay the writer's until
  // pop(); nullptr once the write has failed.
  const ByteBuffer* front() {
    std::unique_lock lock(mutex_);
    filled_.wait(lock, [&] { return failed_ || ready_[next_ % slots_.size()] != 0; });
    return failed_ ? nullptr : &slots_[next_ % slots_.size()];
  }
  // The writer: the chunk front() returned is written.
  void pop() {
    {
      const std::lock_guard lock(mutex_);
      ready_[next_ % slots_.size()] = 0;
      ++next_;
    }
    space_.notify_all();
  }
  // Either side: the write has failed; the other side stops waiting.
  void fail() {
    {
      const std::lock_guard lock(mutex_);
      failed_ = true;
    }
    space_.notify_all();
    filled_.notify_all();
  }
  [[nodiscard]] bool failed() {
    const std::lock_guard lock(mutex_);
    return failed_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable space_;   // a slot freed
  std::condition_variable filled_;  // a chunk handed over
  std::vector<ByteBuffer> slots_;   // chunk i in slot i % window
  std::vector<char> ready_;
  std::size_t next_ = 0;  // the next chunk to write
  bool failed_ = false;
};

class FilteredChunkedWriter final : public LayoutWriter {
 public:
  FilteredChunkedWriter(const WritePlan& plan, const WriteConfig& config)
      : plan_(plan), config_(config), pipeline_(write_pipeline(plan.filters, plan.dtype.size())) {}

  std::string create(const WriteCommit& commit) override {
    auto file = commit.start_main_file();
    (void)create_chunked_dataset(file.get(), plan_.dataset, plan_.dtype, plan_.shape, plan_.chunk, false,
                                 plan_.filters);
    file.close();
    return {};
  }

  std::vector<WrittenTile> write(Communicator& comm, const WriteCommit& commit, const std::string& /*created*/,
                                 std::span<const Tile> tiles, std::size_t /*first*/, Progress& progress) override {
    const auto ranks = static_cast<std::size_t>(comm.size());
    const auto rank = static_cast<std::size_t>(comm.rank());
    if (ranks == 1) {
      write_alone(commit, tiles, progress);
      return std::vector<WrittenTile>(tiles.size());
    }
    // Every rank's chunks, from the plan (so the same on every rank), and the rounds they take.
    std::vector<std::vector<OwnedChunk>> all(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
      const auto end = r + 1 < ranks ? plan_.first[r + 1] : plan_.boxes.size();
      all[r] = chunks_of(plan_.boxes, plan_.first[r], end, plan_.chunk);
    }
    const auto chunk_bytes = element_count(plan_.chunk) * plan_.dtype.size();
    std::size_t per_round = std::max<std::uint64_t>(1, kRoundTasks * config_.task_size / chunk_bytes);
    // Ranks in several processes writing one object: every rank's chunks of a round travel to
    // every rank (1 GiB of them at most), and rank 0 writes a round while the ranks encode the
    // next, so the rounds are a quarter of a rank's chunks or smaller.
    const bool sent_to_root = config_.processes;
    if (sent_to_root) {
      std::size_t most = 0;
      for (const auto& chunks : all) most = std::max(most, chunks.size());
      per_round = std::min<std::size_t>(
          {per_round, std::max<std::uint64_t>(1, kGatheredRoundBytes / ranks / chunk_bytes), (most + 3) / 4});
      per_round = std::max<std::size_t>(1, per_round);
    }
    std::size_t rounds = 0;
    for (const auto& chunks : all) rounds = std::max(rounds, (chunks.size() + per_round - 1) / per_round);
    const auto round_of = [&](std::size_t r, std::size_t k) {
      const auto lo = std::min(all[r].size(), k * per_round);
      return std::pair{lo, std::min(all[r].size(), lo + per_round)};
    };

    std::shared_ptr<const ByteSink> out;
    std::optional<Task<std::string>> writing;  // rank 0, ranks in several processes: the last round's write
    for (std::size_t k = 0; k < rounds; ++k) {
      const auto [lo, hi] = round_of(rank, k);
      // 1. This rank's chunks of the round, compressed; every rank learns every size (and, where
      // the ranks are in several processes writing one object, which only rank 0's process can
      // write into, rank 0 gets the chunks). (A copy of `lo` for the lambda: clang before 16
      // cannot capture a structured binding.)
      auto encoded = std::make_shared<std::vector<ByteBuffer>>(hi - lo);
      const std::size_t first = lo;
      agree(comm, [&] {
        encode(tiles, all[rank], first, *encoded, progress);
        if (writing) writing->get();  // rank 0: the previous round written (its failure agreed on here)
        writing.reset();
      });
      Packer sizes;
      sizes.u64(encoded->size());
      for (const auto& e : *encoded) {
        if (sent_to_root) {
          sizes.str(std::string_view(reinterpret_cast<const char*>(e.data()), e.size()));
        } else {
          sizes.u64(e.size());
        }
      }
      auto sizes_of = std::make_shared<std::vector<std::vector<std::uint64_t>>>(ranks);
      auto chunks_of_rank = std::make_shared<std::vector<std::vector<std::string>>>(ranks);
      // (Ranks in several processes: the chunks go to rank 0 alone, which writes them.)
      const auto gathered = sent_to_root ? comm.gather(sizes.bytes(), 0) : comm.all_gather(sizes.bytes());
      for (std::size_t r = 0; r < gathered.size(); ++r) {
        Unpacker in(gathered[r]);
        for (auto count = in.u64(); count > 0; --count) {
          if (sent_to_root) {
            (*chunks_of_rank)[r].push_back(in.str());
            (*sizes_of)[r].push_back((*chunks_of_rank)[r].back().size());
          } else {
            (*sizes_of)[r].push_back(in.u64());
          }
        }
      }
      if (sent_to_root) {
        // 2'. Rank 0 writes every rank's chunks of the round through HDF5, in the background while
        // the ranks encode the next round; the others are done with it.
        if (rank == 0) {
          writing.emplace(start_task([this, &commit, &all, round_of, k, sizes_of, encoded, chunks_of_rank] {
            return allocate(commit, all, round_of, k, *sizes_of, *encoded, *chunks_of_rank);
          }));
        }
        continue;
      }
      // 2. Rank 0 has HDF5 allocate every chunk of the round; 3. the others write theirs there.
      const auto placed =
          on_root(comm, 0, [&] { return allocate(commit, all, round_of, k, *sizes_of, *encoded, *chunks_of_rank); });
      agree(comm, [&] {
        if (rank == 0 || encoded->empty()) return;
        std::size_t before = 0;  // chunks of lower ranks in this round
        for (std::size_t r = 0; r < rank; ++r) before += (*sizes_of)[r].size();
        Unpacker in(placed);
        std::vector<std::uint64_t> addresses(before + encoded->size());
        for (auto& a : addresses) a = in.u64();
        if (!out) out = commit.open_sink();
        parallel_for(encoded->size(), config_.threads, [&](std::size_t j) {
          out->write_at((*encoded)[j].data(), (*encoded)[j].size(), addresses[before + j]);
        });
      });
    }
    // Rank 0's chunks went through HDF5 into the main file, which the commit flushes (the last
    // round's written first); each other rank flushes its own bytes (with MPI, another node's page
    // cache is not rank 0's to flush).
    agree(comm, [&] {
      if (writing) writing->get();
      if (out && config_.sync) out->sync();
    });
    return std::vector<WrittenTile>(tiles.size());
  }

  void finish(const WriteCommit& /*commit*/, const std::vector<WrittenTile>& /*written*/) override {}

 private:
  // The one rank of the write: its workers compress the chunks while one thread writes them, in
  // order, through HDF5 into the main file, which it keeps open; the commit flushes it.
  void write_alone(const WriteCommit& commit, std::span<const Tile> tiles, Progress& progress) const {
    check_host(tiles);
    const auto chunks = chunks_of(plan_.boxes, 0, plan_.boxes.size(), plan_.chunk);
    const auto es = plan_.dtype.size();
    auto file = commit.reopen_main();
    {
      const auto dataset = open_dataset_at(file.get(), plan_.dataset);
      ChunkQueue queue(2 * std::max(1U, config_.threads));
      // With `sync`, the writeback of what HDF5 wrote (at the end of the file) is started every
      // few task sizes, so that the disk works while the rest is compressed and the commit's
      // fdatasync has little left.
      std::optional<PosixFile> flusher;
      if (config_.sync && !commit.uploads()) flusher.emplace(commit.temp(), O_WRONLY);
      auto writer = start_task([&] {
        try {
          std::uint64_t unflushed = 0;
          std::uint64_t flushed_to = 0;
          for (const auto& chunk : chunks) {
            const auto* bytes = queue.front();
            if (bytes == nullptr) return;  // the encoding failed: its error is thrown
            write_chunk(dataset.get(), chunk.box.offset, bytes->data(), bytes->size());
            unflushed += bytes->size();
            queue.pop();
            if (flusher && unflushed >= kWritebackTasks * config_.task_size) {
              const auto end = static_cast<std::uint64_t>(std::filesystem::file_size(commit.temp()));
              flusher->start_writeback(flushed_to, end - std::min(end, flushed_to));
              flushed_to = end;
              unflushed = 0;
            }
            progress.add(intersect(tiles[chunk.tile].box, chunk.box)->count() * es);
          }
        } catch (...) {
          queue.fail();
          throw;
        }
      });
      try {
        parallel_for(chunks.size(), config_.threads, [&](std::size_t i) {
          if (queue.failed()) return;  // the writer failed: its error is thrown
          const auto& tile = tiles[chunks[i].tile];
          thread_local ByteBuffer encoded;
          thread_local ByteBuffer scratch;
          encode_chunk(pipeline_, memory_of(tile.data), tile.box, chunks[i].box, es, encoded, scratch);
          (void)queue.put(i, encoded);
        });
      } catch (...) {
        queue.fail();
        writer.wait();
        throw;
      }
      writer.get();
    }
    file.close();
  }

  void check_host(std::span<const Tile> tiles) const {
    for (const auto& tile : tiles) {
      if (gpu::device_of(tile.data) >= 0) {
        throw InvalidArgument(fmt::format("{}: compressed writes take arrays in host memory, not device memory",
                                          where(plan_.target, plan_.dataset)));
      }
    }
  }

  // Compresses chunks [lo, lo + encoded.size()) of `mine` (this rank's) on the rank's workers.
  void encode(std::span<const Tile> tiles, const std::vector<OwnedChunk>& mine, std::size_t lo,
              std::vector<ByteBuffer>& encoded, Progress& progress) const {
    check_host(tiles);
    const auto es = plan_.dtype.size();
    parallel_for(encoded.size(), config_.threads, [&](std::size_t j) {
      const auto& chunk = mine[lo + j];
      const auto& tile = tiles[chunk.tile];
      thread_local ByteBuffer data;
      thread_local ByteBuffer scratch;
      encode_chunk(pipeline_, memory_of(tile.data), tile.box, chunk.box, es, data, scratch);
      // Kept at its compressed size (the worker's buffers keep a whole chunk's capacity).
      encoded[j].resize(data.size());
      std::memcpy(encoded[j].data(), data.data(), data.size());
      progress.add(intersect(tile.box, chunk.box)->count() * es);
    });
  }

  // Rank 0: writes round `k` of every rank's chunks into the main file through HDF5 (its own
  // compressed, the others' as `sent` holds them, or else as zeros of their sizes, for their ranks
  // to write); returns where HDF5 put each, in rank order.
  template <typename RoundOf>
  std::string allocate(const WriteCommit& commit, const std::vector<std::vector<OwnedChunk>>& all,
                       const RoundOf& round_of, std::size_t k, const std::vector<std::vector<std::uint64_t>>& sizes_of,
                       const std::vector<ByteBuffer>& own, const std::vector<std::vector<std::string>>& sent) const {
    std::vector<Shape> origins;
    std::vector<std::uint64_t> sizes;
    std::vector<std::optional<StoredChunk>> stored;
    auto file = commit.reopen_main();
    {
      const auto dataset = open_dataset_at(file.get(), plan_.dataset);
      std::vector<std::byte> zeros;
      for (std::size_t r = 0; r < all.size(); ++r) {
        const auto lo = round_of(r, k).first;
        for (std::size_t j = 0; j < sizes_of[r].size(); ++j) {
          const auto size = sizes_of[r][j];
          const auto& origin = all[r][lo + j].box.offset;
          if (r == 0) {
            write_chunk(dataset.get(), origin, own[j].data(), own[j].size());
          } else if (!sent[r].empty()) {
            write_chunk(dataset.get(), origin, sent[r][j].data(), size);
          } else {
            if (zeros.size() < size) zeros.resize(size);
            const SkippedRawWrites placeholder;  // rank r writes the chunk's bytes there itself
            write_chunk(dataset.get(), origin, zeros.data(), size);
          }
          origins.push_back(origin);
          sizes.push_back(size);
        }
      }
    }
    file.close();
    // Closed: its index is all in the file.
    stored = stored_chunks_in(commit.open_main_read_only().get(), commit.shown(), plan_.dataset, origins);
    Packer addresses;
    for (std::size_t i = 0; i < origins.size(); ++i) {
      if (!stored[i] || stored[i]->size != sizes[i]) {
        throw Hdf5Error(fmt::format("{}: HDF5 did not store the chunk at {} as the {} bytes written",
                                    where(plan_.target, plan_.dataset), to_string(origins[i]), sizes[i]));
      }
      addresses.u64(stored[i]->offset);
    }
    return addresses.bytes();
  }

  const WritePlan& plan_;
  WriteConfig config_;
  FilterPipeline pipeline_;
};

}  // namespace

std::unique_ptr<LayoutWriter> make_filtered_chunked_writer(const WritePlan& plan, const WriteConfig& config) {
  return std::make_unique<FilteredChunkedWriter>(plan, config);
}

}  // namespace h5tile::detail
