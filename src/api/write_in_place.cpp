// write_into: a part of an existing dataset written in place (include/h5tile/io.hpp).
#include <algorithm>
#include <mutex>
#include <variant>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>
#include <h5tile/settings.hpp>

#include "api/held_files.hpp"
#include "api/resolve.hpp"
#include "api/write_checks.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/links.hpp"
#include "hdf5/reserve.hpp"
#include "io/posix/posix_file.hpp"
#include "layout/chunked/chunk_update.hpp"
#include "layout/data_files.hpp"
#include "layout/tile_bytes.hpp"

namespace h5tile {
namespace fs = std::filesystem;

namespace {

// How many chunks of the extent `chunk` the strided selection (offset, step, shape) touches at
// most (the product over the axes of the chunks its span crosses).
std::uint64_t chunks_touched(const Shape& offset, const Shape& step, const Shape& shape, const Shape& chunk) {
  std::uint64_t count = 1;
  for (std::size_t a = 0; a < chunk.size() && a < shape.size(); ++a) {
    if (shape[a] == 0 || chunk[a] == 0) return 0;
    const auto last = offset[a] + (shape[a] - 1) * step[a];
    count *= last / chunk[a] - offset[a] / chunk[a] + 1;
  }
  return count;
}

// The selection of write_into, checked against the dataset: `offset` and `step` filled in.
struct Selection {
  Shape offset;
  Shape step;
};

Selection checked_selection(const Shape& shape, const ArrayView& data, const Shape& offset, const Shape& step,
                            const std::string& where) {
  const auto rank = shape.size();
  Selection out{offset.empty() ? Shape(rank, 0) : offset, step.empty() ? Shape(rank, 1) : step};
  if (offset.empty() && data.shape != shape) {
    throw InvalidArgument(
        fmt::format("cannot write {} into {} of shape {}: a write of the whole dataset needs its shape "
                    "(or give the offset of the part written)",
                    to_string(data.shape), where, to_string(shape)));
  }
  if (data.shape.size() != rank || out.offset.size() != rank || out.step.size() != rank) {
    throw InvalidArgument(fmt::format("cannot write {} at offset {} step {} into {} of shape {}: the ranks differ",
                                      to_string(data.shape), to_string(out.offset), to_string(out.step), where,
                                      to_string(shape)));
  }
  for (std::size_t a = 0; a < rank; ++a) {
    const auto count = data.shape[a];
    const auto first = out.offset[a];
    // The last element written, first + (count - 1) * step, inside the axis (without overflow).
    const bool fits =
        out.step[a] >= 1 &&
        (count == 0 ? first <= shape[a] : first < shape[a] && count - 1 <= (shape[a] - 1 - first) / out.step[a]);
    if (!fits) {
      throw InvalidArgument(
          fmt::format("cannot write {} at offset {} step {} into {} of shape {}: it does not fit "
                      "along axis {}",
                      to_string(data.shape), to_string(out.offset), to_string(out.step), where, to_string(shape), a));
    }
  }
  return out;
}

// The chunked dataset `dataset` as write_chunks_in_place writes it, or nullopt where HDF5 must
// write it (a filter h5tile does not encode, a stored type other than the memory's, partial edge
// chunks stored unfiltered).
std::optional<std::variant<std::monostate, detail::FilterPipeline>> chunk_pipeline(hid_t dataset, hid_t memory_type,
                                                                                   std::size_t elem_size) {
  const auto stored = detail::chunk_filters(dataset, memory_type);
  if (stored.filters.empty()) {
    if (!detail::raw_chunks(dataset, memory_type)) return std::nullopt;
    return std::monostate{};
  }
  if (!stored.obstacle.empty()) return std::nullopt;
  std::vector<detail::FilterSpec> filters;
  for (const auto& f : stored.filters) filters.push_back({f.id, f.params});
  auto made = detail::FilterPipeline::make(filters, elem_size);
  if (std::holds_alternative<std::string>(made)) return std::nullopt;
  return std::move(std::get<detail::FilterPipeline>(made));
}

// One write in place at a time in this process (as h5py's lock does): a chunk is read, merged
// and written back, and two writes merging into one chunk at once would lose one of them.
std::mutex& one_write_at_a_time() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

void write_into(const fs::path& path, const std::string& dataset, const ArrayView& given, const Shape& offset,
                const Shape& step, unsigned threads) {
  const std::lock_guard serial(one_write_at_a_time());
  detail::check_not_remote(path);
  const auto name = detail::normalize_dataset_name(dataset);
  const auto where = detail::where(path, name);
  if (given.memory == MemoryKind::Device) {
    throw InvalidArgument(fmt::format("cannot write into {}: write_into writes from host memory", where));
  }
  if (element_count(given.shape) > 0 && !given.is_contiguous()) {
    throw InvalidArgument(fmt::format("cannot write into {}: the data must be C-contiguous", where));
  }
  detail::FileChange change(path);
  // Where the file is held (an h5tile.File in a write mode), the dataset stays open between
  // writes, so that HDF5's chunk cache keeps the chunk a row at a time goes to (h5py's way).
  auto handle = change.dataset(name);
  const bool held = change.held();
  const auto described = detail::describe_dataset(handle.get(), where);
  if (described.dtype.kind() == DTypeKind::VarString) {
    throw UnsupportedType(
        fmt::format("{} holds variable-length strings: write_into writes fixed-size elements", where));
  }
  if (described.storage == detail::Storage::Virtual) {
    throw UnsupportedType(
        fmt::format("{} is a virtual dataset: h5tile does not write into its sources (write them, "
                    "or write the dataset anew with to_file)",
                    where));
  }
  ArrayView data = given;
  if (described.shape.empty() && offset.empty() && data.shape.size() == 1 && data.shape[0] == 1) {
    data.shape = {};  // one element for a scalar dataset, as a 1-D view of a 0-d array gives it
    data.byte_strides = {};
  }
  if (data.dtype != described.dtype) {
    throw InvalidArgument(fmt::format("cannot write {} into {}, which holds {}: convert the data first",
                                      data.dtype.name(), where, described.dtype.name()));
  }
  const auto selection = checked_selection(described.shape, data, offset, step, where);
  const bool unit_steps = std::all_of(selection.step.begin(), selection.step.end(), [](auto s) { return s == 1; });
  const auto elem_size = described.dtype.size();
  const auto memory_type = described.memory_type.get();
  const Box box{selection.offset, data.shape};
  if (held && described.storage == detail::Storage::Chunked && detail::hdf5_applies_filters(handle.get()) &&
      byte_count(data.shape, elem_size) < element_count(described.chunk) * elem_size) {
    // Less than a chunk: through the dataset kept open, its chunk kept in HDF5's cache between
    // calls (not read again for the next row), and written to the file before the call returns
    // (this process's reads pread it; HDF5 would otherwise hold it until evicted). Room for the
    // chunks it touches, stored anew by HDF5, is reserved first (at most their size, a little
    // more for a filter's worst case): a full disk fails here, before HDF5 frees or writes any.
    const auto touched = chunks_touched(selection.offset, selection.step, data.shape, described.chunk);
    const auto chunk_bytes = element_count(described.chunk) * elem_size;
    const detail::SpaceReservation room(change.descriptor(), path.string(),
                                        touched * (chunk_bytes + chunk_bytes / 64) + detail::kRoomForTheIndex);
    detail::hdf5_write(handle.get(), memory_type, selection.offset, data.shape, selection.step, data.data);
    detail::flush_dataset(handle.get());
    change.finish();
    return;
  }
  if (held) {
    // Written other than through HDF5 below: no open of it may keep chunks or a sieve buffer,
    // under this name or another (a soft or hard link to the same object shares its state).
    handle = detail::DatasetHandle();
    change.forget_datasets();
    handle = change.dataset(name);  // opened anew, and kept again
  }
  auto config = detail::write_config(WriteOptions{});
  if (threads > 0) config.threads = threads;
  config.sync = false;
  const auto base = described.storage == detail::Storage::Contiguous && unit_steps
                        ? detail::raw_offset(handle.get(), memory_type)
                        : std::nullopt;
  const auto holding = base ? detail::file_holding(handle.get()) : std::nullopt;
  auto pipeline = described.storage == detail::Storage::Chunked ? chunk_pipeline(handle.get(), memory_type, elem_size)
                                                                : std::nullopt;
  if (holding) {
    // Stored as in memory and allocated: the workers pwrite their runs of the box into the file
    // HDF5 holds it in (another, where an external link led there); HDF5 keeps no raw data of it.
    const auto out = detail::PosixFile::adopt(holding->fd, holding->name, settings::DirectIo::Off);
    // Buffered writes into one file take its inode's lock in turn: past a few workers they only
    // queue (bench/probes/contiguous_write_threads.py, 16 cores: 1-4 workers 1.03x h5py, 16 0.92x).
    config.threads = std::min(config.threads, 4U);
    detail::Progress progress({}, box.count() * elem_size);
    detail::write_tile_bytes({&out, *base, described.shape, elem_size}, box, data, progress, config);
  } else if (pipeline) {
    detail::ChunkedTarget target{handle.get(), described.shape, described.chunk, elem_size, nullptr, {}, where};
    if (auto* filters = std::get_if<detail::FilterPipeline>(&*pipeline)) target.pipeline = filters;
    target.fill.resize(elem_size);
    detail::fill_value(handle.get(), memory_type, target.fill.data());
    detail::write_chunks_in_place(target, static_cast<const std::byte*>(data.data),
                                  {selection.offset, selection.step, data.shape}, config.threads);
  } else {
    detail::hdf5_write(handle.get(), memory_type, selection.offset, data.shape, selection.step, data.data);
  }
  change.finish(handle.get());
}

void write_strings(const fs::path& path, const std::string& dataset, const std::vector<std::string>& values,
                   const Shape& shape, const Shape& offset, const Shape& step) {
  const std::lock_guard serial(one_write_at_a_time());
  detail::check_not_remote(path);
  const auto name = detail::normalize_dataset_name(dataset);
  const auto where = detail::where(path, name);
  if (values.size() != element_count(shape)) {
    throw InvalidArgument(
        fmt::format("cannot write {} strings into {} as a part of shape {}", values.size(), where, to_string(shape)));
  }
  detail::FileChange change(path);
  auto handle = change.dataset(name);
  const auto described = detail::describe_dataset(handle.get(), where);
  if (described.dtype.kind() != DTypeKind::VarString) {
    throw InvalidArgument(
        fmt::format("cannot write strings into {}, which holds {}: write_strings writes "
                    "variable-length strings",
                    where, described.dtype.name()));
  }
  if (described.storage == detail::Storage::Virtual) {
    throw UnsupportedType(fmt::format("{} is a virtual dataset: h5tile does not write into its sources", where));
  }
  ArrayView part{.dtype = described.dtype, .shape = shape};
  if (described.shape.empty() && offset.empty() && shape.size() == 1 && shape[0] == 1) part.shape = {};
  const auto selection = checked_selection(described.shape, part, offset, step, where);
  // HDF5 copies each string into the file's global heap from a char* per element.
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const auto& v : values) {
    if (v.find('\0') != std::string::npos) {  // HDF5 would store the string up to it: a silent cut
      throw InvalidArgument(
          fmt::format("cannot write a string with an embedded NUL into {} (string {})", where, pointers.size()));
    }
    pointers.push_back(v.c_str());
  }
  detail::hdf5_write(handle.get(), described.memory_type.get(), selection.offset, part.shape, selection.step,
                     pointers.data());
  detail::flush_dataset(handle.get());
  change.finish();
}

}  // namespace h5tile
