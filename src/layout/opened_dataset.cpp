#include "layout/opened_dataset.hpp"

#include <algorithm>

#include "engine/thread_pool.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/links.hpp"
#include "layout/boxes.hpp"
#include "layout/data_files.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

OpenedDataset::~OpenedDataset() {
  // Thousands of sources (a virtual dataset's tiles) take milliseconds to free on one thread.
  if (sources.size() >= 1024) {
    const auto workers = static_cast<unsigned>(std::min<std::size_t>(options.threads, sources.size() / 512));
    parallel_ranges(sources.size(), workers, [&](std::size_t begin, std::size_t end) {
      for (auto i = begin; i < end; ++i) sources[i].reset();
    });
  }
}

DatasetHandle open_guarded(const OpenedDataset& opened, hid_t file, const std::string& name,
                           const fs::path& where_from) {
  const GuardedLinks links(
      external_link_check(opened.location, opened.options.allow_external, opened.options.ext_prefix));
  return open_dataset(file, name, where_from, links);
}

void note_kept_file(OpenedDataset& opened, const fs::path& file, hid_t dataset, hid_t dcpl) {
  if (file_name_of(dataset) != file.native() || !external_storage_names(dcpl).empty()) {
    opened.files_known = false;  // another file, or raw data files beside it, that a stat of `file` does not cover
    return;
  }
  opened.kept_files.push_back(file);
}

void finish_mappings(OpenedDataset& opened) {
  std::vector<Box> boxes;
  boxes.reserve(opened.mappings.size());
  for (const auto& m : opened.mappings) boxes.push_back(m.dst);
  opened.later_overlaps = later_overlaps(boxes);
  opened.overlapping =
      std::any_of(opened.later_overlaps.begin(), opened.later_overlaps.end(), [](const auto& l) { return !l.empty(); });
}

}  // namespace h5tile::detail
