#include "layout/chunked/chunked_writer.hpp"

#include <utility>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "layout/boxes.hpp"
#include "layout/file_writer.hpp"
#include "layout/tile_bytes.hpp"

namespace h5tile::detail {
namespace {

class ChunkedWriter final : public LayoutWriter {
 public:
  ChunkedWriter(const WritePlan& plan, const WriteConfig& config) : plan_(plan), config_(config) {}

  // Ranks in several processes writing one object: where the chunks' block starts (the ranks
  // cannot read the file rank 0 builds in memory).
  std::string create(const WriteCommit& commit) override {
    // In HDF5 1.10's formats an unfiltered dataset allocated when made keeps its chunks in one
    // block in row-major order (the implicit chunk index): the ranks find theirs with no lookup
    // (chunk_addresses), where HDF5 without H5Dchunk_iter (before 1.10.10) walks the whole index for each chunk.
    auto file = commit.start_main_file(H5F_LIBVER_V110, true);
    (void)create_chunked_dataset(file.get(), plan_.dataset, plan_.dtype, plan_.shape, plan_.chunk, true);
    file.close();
    if (!config_.processes) return {};
    const auto whole = chunks_touching(Box::whole(plan_.shape), plan_.chunk);
    const auto ends = chunk_addresses(commit.open_main_read_only().get(), commit.shown(), plan_.dataset,
                                      {whole.front().offset, whole.back().offset});
    if (ends[1] - ends[0] != (whole.size() - 1) * chunk_bytes()) {
      throw Hdf5Error(
          fmt::format("{}: HDF5 did not store the chunks in one block in order", where(plan_.target, plan_.dataset)));
    }
    return std::to_string(ends[0]);
  }

  std::vector<WrittenTile> write(Communicator& comm, const WriteCommit& commit, const std::string& created,
                                 std::span<const Tile> tiles, std::size_t /*first*/, Progress& progress) override {
    if (config_.processes) {  // every rank's chunks, each its own parts of the object
      block_ = std::stoull(created);
      std::vector<RankBytes> ranges;
      for (std::size_t r = 0; r < plan_.first.size(); ++r) {
        const auto end = r + 1 < plan_.first.size() ? plan_.first[r + 1] : plan_.boxes.size();
        for (auto t = plan_.first[r]; t < end; ++t) {
          if (plan_.boxes[t].count() == 0) continue;
          for (const auto& c : chunks_touching(plan_.boxes[t], plan_.chunk)) {
            ranges.push_back({address_of(c.offset), address_of(c.offset) + chunk_bytes(), static_cast<int>(r)});
          }
        }
      }
      commit.divide(ranges, comm.rank());
    }
    write_tiles_into(commit, tiles, config_.sync,
                     [&](const ByteSink& out, const Tile& tile) { write_tile(out, commit, tile, progress); });
    return std::vector<WrittenTile>(tiles.size());
  }

  void finish(const WriteCommit& /*commit*/, const std::vector<WrittenTile>& /*written*/) override {}

 private:
  // One task per chunk part; a part larger than the task size is split further by
  // write_tile_bytes (host) or staged piece by piece (device).
  void write_tile(const ByteSink& out, const WriteCommit& commit, const Tile& tile, Progress& progress) const {
    const auto chunks = chunks_touching(tile.box, plan_.chunk);
    std::vector<Shape> origins;
    origins.reserve(chunks.size());
    for (const auto& c : chunks) origins.push_back(c.offset);
    std::vector<std::uint64_t> addresses;
    if (config_.processes) {
      for (const auto& origin : origins) addresses.push_back(address_of(origin));
    } else {
      addresses = chunk_addresses(commit.open_main_read_only().get(), commit.shown(), plan_.dataset, origins);
    }
    const auto es = plan_.dtype.size();
    const auto part_of = [&](std::size_t i) {
      auto part = *intersect(tile.box, chunks[i]);
      Box in_chunk = part;
      for (std::size_t a = 0; a < part.rank(); ++a) in_chunk.offset[a] -= chunks[i].offset[a];
      return std::pair{part, in_chunk};
    };
    if (gpu::device_of(tile.data) >= 0 || chunks.size() == 1) {
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        const auto [part, in_chunk] = part_of(i);
        const RawDataset chunk{.base = addresses[i], .shape = plan_.chunk, .elem_size = es, .sink = &out};
        write_tile_bytes(chunk, in_chunk, sub_view(tile.data, tile.box, part), progress, config_,
                         writeback_of(chunk, config_));
      }
      return;
    }
    const auto memory = memory_of(tile.data);
    parallel_for(chunks.size(), config_.threads, [&](std::size_t i) {
      const auto [part, in_chunk] = part_of(i);
      const RawDataset chunk{.base = addresses[i], .shape = plan_.chunk, .elem_size = es, .sink = &out};
      write_raw(chunk, in_chunk, sub_memory(memory, tile.box, part));
      if (config_.sync) {
        start_writeback(chunk, in_chunk);
      }
      progress.add(part.count() * es);
    });
  }

  [[nodiscard]] std::uint64_t chunk_bytes() const { return element_count(plan_.chunk) * plan_.dtype.size(); }
  // The chunk at `origin` in the block of chunks at block_ (row-major: the implicit index).
  [[nodiscard]] std::uint64_t address_of(const Shape& origin) const {
    std::uint64_t linear = 0;
    for (std::size_t a = 0; a < origin.size(); ++a) {
      linear = linear * ((plan_.shape[a] + plan_.chunk[a] - 1) / plan_.chunk[a]) + origin[a] / plan_.chunk[a];
    }
    return block_ + linear * chunk_bytes();
  }

  const WritePlan& plan_;
  WriteConfig config_;
  std::uint64_t block_ = 0;  // several processes: where the chunks' block starts
};

}  // namespace

std::unique_ptr<LayoutWriter> make_chunked_writer(const WritePlan& plan, const WriteConfig& config) {
  return std::make_unique<ChunkedWriter>(plan, config);
}

}  // namespace h5tile::detail
