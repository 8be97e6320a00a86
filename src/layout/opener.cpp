#include "layout/opener.hpp"

#include <memory>
#include <utility>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/dataset_io.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"
#include "layout/data_files.hpp"
#include "layout/virtual/remote_sources.hpp"
#include "layout/virtual/virtual_open.hpp"

namespace h5tile::detail {

namespace {

// The dataset's description from HDF5, its DatasetInfo, memory type and fill value kept.
DatasetDescription describe(OpenedDataset& opened) {
  auto described =
      describe_dataset(opened.dataset.get(), where(opened.location.path(), opened.name), opened.options.metadata_only);
  auto& info = opened.info;
  info.dtype = described.dtype;
  info.numpy_type = described.numpy_type;
  info.shape = described.shape;
  info.max_shape = described.max_shape;
  info.layout = storage_name(described.storage);
  info.chunk = described.chunk;
  info.filters = described.filters;
  info.charset = described.charset;
  info.filter_values = described.filter_values;
  opened.memory_type = std::move(described.memory_type);
  if (info.dtype.kind() != DTypeKind::VarString) {
    info.fill_value.resize(info.dtype.size());
    fill_value(opened.dataset.get(), opened.memory_type.get(), info.fill_value.data());
  } else {
    const auto text = string_fill_value(opened.dataset.get(), opened.memory_type.get());
    info.fill_value.assign(text.begin(), text.end());
  }
  return described;
}

// A dataset stored in one piece (contiguous, chunked, compact, external storage): its own only
// source, read with pread where its layout and filters allow, else through HDF5.
void open_stored(OpenedDataset& opened) {
  auto& info = opened.info;
  if (opened.options.stored_bytes) info.stored_bytes = storage_bytes(opened.dataset.get());
  auto self = std::make_unique<Source>();
  self->file = opened.location.path();
  self->dataset = opened.name;
  self->shape = info.shape;
  self->chunk = info.chunk;
  self->elem_size = info.dtype.size();
  std::string why_hdf5;
  self->access = access_for({{},
                             open_guarded(opened, opened.file.get(), opened.name, opened.location.path()),
                             copy_type(opened.memory_type.get())},
                            info.chunk, opened.options.raw_io, opened.options.direct_reads, opened.location.path(),
                            opened.name, &why_hdf5);
  if (!info.filters.empty()) {
    const bool ours = std::holds_alternative<FilteredChunks>(self->access);
    info.decoder = ours ? "h5tile" : "hdf5";
    info.decoder_reason = ours ? std::string() : why_hdf5;
  }
  opened.sources.push_back(std::move(self));
  opened.mappings.push_back({0, Box::whole(info.shape), Box::whole(info.shape)});
}

}  // namespace

OpenedDataset open_to_read(const Location& location, const std::string& dataset, const OpenOptions& options,
                           FileHandle file) {
  OpenedDataset opened;
  opened.location = location;
  opened.name = normalize_dataset_name(dataset);
  opened.options = options;
  opened.file = file ? std::move(file) : open_file(location, options.remote);
  opened.dataset = open_guarded(opened, opened.file.get(), opened.name, location.path());
  const auto described = describe(opened);
  if (described.null_space) {
    opened.info.null_space = true;  // metadata only: there is nothing to read
    return opened;
  }
  const auto dcpl = creation_plist(opened.dataset.get());
  const bool is_virtual = described.storage == Storage::Virtual;
  if (location.remote()) {
    opened.files_known = false;
    // HDF5 reads a remote file from its own object only: its driver refuses any other file
    // (hdf5/remote_driver.hpp). h5tile opens a virtual dataset's sources beside it itself.
    if (const auto names = external_storage_names(dcpl.get()); !names.empty()) {
      throw VirtualSourceError(
          fmt::format("{} keeps its data in HDF5 external storage ('{}'): h5tile does not read "
                      "external storage of a remote file",
                      where(location.path(), opened.name), names.front()));
    }
    if (is_virtual) {
      if (options.metadata_only) {
        describe_virtual(opened, dcpl.get());  // its sources' sizes are not looked up
      } else {
        open_remote_virtual(opened, dcpl.get());  // its sources: objects beside it, nothing else
      }
      return opened;
    }
  } else if (!options.metadata_only) {
    note_kept_file(opened, location.path(), opened.dataset.get(), dcpl.get());
  }
  if (!options.metadata_only) {
    check_data_files(location.path(), location.path(), opened.name, opened.dataset.get(), dcpl.get(),
                     options.extfile_prefix, options.allow_external);
  }
  if (!is_virtual) {
    open_stored(opened);
  } else if (options.metadata_only) {
    describe_virtual(opened, dcpl.get());  // its sources are not opened
  } else {
    open_virtual(opened, dcpl.get());
  }
  return opened;
}

}  // namespace h5tile::detail
