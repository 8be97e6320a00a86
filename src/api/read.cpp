// from_file, read_box, describe and read_tile: open the dataset's layout, then read in parallel.
#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>
#include <h5tile/settings.hpp>

#include "api/pending_writes.hpp"
#include "api/write_checks.hpp"
#include "comm/collective.hpp"
#include "gpu/backend.hpp"
#include "hdf5/file.hpp"
#include "layout/open_dataset.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

namespace {

unsigned threads_of(const ReadOptions& options) { return options.threads != 0 ? options.threads : settings::threads(); }

}  // namespace

DatasetInfo describe(const fs::path& path, const std::string& dataset) {
  pending_writes().wait_for(path);
  // Metadata only: a virtual dataset's sources are not opened, so a damaged one is described.
  return OpenDataset(path, dataset, true, false, true).info();
}

Array from_file(const fs::path& path, const std::string& dataset, const ReadOptions& options) {
  pending_writes().wait_for(path);
  const OpenDataset opened(path, dataset, options.allow_external_sources, options.verify_checksums);
  const Box whole = Box::whole(opened.info().shape);
  Progress progress(options.progress, whole.count() * opened.info().dtype.size());
  return opened.read(whole, threads_of(options), options.device, &progress);
}

Array read_box(const fs::path& path, const std::string& dataset, const Box& box, const ReadOptions& options) {
  pending_writes().wait_for(path);
  const OpenDataset opened(path, dataset, options.allow_external_sources, options.verify_checksums);
  Progress progress(options.progress,
                    box.rank() == opened.info().shape.size() ? box.count() * opened.info().dtype.size() : 0);
  return opened.read(box, threads_of(options), options.device, &progress);
}

void read_into(const fs::path& path, const std::string& dataset, const ArrayView& out, const Shape& offset,
               const ReadOptions& options) {
  pending_writes().wait_for(path);
  const OpenDataset opened(path, dataset, options.allow_external_sources, options.verify_checksums);
  const auto& info = opened.info();
  if (out.dtype != info.dtype) {
    throw InvalidArgument(fmt::format("read_into: the output has dtype {} but {} holds {}", out.dtype.name(),
                                      where(path, opened.name()), info.dtype.name()));
  }
  if (!out.is_contiguous()) {
    throw InvalidArgument(fmt::format("read_into: the output for {} must be C-contiguous (row-major, packed)",
                                      where(path, opened.name())));
  }
  if (out.data == nullptr && element_count(out.shape) > 0) {
    throw InvalidArgument(fmt::format("read_into: the output for {} has no memory", where(path, opened.name())));
  }
  if (offset.empty() && out.shape != info.shape) {
    throw InvalidArgument(fmt::format("read_into: out has shape {} but {} has shape {}", to_string(out.shape),
                                      where(path, opened.name()), to_string(info.shape)));
  }
  const Box box{offset.empty() ? Shape(out.shape.size(), 0) : offset, out.shape};
  if (!box.fits(info.shape)) {
    throw InvalidArgument(fmt::format("read_into: region {} does not fit {} of shape {}", to_string(box),
                                      where(path, opened.name()), to_string(info.shape)));
  }
  Progress progress(options.progress, box.count() * info.dtype.size());
  const int device = gpu::device_of(out);
  opened.read_into(box, static_cast<std::byte*>(const_cast<void*>(out.data)), device, threads_of(options), &progress);
}

ReadTile read_tile(Communicator& comm, const fs::path& path, const std::string& dataset, const ReadOptions& options) {
  pending_writes().wait_for(path);
  std::optional<OpenDataset> opened;
  agree(comm, [&] { opened.emplace(path, dataset, options.allow_external_sources, options.verify_checksums); });
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
  agree(comm, [&] { data.emplace(opened->read(box, threads_of(options), options.device)); });
  return ReadTile{std::move(box), std::move(*data)};
}

}  // namespace h5tile
