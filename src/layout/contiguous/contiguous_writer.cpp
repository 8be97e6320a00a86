#include "layout/contiguous/contiguous_writer.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/url.hpp"
#include "layout/file_writer.hpp"
#include "layout/tile_bytes.hpp"

namespace h5tile::detail {
namespace {

// The most runs of bytes the ranks' tiles may make when several processes write one object
// (ranks that write columns of a large array make one run per row).
constexpr std::uint64_t kMaxRuns = std::uint64_t{1} << 20;

// The bytes each rank's tiles cover in the dataset stored at `base` (row-major), as runs.
std::vector<RankBytes> rank_bytes(const WritePlan& plan, std::uint64_t base) {
  const auto es = plan.dtype.size();
  const auto n = plan.shape.size();
  std::vector<RankBytes> runs;
  for (std::size_t r = 0; r < plan.first.size(); ++r) {
    const auto end = r + 1 < plan.first.size() ? plan.first[r + 1] : plan.boxes.size();
    for (auto t = plan.first[r]; t < end; ++t) {
      const auto& box = plan.boxes[t];
      if (box.count() == 0) continue;
      // Axes k.. are one run: every axis past k whole. Its length, and how many there are.
      std::size_t k = n - 1;
      while (k > 0 && box.extent[k] == plan.shape[k]) --k;
      std::uint64_t run = es * box.extent[k];
      for (auto a = k + 1; a < n; ++a) run *= plan.shape[a];
      std::uint64_t count = 1;
      for (std::size_t a = 0; a < k; ++a) count *= box.extent[a];
      if (runs.size() + count > kMaxRuns) {
        throw InvalidArgument(fmt::format(
            "cannot write '{}' to '{}' from several processes: rank {}'s tile {} lies in {} runs of {} bytes; "
            "ranks in several processes each send their own parts of the object: give each rank tiles of whole "
            "rows (split along the first axis), or write layout 'virtual'",
            plan.dataset, redacted(plan.target.native()), r, to_string(box), count, run));
      }
      Shape at = box.offset;  // the first element of each run
      for (std::uint64_t i = 0; i < count; ++i) {
        std::uint64_t linear = 0;
        for (std::size_t a = 0; a < n; ++a) linear = linear * plan.shape[a] + at[a];
        runs.push_back({base + linear * es, base + linear * es + run, static_cast<int>(r)});
        for (std::size_t a = k; a-- > 0;) {  // the next run: the axes before k, last fastest
          if (++at[a] < box.offset[a] + box.extent[a]) break;
          at[a] = box.offset[a];
        }
      }
    }
  }
  return runs;
}

class ContiguousWriter final : public LayoutWriter {
 public:
  ContiguousWriter(const WritePlan& plan, const WriteConfig& config) : plan_(plan), config_(config) {}

  // The dataset's raw offset in the new main file, for the ranks' pwrites.
  std::string create(const WriteCommit& commit) override {
    auto file = commit.start_main_file(H5F_LIBVER_V18, true);
    const auto offset = create_raw_dataset(file.get(), plan_.dataset, plan_.dtype, plan_.shape);
    file.close();
    return std::to_string(offset);
  }

  std::vector<WrittenTile> write(Communicator& comm, const WriteCommit& commit, const std::string& created,
                                 std::span<const Tile> tiles, std::size_t /*first*/, Progress& progress) override {
    const auto offset = std::stoull(created);
    if (config_.processes) commit.divide(rank_bytes(plan_, offset), comm.rank());
    write_tiles_into(commit, tiles, config_.sync, [&](const ByteSink& out, const Tile& tile) {
      const RawDataset raw{.base = offset, .shape = plan_.shape, .elem_size = plan_.dtype.size(), .sink = &out};
      write_tile_bytes(raw, tile.box, tile.data, progress, config_, writeback_of(raw, config_));
    });
    return std::vector<WrittenTile>(tiles.size());
  }

  void finish(const WriteCommit& /*commit*/, const std::vector<WrittenTile>& /*written*/) override {}

 private:
  const WritePlan& plan_;
  WriteConfig config_;
};

}  // namespace

std::unique_ptr<LayoutWriter> make_contiguous_writer(const WritePlan& plan, const WriteConfig& config) {
  return std::make_unique<ContiguousWriter>(plan, config);
}

}  // namespace h5tile::detail
