// list_datasets and verify: what is in a file, and whether a dataset is whole.
#include <algorithm>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>

#include <fcntl.h>

#include "api/pending_writes.hpp"
#include "api/probe.hpp"
#include "api/resolve.hpp"
#include "api/write_checks.hpp"
#include "engine/checksum.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"
#include "hdf5/virtual.hpp"
#include "io/posix/posix_file.hpp"
#include "layout/file_writer.hpp"
#include "layout/open_dataset.hpp"
#include "layout/virtual/tile_index.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

std::vector<std::string> list_datasets(const fs::path& path) {
  pending_writes().wait_for(path);
  probe_if_wanted(std::nullopt, fmt::format("'{}'", path.string()),
                  [&] { (void)dataset_paths(open_file(path, false, remote_options()).get()); });
  const auto file = open_file(path, false, remote_options());
  auto names = dataset_paths(file.get());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<VirtualSource> list_virtual_sources(const fs::path& path, const std::string& dataset) {
  pending_writes().wait_for(path);
  const auto name = normalize_dataset_name(dataset);
  probe_if_wanted(std::nullopt, where(path, name), [&] { (void)OpenDataset(path, name, describe_options()); });
  const auto file = open_file(path, false, remote_options());
  const auto ds = open_dataset(file.get(), name, path);
  std::optional<std::vector<VirtualEntry>> entries;
  std::vector<std::string> files;
  std::vector<bool> expands;
  {
    const Hdf5Lock lock;
    const auto dcpl = creation_plist(ds.get());
    if (!is_virtual(dcpl.get())) {
      return {};
    }
    entries = read_virtual_map(dcpl.get());
    if (!entries) {
      files = virtual_file_names(dcpl.get(), &expands);
    }
  }
  std::vector<VirtualSource> out;
  std::error_code ec;
  const auto prefix = vds_prefix();
  if (entries) {
    for (auto& e : *entries) {
      const bool found = fs::exists(resolve_source(path, e.file, prefix), ec);
      out.push_back({e.dst, std::move(e.file), std::move(e.dataset), std::move(e.src), found});
    }
  } else {
    for (std::size_t i = 0; i < files.size(); ++i) {
      const bool found = expands[i] || fs::exists(resolve_source(path, files[i], prefix), ec);
      out.push_back({std::nullopt, std::move(files[i]), "", std::nullopt, found});
    }
  }
  return out;
}

namespace {

// What the tile table says of tile `source` (HDF5's `dataset`, of `bytes`) against what
// is there: the raw offset (where reads by the table read), the file's size and identity (what
// shows that it is the file written) and, with `checksums`, the checksum of its bytes.
void check_tile_row(const TileRow& row, const fs::path& source, hid_t dataset, std::uint64_t bytes, bool checksums,
                    const std::string& label, std::vector<std::string>& problems) {
  const auto stored_at = contiguous_offset(dataset);
  if (stored_at != row.raw_offset) {
    problems.push_back(fmt::format(
        "{}: the tile table gives raw offset {} but HDF5 stores the tile's bytes {} (the table was changed by "
        "another program; reads do not believe it)",
        label, row.raw_offset, stored_at ? fmt::format("at {}", *stored_at) : std::string("elsewhere")));
    return;
  }
  const PosixFile tile(source, O_RDONLY | O_NONBLOCK, direct_reads());
  const auto size = static_cast<std::uint64_t>(fs::file_size(source));
  if (row.identity && (size != row.file_size || tile_identity(tile, row.raw_offset, bytes, size) != row.identity)) {
    problems.push_back(fmt::format(
        "{}: the tile file is not the file that was written (its size or metadata differ from the tile table; "
        "reads open it with HDF5)",
        label));
  }
  if (checksums && row.checksum && checksum_region(tile, row.raw_offset, bytes) != *row.checksum) {
    problems.push_back(fmt::format("{}: checksum mismatch: the tile's bytes changed since they were written", label));
  }
}

// Checks every mapping of a virtual dataset against its source; one line per problem. With
// `checksums`, also recomputes each tile's checksum recorded in the tile table.
void check_virtual_sources(const fs::path& path, const std::string& name, const DatasetInfo& info, bool checksums,
                           std::vector<std::string>& problems) {
  const auto file = open_file(path, false, remote_options());
  const auto dataset = open_dataset(file.get(), name, path);
  std::optional<std::vector<VirtualEntry>> entries;
  { entries = read_virtual_map(creation_plist(dataset.get()).get()); }
  const auto table = read_tile_table(dataset.get(), info.shape.size());
  if (!entries) {
    problems.push_back(
        fmt::format("{}: mappings are not plain boxes (printf-style names or irregular "
                    "selections): sources not checked one by one",
                    where(path, name)));
    return;
  }
  std::vector<Box> boxes;
  FolderCheck folder(path);
  const auto prefix = vds_prefix();
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& e = (*entries)[i];
    const auto source = resolve_source(path, e.file, prefix);
    const auto label = fmt::format("mapping {} ({}) from '{}':'{}'", i, to_string(e.dst), source.string(), e.dataset);
    boxes.push_back(e.dst);
    if (e.file != "." && !folder.inside(source)) {
      problems.push_back(
          fmt::format("{}: the source is outside the folder of the file (readers refuse it "
                      "unless allowed)",
                      label));
    }
    std::error_code ec;
    if (!fs::exists(source, ec)) {
      problems.push_back(fmt::format("{}: the source file does not exist", label));
      continue;
    }
    try {
      const auto src_file = open_file(source, false, remote_options());
      const auto src = open_dataset(src_file.get(), normalize_dataset_name(e.dataset), source);
      const auto described = describe_dataset(src.get(), where(source, e.dataset));
      const auto& dtype = described.dtype;
      const auto& shape = described.shape;
      if (dtype != info.dtype) {
        problems.push_back(
            fmt::format("{}: the source has dtype {}, the dataset {}", label, dtype.name(), info.dtype.name()));
      }
      const Box needed = e.src.value_or(Box::whole(shape));
      if (!needed.fits(shape) || needed.extent != e.dst.extent) {
        problems.push_back(fmt::format("{}: the source has shape {} but the mapping reads {} of it", label,
                                       to_string(shape), to_string(needed)));
      } else if (table.size() == entries->size()) {
        check_tile_row(table[i], source, src.get(), e.dst.count() * info.dtype.size(), checksums, label, problems);
      }
    } catch (const std::exception& ex) {
      problems.push_back(fmt::format("{}: {}", label, ex.what()));
    }
  }
  // Coverage: no overlaps, and every element mapped.
  const auto coverage = coverage_of(boxes, info.shape);
  for (const auto& [box, other] : coverage.overlaps) {
    problems.push_back(
        fmt::format("{}: mappings {} and {} overlap", where(path, name), to_string(box), to_string(other)));
  }
  const auto total = element_count(info.shape);
  if (coverage.covered < total) {
    problems.push_back(fmt::format("{}: the mappings cover {} of {} elements; the rest reads as the fill value",
                                   where(path, name), coverage.covered, total));
  }
  // The tile index reads start from (files h5tile wrote): it must say what the mapping says.
  const auto early =
      OpenDataset::from_tile_index(path, name, open_options(ReadOptions{.allow_external_sources = true}));
  if (early &&
      (early->info().dtype != info.dtype || early->info().shape != info.shape || !early->maps_like(*entries))) {
    problems.push_back(
        fmt::format("{}: the tile index (h5tile's attributes beside the mapping) disagrees with the mapping: "
                    "reads start from it and are then done again (the data is right, the read slower); "
                    "the file was changed by another program",
                    where(path, name)));
  }
}

}  // namespace

