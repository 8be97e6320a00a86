// list_datasets and verify: what is in a file, and whether a dataset is whole.
#include <algorithm>
#include <limits>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>
#include <h5tile/settings.hpp>

#include <fcntl.h>

#include "api/dataset_reader.hpp"
#include "api/pending_writes.hpp"
#include "api/probe.hpp"
#include "api/resolve.hpp"
#include "api/write_checks.hpp"
#include "engine/checksum.hpp"
#include "engine/thread_pool.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/link_table.hpp"
#include "hdf5/links.hpp"
#include "hdf5/remote_driver.hpp"
#include "hdf5/types.hpp"
#include "hdf5/virtual.hpp"
#include "io/http/url.hpp"
#include "io/posix/posix_file.hpp"
#include "layout/boxes.hpp"
#include "layout/data_files.hpp"
#include "layout/file_writer.hpp"
#include "layout/open_dataset.hpp"
#include "layout/virtual/early_open.hpp"
#include "layout/virtual/remote_sources.hpp"
#include "layout/virtual/tile_index.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

std::vector<std::string> list_datasets(const fs::path& path) {
  settle_before_open(path);
  const auto location = Location::of(path);
  probe_if_wanted(std::nullopt, fmt::format("'{}'", display_name(path.native())),
                  [&] { (void)dataset_paths(open_file(location, remote_options()).get()); });
  const auto file = open_file(location, remote_options());
  auto names = dataset_paths(file.get());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::vector<std::string>> list_dataset_names(const fs::path& path) {
  settle_before_open(path);
  const auto location = Location::of(path);
  probe_if_wanted(std::nullopt, fmt::format("'{}'", display_name(path.native())),
                  [&] { (void)link_tables(open_file(location, remote_options()).get()); });
  const auto file = open_file(location, remote_options());
  std::map<std::string, std::vector<std::string>> by_object;
  for (const auto& group : link_tables(file.get())) {
    for (const auto& link : group.links) {
      if (link.kind == LinkKind::Hard && link.object == ObjectKind::Dataset) {
        by_object[link.object_id].push_back(group.path == "/" ? "/" + link.name : group.path + "/" + link.name);
      }
    }
  }
  std::vector<std::vector<std::string>> names;
  names.reserve(by_object.size());
  for (auto& [id, paths] : by_object) {
    std::sort(paths.begin(), paths.end());
    names.push_back(std::move(paths));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<VirtualSource> list_virtual_sources(const fs::path& path, const std::string& dataset) {
  settle_before_open(path);
  const auto location = Location::of(path);
  const auto name = normalize_dataset_name(dataset);
  probe_if_wanted(std::nullopt, where(path, name), [&] { (void)OpenDataset(location, name, describe_options()); });
  const auto file = open_file(location, remote_options());
  // As describe: external links followed where they lead to regular files.
  const auto ds = open_dataset(file.get(), name, path, GuardedLinks(external_link_check(location, true, ext_prefix())));
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
  if (const auto base = parse_url(path.native())) {
    // A remote file's sources: objects beside it (one request each, many at once); a name
    // outside its folder, or a mapping HDF5 would follow itself, is never fetched.
    std::vector<std::optional<Url>> urls;
    std::vector<Url> to_open;
    const auto count = entries ? entries->size() : files.size();
    for (std::size_t i = 0; i < count; ++i) {
      const auto& source_name = entries ? (*entries)[i].file : files[i];
      urls.push_back(source_name == "." || !entries ? std::nullopt : resolve_inside(*base, source_name));
      if (urls.back()) to_open.push_back(*urls.back());
    }
    const auto opened = open_remote_objects(to_open, source_object_options(remote_options()));
    for (std::size_t i = 0, k = 0; i < count; ++i) {
      const bool found = (entries && (*entries)[i].file == ".") || (urls[i] && opened[k++].source != nullptr);
      if (entries) {
        auto& e = (*entries)[i];
        out.push_back({e.dst, std::move(e.file), std::move(e.dataset), std::move(e.src), found});
      } else {
        out.push_back({std::nullopt, std::move(files[i]), "", std::nullopt, found});
      }
    }
    return out;
  }
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

// External links as a read follows them: to regular files in the folder of `path` only, checked
// before HDF5 opens them.
ExternalLinkCheck checked_links(const Location& file) { return external_link_check(file, false, ext_prefix()); }

// What the tile table says of tile `source` (HDF5's `dataset`, of `bytes`) against what
// is there: the raw offset (where reads by the table read), the file's size and identity (what
// shows that it is the file written) and, with `checksums`, the checksum of its bytes.
void check_tile_row(const TileRow& row, const ByteSource& tile, hid_t dataset, std::uint64_t bytes, bool checksums,
                    const std::string& label, std::vector<std::string>& problems) {
  const auto stored_at = contiguous_offset(dataset);
  if (stored_at != row.raw_offset) {
    problems.push_back(fmt::format(
        "{}: the tile table gives raw offset {} but HDF5 stores the tile's bytes {} (the table was changed by "
        "another program; reads do not believe it)",
        label, row.raw_offset, stored_at ? fmt::format("at {}", *stored_at) : std::string("elsewhere")));
    return;
  }
  const auto size = tile.size();
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

// check_virtual_sources' checks of each mapping of a virtual dataset in the remote file `path`:
// its source object beside the file (opened many at once; a name outside its folder is a problem
// and is never fetched), the dataset in it, and what the tile table says of it.
void check_remote_sources(const Location& location, const DatasetInfo& info, const std::vector<VirtualEntry>& entries,
                          const std::vector<TileRow>& table, bool checksums, std::vector<std::string>& problems) {
  const auto& path = location.path();
  const auto base = parse_url(path.native()).value();
  const auto options = source_object_options(remote_options());
  std::vector<std::optional<Url>> urls;
  std::vector<Url> to_open;
  for (const auto& e : entries) {
    urls.push_back(e.file == "." ? std::nullopt : resolve_inside(base, e.file));
    if (urls.back()) to_open.push_back(*urls.back());
  }
  const auto opened = open_remote_objects(to_open, options);
  for (std::size_t i = 0, k = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const auto shown = urls[i] ? redacted(*urls[i]) : display_name(path.native());
    const auto label = fmt::format("mapping {} ({}) from '{}':'{}'", i, to_string(e.dst), shown, e.dataset);
    if (!urls[i] && e.file != ".") {
      problems.push_back(fmt::format("{}: the source '{}' is outside the folder of the remote file (readers refuse it)",
                                     label, display_name(e.file)));
      continue;
    }
    try {
      std::shared_ptr<const ByteSource> object;
      if (urls[i]) {
        const auto& got = opened[k++];
        if (got.error) std::rethrow_exception(got.error);
        object = got.source;
      }
      const auto src_file =
          object ? open_remote_file(object, options.block_size, 16 * options.block_size, options.parallel)
                 : open_file(location, remote_options());
      const auto src =
          open_dataset(src_file.get(), normalize_dataset_name(e.dataset), shown, GuardedLinks(checked_links(location)));
      const auto described = describe_dataset(src.get(), where(shown, e.dataset));
      if (described.dtype != info.dtype) {
        problems.push_back(fmt::format("{}: the source has dtype {}, the dataset {}", label, described.dtype.name(),
                                       info.dtype.name()));
      }
      const Box needed = e.src.value_or(Box::whole(described.shape));
      if (!needed.fits(described.shape) || needed.extent != e.dst.extent) {
        problems.push_back(fmt::format("{}: the source has shape {} but the mapping reads {} of it", label,
                                       to_string(described.shape), to_string(needed)));
      } else if (table.size() == entries.size() && object) {
        check_tile_row(table[i], *object, src.get(), e.dst.count() * info.dtype.size(), checksums, label, problems);
      }
    } catch (const std::exception& ex) {
      problems.push_back(fmt::format("{}: {}", label, ex.what()));
    }
  }
}

// Checks every mapping of a virtual dataset against its source; one line per problem. With
// `checksums`, also recomputes each tile's checksum recorded in the tile table.
void check_virtual_sources(const Location& location, const std::string& name, const DatasetInfo& info, bool checksums,
                           std::vector<std::string>& problems) {
  const auto& path = location.path();
  const auto file = open_file(location, remote_options());
  const auto dataset = open_dataset(file.get(), name, path, GuardedLinks(checked_links(location)));
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
  if (location.remote()) {
    check_remote_sources(location, info, *entries, table, checksums, problems);
    for (const auto& e : *entries) boxes.push_back(e.dst);
  }
  FolderCheck folder(path);
  const auto prefix = vds_prefix();
  for (std::size_t i = 0; i < (location.remote() ? 0 : entries->size()); ++i) {
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
      const auto src_file = open_local_file(source);
      const auto src = open_dataset(src_file.get(), normalize_dataset_name(e.dataset), source,
                                    GuardedLinks(checked_links(location)));
      const auto described = describe_dataset(src.get(), where(source, e.dataset));
      const auto& dtype = described.dtype;
      const auto& shape = described.shape;
      if (dtype != info.dtype) {
        problems.push_back(
            fmt::format("{}: the source has dtype {}, the dataset {}", label, dtype.name(), info.dtype.name()));
      }
      const Box needed = e.src.value_or(Box::whole(shape));
      const bool reshaped = needed.fits(shape) && same_but_unit_axes(needed.extent, e.dst.extent);  // HDF5 reads it
      if (!needed.fits(shape) || (needed.extent != e.dst.extent && !reshaped)) {
        problems.push_back(fmt::format("{}: the source has shape {} but the mapping reads {} of it", label,
                                       to_string(shape), to_string(needed)));
      } else if (table.size() == entries->size()) {
        const PosixFile tile(source, O_RDONLY | O_NONBLOCK, settings::direct_io());
        check_tile_row(table[i], tile, src.get(), e.dst.count() * info.dtype.size(), checksums, label, problems);
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
  const auto early = open_from_tile_index(location, name, open_options(ReadOptions{.allow_external_sources = true}));
  if (early && (early->info.dtype != info.dtype || early->info.shape != info.shape || !maps_like(*early, *entries))) {
    problems.push_back(
        fmt::format("{}: the tile index (h5tile's attributes beside the mapping) disagrees with the mapping: "
                    "reads start from it and are then done again (the data is right, the read slower); "
                    "the file was changed by another program",
                    where(path, name)));
  }
}

}  // namespace

namespace {

// Blocks of a read of every byte; below this, a dataset is read whole however sparse it is.
constexpr std::uint64_t kBlockBytes = std::uint64_t{64} << 20;

// The product of `shape`, saturated at 2^64 - 1.
std::uint64_t saturated_count(const Shape& shape) {
  std::uint64_t n = 1;
  for (const auto e : shape) {
    if (e == 0) return 0;
    n = n > std::numeric_limits<std::uint64_t>::max() / e ? std::numeric_limits<std::uint64_t>::max() : n * e;
  }
  return n;
}

// Reads the whole dataset (of `total` bytes) in blocks of at most 64 MiB (the leading axes
// halved until a block fits), so that checking a dataset larger than memory needs a few blocks of
// memory. Throws where fewer bytes came than the dataset holds: verify never claims a read it did
// not do.
void read_every_byte(const fs::path& path, const std::string& name, const DatasetInfo& info, std::uint64_t total,
                     const ProgressCallback& progress) {
  const auto es = info.dtype.size();
  if (total == 0) {
    return;
  }
  const ReadOptions options{.probe = false};  // verify() probed it
  if (info.dtype.kind() == DTypeKind::VarString) {
    (void)read_strings(path, name, std::nullopt, options);  // HDF5 reads the global heap: whole
    return;
  }
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
  if (done != total) {
    throw RuntimeError(fmt::format("{} bytes read of the {} that {} holds", done, total, where(path, name)));
  }
}

// Reads each of `chunks` (allocated chunks of a chunked dataset, shape `chunk`) once, in
// parallel; the rest of the dataset is the fill value, which HDF5 supplies and nothing stores.
// Returns how many were read (chunks beyond a shrunk extent are not).
std::size_t read_allocated_chunks(const Location& location, const std::string& name, const DatasetInfo& info,
                                  const std::vector<Shape>& chunks, const ProgressCallback& progress) {
  const auto& path = location.path();
  auto opening = open_options(ReadOptions{.probe = false});
  fit_to_path(opening, location, 0);
  const OpenDataset opened(location, name, opening);
  const auto whole = Box::whole(opened.info().shape);
  std::vector<Box> boxes;
  std::uint64_t total = 0;
  for (const auto& origin : chunks) {
    if (const auto box = intersect(Box{origin, info.chunk}, whole)) {  // none beyond a shrunk extent
      total += byte_count(box->extent, info.dtype.size());
      boxes.push_back(*box);
    }
  }
  std::mutex mutex;
  std::uint64_t done = 0;
  bool cancelled = false;
  parallel_for(boxes.size(), opening.threads, [&](std::size_t i) {
    {
      const std::lock_guard lock(mutex);
      if (cancelled) return;
    }
    const auto part = opened.read(boxes[i], 1);
    const std::lock_guard lock(mutex);
    done += part.nbytes();
    if (progress && !cancelled && !progress(done, total)) cancelled = true;
  });
  if (cancelled) {
    throw Cancelled(fmt::format("verify of {} cancelled", where(path, name)));
  }
  return boxes.size();
}

// What is stored of a dataset, for the read of every byte: a chunked dataset whose allocated
// chunks hold less than half of it (a sparse one: 2^63 bytes in a 2 KiB file) lists them, and a
// contiguous one never written has nothing stored; reads of the rest would make fill values, at
// any length, and check nothing.
struct Stored {
  std::optional<std::vector<Shape>> only_chunks;  // a sparse chunked dataset: its allocated chunks
  std::uint64_t chunk_grid = 0;                   // its chunks in all (saturated)
  bool nothing = false;                           // contiguous, never written
};

Stored what_is_stored(hid_t dataset, const DatasetDescription& described, std::uint64_t total) {
  Stored stored;
  if (total <= kBlockBytes) {
    return stored;  // read whole, whatever it is
  }
  const auto es = described.dtype.size();
  if (described.storage == Storage::Contiguous) {
    stored.nothing = storage_bytes(dataset) == 0;
  } else if (described.storage == Storage::Chunked && described.chunk.size() == described.shape.size()) {
    const auto allocated = count_chunks(dataset);
    const auto chunk_bytes = byte_count(described.chunk, es);
    const auto stored_bytes =
        allocated > std::numeric_limits<std::uint64_t>::max() / std::max<std::uint64_t>(chunk_bytes, 1)
            ? std::numeric_limits<std::uint64_t>::max()
            : allocated * chunk_bytes;
    if (stored_bytes < total / 2) {
      Shape grid;
      for (std::size_t a = 0; a < described.shape.size(); ++a) {
        grid.push_back(described.shape[a] / described.chunk[a] +
                       (described.shape[a] % described.chunk[a] != 0 ? 1 : 0));
      }
      stored.chunk_grid = saturated_count(grid);
      stored.only_chunks.emplace();
      for (auto& [origin, chunk] : allocated_chunks(dataset)) stored.only_chunks->push_back(std::move(origin));
    }
  }
  return stored;
}

// verify() without the probe: the metadata checks, then (with `read_all`) every byte read, unless
// `bytes_read` (a child process read them: read_isolated_where_hdf5_decodes).
VerifyReport verify_dataset(const Location& location, const std::string& name, bool read_all,
                            const ProgressCallback& progress, bool bytes_read = false) {
  const auto& path = location.path();
  VerifyReport report;
  auto& problems = report.problems;
  DatasetInfo info;
  std::optional<std::uint64_t> total;
  Stored stored;
  {
    // Opening a virtual dataset through h5tile already fails on the first bad source; the
    // checks below list every problem, so open only the main dataset here.
    const auto file = open_file(location, remote_options());
    const auto ds = open_dataset(file.get(), name, path, GuardedLinks(checked_links(location)));
    const auto described = describe_dataset(ds.get(), where(path, name));
    info.dtype = described.dtype;
    info.shape = described.shape;
    info.chunk = described.chunk;
    info.layout = storage_name(described.storage);
    if (const auto attribute = shape_attribute_disagreement(file.get(), name, info.shape)) {
      problems.push_back(
          fmt::format("{}: attribute '{}' {} but HDF5 gives shape {} (the attribute was "
                      "changed by another program; reads use HDF5's shape)",
                      where(path, name), kShapeAttribute, *attribute, to_string(info.shape)));
    }
    try {
      total = byte_count(info.shape, info.dtype.size());
    } catch (const InvalidArgument& e) {
      // HDF5 takes such a shape; no size in bytes can be given for it, nor can it be read whole.
      problems.push_back(fmt::format("{} cannot be read whole: {}{}", where(path, name), e.what(),
                                     read_all ? " (nothing was read)" : ""));
    }
    if (read_all && total) {
      stored = what_is_stored(ds.get(), described, *total);
    }
  }
  if (info.layout == "virtual") {
    check_virtual_sources(location, name, info, read_all, problems);
  }
  if (read_all && !bytes_read && problems.empty()) {
    try {
      if (stored.nothing) {
        report.read = "nothing stored: never written, every element is the fill value";
      } else if (stored.only_chunks) {
        const auto chunks = read_allocated_chunks(location, name, info, *stored.only_chunks, progress);
        report.read = fmt::format("{} of {} chunks allocated, each read; the rest is the fill value (not stored)",
                                  chunks, stored.chunk_grid);
      } else {
        read_every_byte(path, name, info, *total, progress);
        report.read = "every byte read";
      }
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      problems.push_back(fmt::format("reading every byte failed: {}", e.what()));
      report.read.clear();
    }
  }
  return report;
}

}  // namespace

VerifyReport verify_report(const fs::path& path, const std::string& dataset, bool read_all,
                           const ProgressCallback& progress) {
  settle_before_open(path);
  const auto location = Location::of(path);
  const auto name = normalize_dataset_name(dataset);
  auto opening = open_options(ReadOptions{});
  fit_to_path(opening, location, 0);
  // The probe opens what the checks open (every source of a virtual dataset), and what the read
  // of every byte opens.
  probe_if_wanted(std::nullopt, where(path, name), [&] {
    (void)verify_dataset(location, name, false, {});
    if (read_all) {
      open_as_a_read_does(location, name, opening);
    }
  });
  // What HDF5 decodes itself (raw_io off, filters h5tile does not decode) it may crash on: read in
  // a child first, whose crash is a problem of this dataset.
  bool bytes_read = false;
  std::optional<std::string> crashed;
  if (read_all && probe_wanted(std::nullopt)) {
    try {
      bytes_read = read_isolated_where_hdf5_decodes(location, name, opening, settings::kMaxProbeTimeout);
    } catch (const ProbeFailed& e) {
      crashed = e.what();
    } catch (const Error&) {
      // Not opened for reading: the checks below say why.
    }
  }
  auto report = verify_dataset(location, name, read_all && !crashed, progress, bytes_read);
  if (bytes_read && report.problems.empty() && report.read.empty()) {
    report.read = "every byte read";  // by HDF5, in the child
  }
  if (crashed) report.problems.push_back(*crashed);
  return report;
}

std::int64_t open_hdf5_objects() { return detail::open_object_count(); }

void disable_hdf5_plugins() { detail::disable_plugin_loading(); }

std::vector<std::string> verify(const fs::path& path, const std::string& dataset, bool read_all,
                                const ProgressCallback& progress) {
  return verify_report(path, dataset, read_all, progress).problems;
}

}  // namespace h5tile
