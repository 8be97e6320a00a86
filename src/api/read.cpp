// from_file, read_box, describe and read_tile: open the dataset's layout, then read in parallel.
#include <functional>
#include <optional>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>
#include <h5tile/settings.hpp>

#include "api/dataset_reader.hpp"
#include "api/pending_writes.hpp"
#include "api/probe.hpp"
#include "api/read_target.hpp"
#include "api/resolve.hpp"
#include "api/write_checks.hpp"
#include "comm/collective.hpp"
#include "engine/task.hpp"
#include "gpu/backend.hpp"
#include "hdf5/file.hpp"
#include "io/http/url.hpp"
#include "io/remote_io.hpp"
#include "layout/open_dataset.hpp"
#include "layout/virtual/early_open.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

void detail::open_and_read(const Location& location, const std::string& dataset, const ReadOptions& options,
                           const TargetFor& target_for) {
  const auto& path = location.path();
  settle_before_open(path);
  auto opening = open_options(options);
  fit_to_path(opening, location, options.threads);
  probe_if_wanted(options.probe, where(path, dataset), [&] { open_as_a_read_does(location, dataset, opening); });
  const auto threads = opening.threads;
  std::optional<Progress> progress;
  std::optional<Task<void>> reading;
  const auto readable = open_for_read(location, dataset, opening, [&](const OpenDataset& early) {
    const auto target = target_for(early);
    EarlyRead read{.stop =
                       [&] {
                         progress->stop();
                         reading->wait();
                       },
                   .settle = [&] { reading->get(); }};
    progress.emplace(options.progress, target.bytes);
    reading.emplace(start_task([&early, target, threads, &progress] {
      early.read_into(target.region, target.out, target.device, threads, &*progress);
    }));
    return read;  // nothing that can throw once the read runs
  });
  if (!readable.opened) {
    return;  // the read from the index stands
  }
  const auto target = target_for(*readable.opened);
  Progress again(options.progress, target.bytes);  // counts from zero
  readable.opened->read_into(target.region, target.out, target.device, threads, &again);
}

ReadTarget detail::new_array_target(const OpenDataset& opened, const Box& box, int device, std::optional<Array>& out) {
  opened.require_fixed_size();
  const auto& info = opened.info();
  if (!box.fits(info.shape)) {
    throw InvalidArgument(fmt::format("region {} does not fit {} of shape {}", to_string(box),
                                      where(opened.path(), opened.name()), to_string(info.shape)));
  }
  if (!out || out->dtype() != info.dtype || out->shape() != box.extent || out->device() != device) {
    out.emplace(info.dtype, box.extent, device);
  }
  return {box, out->data(), device, out->nbytes()};
}

ReadTarget detail::caller_memory_target(const OpenDataset& opened, const ArrayView& out, const Shape& offset) {
  opened.require_fixed_size();
  const auto& info = opened.info();
  const auto at = where(opened.path(), opened.name());
  if (out.dtype != info.dtype) {
    throw InvalidArgument(
        fmt::format("read_into: the output has dtype {} but {} holds {}", out.dtype.name(), at, info.dtype.name()));
  }
  if (!out.is_contiguous()) {
    throw InvalidArgument(fmt::format("read_into: the output for {} must be C-contiguous (row-major, packed)", at));
  }
  if (out.data == nullptr && element_count(out.shape) > 0) {
    throw InvalidArgument(fmt::format("read_into: the output for {} has no memory", at));
  }
  if (offset.empty() && out.shape != info.shape) {
    throw InvalidArgument(fmt::format("read_into: out has shape {} but {} has shape {}", to_string(out.shape), at,
                                      to_string(info.shape)));
  }
  const Box box{offset.empty() ? Shape(out.shape.size(), 0) : offset, out.shape};
  if (!box.fits(info.shape)) {
    throw InvalidArgument(
        fmt::format("read_into: region {} does not fit {} of shape {}", to_string(box), at, to_string(info.shape)));
  }
  return ReadTarget{box, static_cast<std::byte*>(const_cast<void*>(out.data)), gpu::device_of(out),
                    byte_count(box.extent, info.dtype.size())};
}

DatasetInfo describe(const fs::path& path, const std::string& dataset, std::optional<bool> probe) {
  settle_before_open(path);
  const auto location = Location::of(path);
  auto options = describe_options();
  fit_to_path(options, location, 0);
  // Metadata only: a virtual dataset's sources are not opened, so a damaged one is described.
  probe_if_wanted(probe, where(path, dataset), [&] { (void)OpenDataset(location, dataset, options); });
  return OpenDataset(location, dataset, options).info();
}

