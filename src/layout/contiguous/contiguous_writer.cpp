#include "layout/contiguous/contiguous_writer.hpp"

#include "layout/file_writer.hpp"
#include "layout/tile_bytes.hpp"

namespace h5tile::detail {
namespace {

class ContiguousWriter final : public LayoutWriter {
 public:
  ContiguousWriter(const WritePlan& plan, const WriteConfig& config) : plan_(plan), config_(config) {}

  // The dataset's raw offset in the new main file, for the ranks' pwrites.
  std::string create(const WriteCommit& commit) override {
    auto file = commit.start_main_file();
    const auto offset = create_raw_dataset(file.get(), plan_.dataset, plan_.dtype, plan_.shape);
    file.close();
    return std::to_string(offset);
  }

  std::vector<WrittenTile> write(Communicator& /*comm*/, const WriteCommit& commit, const std::string& created,
                                 std::span<const Tile> tiles, std::size_t /*first*/, Progress& progress) override {
    const auto offset = std::stoull(created);
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
