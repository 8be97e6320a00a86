#include "layout/virtual/virtual_open.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/thread_pool.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"
#include "layout/data_files.hpp"
#include "layout/virtual/tile_index.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

namespace {

// The source file name of every mapping, from `entries` where read_virtual_map gave them.
std::vector<std::string> source_names(hid_t dcpl, const std::optional<std::vector<VirtualEntry>>& entries) {
  if (!entries) return virtual_file_names(dcpl);
  std::vector<std::string> names;
  names.reserve(entries->size());
  for (const auto& entry : *entries) names.push_back(entry.file);
  return names;
}

// The rule that keeps sources inside the folder of the file (unless allow_external), its folder
// checks made at first use and cached.
class Confinement {
 public:
  explicit Confinement(const OpenedDataset& opened) : opened_(opened) {}
  // `link`: whether lstat(2) found `source` to be a symbolic link.
  void check(const fs::path& source, const std::string& stored_name, bool link) {
    if (opened_.options.allow_external || stored_name == ".") return;
    if (!folder_check_) folder_check_ = std::make_unique<FolderCheck>(opened_.location.path());
    if (!folder_check_->inside(source, link)) {
      std::error_code ec;
      throw VirtualSourceError(
          fmt::format("{}: source '{}' (resolved to '{}') is outside the folder of the file; reading it needs "
                      "allow_external_sources (h5tile refuses it by default)",
                      where(opened_.location.path(), opened_.name), stored_name,
                      fs::weakly_canonical(fs::absolute(source), ec).string()));
    }
  }

 private:
  const OpenedDataset& opened_;
  std::unique_ptr<FolderCheck> folder_check_;
};

// Source dataset `dataset` of local file `file`, opened with HDF5 (its stored bytes read with
// pread where its layout allows) and added to the sources: its index.
std::size_t add_source(OpenedDataset& opened, const fs::path& file, const std::string& dataset) {
  auto source = std::make_unique<Source>();
  source->file = file;
  source->dataset = dataset;
  ThroughHdf5 hdf5{open_local_file(file), {}, copy_type(opened.memory_type.get())};
  hdf5.dataset = open_guarded(opened, hdf5.file.get(), normalize_dataset_name(dataset), file);
  // Rejects unsupported source types; the source converts to the virtual dataset's type.
  const auto described = describe_dataset(hdf5.dataset.get(), where(file, dataset));
  source->shape = described.shape;
  source->chunk = described.chunk;
  source->elem_size = opened.info.dtype.size();
  const auto source_dcpl = creation_plist(hdf5.dataset.get());
  check_data_files(opened.location.path(), file, dataset, hdf5.dataset.get(), source_dcpl.get(),
                   opened.options.extfile_prefix, opened.options.allow_external);
  note_kept_file(opened, file, hdf5.dataset.get(), source_dcpl.get());
  source->access =
      access_for(std::move(hdf5), source->chunk, opened.options.raw_io, opened.options.direct_reads, file, dataset);
  opened.sources.push_back(std::move(source));
  return opened.sources.size() - 1;
}

// Not box-to-box: HDF5 reads the whole dataset, but first the sources it names are checked
// (inside the folder, existing, regular files), since HDF5 silently returns fill values for
// missing ones ("%b" names expand per block and are not checked).
void open_through_hdf5(OpenedDataset& opened, Confinement& confinement, hid_t dcpl,
                       const std::vector<std::string>& names, const std::vector<ResolvedSource>& resolved) {
  opened.files_known = false;  // HDF5 opens the sources by name as it reads
  const auto here = where(opened.location.path(), opened.name);
  std::vector<bool> expands;
  (void)virtual_file_names(dcpl, &expands);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& file = resolved[i].file;
    confinement.check(file, names[i], resolved[i].link);
    if (!expands[i] && !fs::exists(file)) {
      throw VirtualSourceError(fmt::format("{}: source file '{}' does not exist", here, file.string()));
    }
    // HDF5 opens these itself, by path, as it reads.
    if (!expands[i]) check_regular_file(file, fmt::format("{} maps its source file", here));
  }
  auto self = std::make_unique<Source>();
  self->file = opened.location.path();
  self->dataset = opened.name;
  self->shape = opened.info.shape;
  self->elem_size = opened.info.dtype.size();
  self->access = ThroughHdf5{{},
                             open_guarded(opened, opened.file.get(), opened.name, opened.location.path()),
                             copy_type(opened.memory_type.get())};
  opened.sources.push_back(std::move(self));
  opened.mappings.push_back({0, Box::whole(opened.info.shape), Box::whole(opened.info.shape)});
}