std::vector<DatasetInfo> describe_each(const fs::path& path, const std::vector<std::string>& datasets,
                                       std::optional<bool> probe, bool stored_bytes) {
  if (datasets.size() == 1 && stored_bytes) return {describe(path, datasets.front(), probe)};
  settle_before_open(path);
  const auto location = Location::of(path);
  auto options = describe_options();
  options.stored_bytes = stored_bytes;
  fit_to_path(options, location, 0);
  // One open of the file, each dataset described through a handle of its own to it (reopen_file
  // shares the open: a URL's blocks are fetched once).
  const auto describe_all = [&] {
    const auto file = open_file(location, options.remote);
    std::vector<DatasetInfo> infos;
    infos.reserve(datasets.size());
    for (const auto& dataset : datasets) {
      infos.push_back(OpenDataset(location, dataset, options, reopen_file(file.get())).info());
    }
    return infos;
  };
  probe_if_wanted(probe, fmt::format("'{}'", display_name(path.native())), [&] { (void)describe_all(); });
  return describe_all();
}

Array from_file(const fs::path& path, const std::string& dataset, const ReadOptions& options) {
  std::optional<Array> out;
  open_and_read(Location::of(path), dataset, options, [&](const OpenDataset& opened) {
    return new_array_target(opened, Box::whole(opened.info().shape), options.device, out);
  });
  return std::move(*out);
}

Array read_box(const fs::path& path, const std::string& dataset, const Box& box, const ReadOptions& options) {
  std::optional<Array> out;
  open_and_read(Location::of(path), dataset, options,
                [&](const OpenDataset& opened) { return new_array_target(opened, box, options.device, out); });
  return std::move(*out);
}

std::vector<std::string> read_strings(const fs::path& path, const std::string& dataset, const std::optional<Box>& box,
                                      const ReadOptions& options) {
  settle_before_open(path);
  const auto location = Location::of(path);
  auto opening = open_options(options);
  fit_to_path(opening, location, options.threads);
  probe_if_wanted(options.probe, where(path, dataset), [&] { open_as_a_read_does(location, dataset, opening); });
  const OpenDataset opened(location, dataset, opening);
  if (options.device >= 0 && opened.info().dtype.kind() == DTypeKind::VarString) {
    throw UnsupportedType(
        fmt::format("{} holds variable-length strings, which are read into host memory only (as "
                    "NumPy object arrays), not into device {}",
                    where(path, opened.name()), options.device));
  }
  return opened.read_strings(box ? *box : Box::whole(opened.info().shape));
}

void read_into(const fs::path& path, const std::string& dataset, const ArrayView& out, const Shape& offset,
               const ReadOptions& options) {
  open_and_read(Location::of(path), dataset, options,
                [&](const OpenDataset& opened) { return caller_memory_target(opened, out, offset); });
}

ReadTile read_tile(Communicator& comm, const fs::path& path, const std::string& dataset, const ReadOptions& options) {
  settle_before_open(path);
  Location location;
  agree(comm, [&] { location = Location::of(path); });  // a refused scheme on one rank fails every rank
  std::optional<OpenDataset> opened;
  auto opening = open_options(options);
  fit_to_path(opening, location, options.threads);
  // One probe for every rank (the ranks open the same metadata), before any rank opens it.
  (void)on_root(comm, 0, [&] {
    probe_if_wanted(options.probe, where(path, dataset), [&] { open_as_a_read_does(location, dataset, opening); });
    return std::string();
  });
  agree(comm, [&] { opened.emplace(location, dataset, opening); });
  // A virtual dataset with one source per rank: each rank reads its own source; otherwise
  // the dataset is split along its first axis.
  const auto& mappings = opened->mappings();
  const auto rank = static_cast<std::size_t>(comm.rank());
  Box box;
  if (opened->info().layout == "virtual" && mappings.size() == static_cast<std::size_t>(comm.size())) {
    box = mappings[rank].dst;
  } else {
    const auto boxes = split_for_ranks(opened->info().shape, static_cast<unsigned>(comm.size()));
    box = rank < boxes.size() ? boxes[rank]
                              : Box{Shape(opened->info().shape.size(), 0), Shape(opened->info().shape.size(), 0)};
  }
  std::optional<Array> data;
  agree(comm, [&] { data.emplace(opened->read(box, opening.threads, options.device)); });
  return ReadTile{std::move(box), std::move(*data)};
}

std::string redacted_path(const std::string& path) { return display_name(path); }

bool is_remote(const fs::path& path, bool writing) {
  return Location::of(path, writing ? Location::Use::Write : Location::Use::Read).remote();
}

RemoteIoReport last_remote_io() {
  const auto counts = remote_io_report();
  return {counts.requests, counts.bytes, counts.retries, counts.critical_path};
}

}  // namespace h5tile