namespace {

// Reads the whole dataset in blocks of at most 64 MiB (the leading axes halved until a block
// fits), so that checking a dataset larger than memory needs a few blocks of memory.
void read_every_byte(const fs::path& path, const std::string& name, const DatasetInfo& info,
                     const ProgressCallback& progress) {
  constexpr std::uint64_t kBlockBytes = std::uint64_t{64} << 20;
  const auto es = info.dtype.size();
  const auto total = element_count(info.shape) * es;
  if (total == 0) {
    return;
  }
  const ReadOptions options{.probe = false};  // verify() probed it
  if (info.shape.empty()) {
    (void)from_file(path, name, options);
    return;
  }
  std::uint64_t done = 0;
  for (auto& b : from_file_batched(path, name, halved_to_fit(info.shape, es, kBlockBytes), options)) {
    done += b.data.nbytes();
    if (progress && !progress(done, total)) {
      throw Cancelled(fmt::format("verify of {} cancelled", where(path, name)));
    }
  }
}

}  // namespace

namespace {

// verify() without the probe: the metadata checks, then (with `read_all`) every byte read.
std::vector<std::string> verify_dataset(const fs::path& path, const std::string& name, bool read_all,
                                        const ProgressCallback& progress) {
  std::vector<std::string> problems;
  DatasetInfo info;
  {
    // Opening a virtual dataset through h5tile already fails on the first bad source; the
    // checks below list every problem, so open only the main dataset here.
    const auto file = open_file(path, false, remote_options());
    const auto ds = open_dataset(file.get(), name, path);
    const auto described = describe_dataset(ds.get(), where(path, name));
    info.dtype = described.dtype;
    info.shape = described.shape;
    info.layout = storage_name(described.storage);
  }
  if (info.layout == "virtual") {
    check_virtual_sources(path, name, info, read_all, problems);
  }
  if (read_all && problems.empty()) {
    try {
      read_every_byte(path, name, info, progress);
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      problems.push_back(fmt::format("reading every byte failed: {}", e.what()));
    }
  }
  return problems;
}

}  // namespace

std::vector<std::string> verify(const fs::path& path, const std::string& dataset, bool read_all,
                                const ProgressCallback& progress) {
  pending_writes().wait_for(path);
  const auto name = normalize_dataset_name(dataset);
  // The probe opens what the checks open (every source of a virtual dataset), and what the read
  // of every byte opens.
  probe_if_wanted(std::nullopt, where(path, name), [&] {
    (void)verify_dataset(path, name, false, {});
    if (read_all) {
      open_as_a_read_does(path, name, open_options(ReadOptions{}));
    }
  });
  return verify_dataset(path, name, read_all, progress);
}

}  // namespace h5tile