// The mappings read box to box by h5tile. Tiles h5tile wrote are listed in the tile table with
// their raw offset, file size and identity: a tile whose file is still the one written (checked
// here and again at each read) is read with pread, without opening it with HDF5. Anything else
// (a missing, rewritten or foreign source, a table from before the identity) is opened with
// HDF5, which checks it.
void map_entries(OpenedDataset& opened, Confinement& confinement, const std::vector<VirtualEntry>& entries,
                 const std::vector<ResolvedSource>& resolved) {
  const auto& options = opened.options;
  const auto table = read_tile_table(opened.dataset.get(), opened.info.shape.size());
  const bool has_table = table.size() == entries.size();
  auto checksum_of = [&](std::size_t i) { return has_table ? table[i].checksum : std::nullopt; };
  for (std::size_t i = 0; i < entries.size(); ++i) {
    confinement.check(resolved[i].file, entries[i].file, resolved[i].link);
  }
  const auto es = opened.info.dtype.size();
  std::vector<char> by_table(entries.size(), 0);
  std::vector<std::shared_ptr<const PosixFile>> held(entries.size());  // the first hold_tiles tiles
  if (options.raw_io && has_table) {
    const auto workers = static_cast<unsigned>(std::min<std::size_t>(options.threads, 1 + entries.size() / 64));
    parallel_for(entries.size(), workers, [&](std::size_t i) {
      const auto& entry = entries[i];
      const auto& row = table[i];
      if (!row.identity || entry.src || !names_tile_dataset(entry.dataset) || entry.dst.count() == 0 ||
          !resolved[i].found || resolved[i].link || resolved[i].bytes != row.file_size) {
        return;
      }
      auto checked =
          hold_tile(resolved[i].file, {row.raw_offset, row.file_size, *row.identity, false, options.direct_reads},
                    entry.dst.count() * es);
      by_table[i] = checked != nullptr;
      if (i < options.hold_tiles) held[i] = std::move(checked);
    });
  }
  std::map<std::pair<std::string, std::string>, std::size_t> seen;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& entry = entries[i];
    const auto& file = resolved[i].file;
    if (by_table[i] != 0) {
      auto source = std::make_unique<Source>();
      source->file = file;
      source->dataset = entry.dataset;
      source->shape = entry.dst.extent;
      source->elem_size = es;
      source->access = TableTile{table[i].raw_offset,  table[i].file_size, *table[i].identity, false,
                                 options.direct_reads, std::move(held[i])};
      opened.sources.push_back(std::move(source));
      opened.mappings.push_back(
          {opened.sources.size() - 1, Box::whole(entry.dst.extent), entry.dst, checksum_of(i), table[i].raw_offset});
      continue;
    }
    auto key = std::make_pair(file.lexically_normal().string(), entry.dataset);
    std::size_t index = 0;
    try {
      if (auto it = seen.find(key); it != seen.end()) {
        index = it->second;
      } else {
        index = add_source(opened, file, entry.dataset);
        seen.emplace(std::move(key), index);
      }
      map_source(opened, index, entry.src, entry.dst, checksum_of(i), has_table ? table[i].raw_offset : 0);
    } catch (const std::exception& e) {
      throw VirtualSourceError(fmt::format("{}: source '{}' (dataset '{}', mapped to {}) is unusable: {}",
                                           where(opened.location.path(), opened.name), file.string(), entry.dataset,
                                           to_string(entry.dst), e.what()));
    }
  }
  finish_mappings(opened);
}

}  // namespace

void open_virtual(OpenedDataset& opened, hid_t dcpl) {
  const auto entries = read_virtual_map(dcpl);
  const auto names = source_names(dcpl, entries);
  opened.info.virtual_sources = names.size();
  const auto resolved =
      resolve_sources(opened.location.path(), names, opened.options.threads, opened.options.vds_prefix);
  opened.info.stored_bytes = stored_bytes_of(resolved);
  Confinement confinement(opened);
  if (!entries) {
    open_through_hdf5(opened, confinement, dcpl, names, resolved);
    return;
  }
  try {
    map_entries(opened, confinement, *entries, resolved);
  } catch (const ReshapedMapping&) {
    // A mapping between boxes of one count in two shapes: HDF5 reads the dataset (the sources
    // were checked as the mappings were made, up to this one; the rest are checked there).
    opened.sources.clear();
    opened.mappings.clear();
    open_through_hdf5(opened, confinement, dcpl, names, resolved);
  }
}

void describe_virtual(OpenedDataset& opened, hid_t dcpl) {
  const auto names = source_names(dcpl, read_virtual_map(dcpl));
  opened.info.virtual_sources = names.size();
  if (opened.location.remote()) return;  // its objects' sizes would cost a request each
  opened.info.stored_bytes = stored_bytes_of(
      resolve_sources(opened.location.path(), names, opened.options.threads, opened.options.vds_prefix));
}

void map_source(OpenedDataset& opened, std::size_t index, const std::optional<Box>& src_given, const Box& dst,
                std::optional<std::uint64_t> checksum, std::uint64_t raw_offset) {
  const auto& source = *opened.sources[index];
  const Box src = src_given.value_or(Box::whole(source.shape));
  if (src.fits(source.shape) && src.extent != dst.extent && same_but_unit_axes(src.extent, dst.extent)) {
    throw ReshapedMapping{};  // h5py's 1-D sources stacked into a 2-D dataset: HDF5 reads it (open_virtual)
  }
  if (!src.fits(source.shape) || src.extent != dst.extent) {
    throw VirtualSourceError(fmt::format("it has shape {} but the mapping reads {} of it into {}",
                                         to_string(source.shape), to_string(src), to_string(dst)));
  }
  if (dst.count() > 0) opened.mappings.push_back({index, src, dst, checksum, raw_offset});
}

}  // namespace h5tile::detail
