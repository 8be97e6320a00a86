// The choice of layout writer, and the one for datasets with nothing to tile.
#include "layout/layout_writer.hpp"

#include "layout/chunked/chunked_writer.hpp"
#include "layout/chunked/filtered_writer.hpp"
#include "layout/contiguous/contiguous_writer.hpp"
#include "layout/file_writer.hpp"
#include "layout/virtual/virtual_writer.hpp"

namespace h5tile::detail {
namespace {

// A 0-d or empty dataset (untiled): stored in the new main file by rank 0 (a 0-d element
// travels with the plan), whatever the layout.
class UntiledWriter final : public LayoutWriter {
 public:
  explicit UntiledWriter(const WritePlan& plan) : plan_(plan) {}
  std::string create(const WriteCommit& /*commit*/) override { return {}; }
  std::vector<WrittenTile> write(Communicator& /*comm*/, const WriteCommit& /*commit*/, const std::string& /*created*/,
                                 std::span<const Tile> tiles, std::size_t /*first*/, Progress& /*progress*/) override {
    return std::vector<WrittenTile>(tiles.size());
  }
  void finish(const WriteCommit& commit, const std::vector<WrittenTile>& /*written*/) override {
    auto file = commit.start_main_file();
    create_dataset_with(file.get(), plan_.dataset, plan_.dtype, plan_.shape, plan_.scalar.data());
    file.close();
  }

 private:
  const WritePlan& plan_;
};

}  // namespace

bool writes_tile_files(const WritePlan& plan, Layout layout) { return layout == Layout::Virtual && !plan.untiled(); }

std::unique_ptr<LayoutWriter> make_layout_writer(const WritePlan& plan, const WriteConfig& config) {
  if (plan.untiled()) {
    return std::make_unique<UntiledWriter>(plan);
  }
  switch (config.layout) {
    case Layout::Contiguous: return make_contiguous_writer(plan, config);
    case Layout::Chunked:
      return plan.filters.empty() ? make_chunked_writer(plan, config) : make_filtered_chunked_writer(plan, config);
    case Layout::Auto:  // resolved before a plan is made (api/write_checks: resolved_layout)
    case Layout::Virtual: break;
  }
  return make_virtual_writer(plan, config);
}

}  // namespace h5tile::detail
