#include "layout/open_dataset.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/checksum.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/remote_driver.hpp"
#include "hdf5/types.hpp"
#include "io/http/url.hpp"
#include "layout/boxes.hpp"
#include "layout/data_files.hpp"
#include "layout/file_writer.hpp"
#include "layout/virtual/early_open.hpp"
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

}  // namespace

OpenDataset::OpenDataset(const Location& location, const std::string& dataset, const OpenOptions& options,
                         FileHandle file)
    : location_(location), name_(normalize_dataset_name(dataset)), options_(options) {
  file_ = file ? std::move(file) : open_file(location_, options_.remote);
  dataset_ = open_guarded(file_.get(), name_, location_.path());
  auto described = describe_dataset(dataset_.get(), where(location_.path(), name_), options_.metadata_only);
  info_.dtype = described.dtype;
  info_.numpy_type = described.numpy_type;
  info_.shape = described.shape;
  info_.max_shape = described.max_shape;
  info_.layout = storage_name(described.storage);
  info_.chunk = described.chunk;
  info_.filters = described.filters;
  info_.charset = described.charset;
  info_.filter_values = described.filter_values;
  memory_type_ = std::move(described.memory_type);
  if (info_.dtype.kind() != DTypeKind::VarString) {
    info_.fill_value.resize(info_.dtype.size());
    fill_value(dataset_.get(), memory_type_.get(), info_.fill_value.data());
  }
  if (described.null_space) {
    info_.null_space = true;  // metadata only: there is nothing to read
    return;
  }
  const auto dcpl = creation_plist(dataset_.get());
  if (!options_.metadata_only && !location_.remote()) note_kept_file(location_.path(), dataset_.get(), dcpl.get());
  if (location_.remote()) {
    files_known_ = false;
    // HDF5 reads a remote file from its own object only: its driver refuses any other file
    // (hdf5/remote_driver.hpp). h5tile opens a virtual dataset's sources beside it itself.
    if (const auto names = external_storage_names(dcpl.get()); !names.empty()) {
      throw VirtualSourceError(
          fmt::format("{} keeps its data in HDF5 external storage ('{}'): h5tile does not read "
                      "external storage of a remote file",
                      where(location_.path(), name_), names.front()));
    }
    if (info_.layout == "virtual") {
      if (options_.metadata_only) {
        info_.virtual_sources = source_names(dcpl.get(), read_virtual_map(dcpl.get())).size();
        return;  // its sources' sizes are not looked up
      }
      open_remote_virtual(dcpl.get());  // its sources: objects beside it, nothing else
      return;
    }
  }
  if (!options_.metadata_only) {
    check_data_files(location_.path(), location_.path(), name_, dataset_.get(), dcpl.get(), options_.extfile_prefix,
                     options_.allow_external);
  }
  if (info_.layout == "virtual") {
    if (options_.metadata_only) {
      const auto names = source_names(dcpl.get(), read_virtual_map(dcpl.get()));
      info_.virtual_sources = names.size();
      info_.stored_bytes =
          stored_bytes_of(resolve_sources(location_.path(), names, options_.threads, options_.vds_prefix));
    } else {
      open_virtual(dcpl.get());
    }
    return;
  }
  info_.stored_bytes = storage_bytes(dataset_.get());
  auto self = std::make_unique<Source>();
  self->file = location_.path();
  self->dataset = name_;
  self->shape = info_.shape;
  self->chunk = info_.chunk;
  self->elem_size = info_.dtype.size();
  std::string why_hdf5;
  self->access = access_for({{}, open_guarded(file_.get(), name_, location_.path()), copy_type(memory_type_.get())},
                            info_.chunk, options_.raw_io, options_.direct_reads, location_.path(), name_, &why_hdf5);
  if (!info_.filters.empty()) {
    const bool ours = std::holds_alternative<FilteredChunks>(self->access);
    info_.decoder = ours ? "h5tile" : "hdf5";
    info_.decoder_reason = ours ? std::string() : why_hdf5;
  }
  sources_.push_back(std::move(self));
  mappings_.push_back({0, Box::whole(info_.shape), Box::whole(info_.shape)});
}

void OpenDataset::open_virtual(hid_t dcpl) {
  const auto entries = read_virtual_map(dcpl);
  const auto names = source_names(dcpl, entries);
  info_.virtual_sources = names.size();
  const auto resolved = resolve_sources(location_.path(), names, options_.threads, options_.vds_prefix);
  info_.stored_bytes = stored_bytes_of(resolved);
  if (!entries) {
    open_virtual_through_hdf5(dcpl, names, resolved);
    return;
  }
  try {
    map_virtual(*entries, resolved);
  } catch (const ReshapedMapping&) {
    // A mapping between boxes of one count in two shapes: HDF5 reads the dataset (the sources
    // were checked as the mappings were made, up to this one; the rest are checked there).
    sources_.clear();
    mappings_.clear();
    open_virtual_through_hdf5(dcpl, names, resolved);
  }
}

void OpenDataset::open_virtual_through_hdf5(hid_t dcpl, const std::vector<std::string>& names,
                                            const std::vector<ResolvedSource>& resolved) {
  {
    files_known_ = false;  // HDF5 opens the sources by name as it reads
    // Not box-to-box: let HDF5 read it, but first make sure the sources it names exist,
    // since HDF5 silently returns fill values for missing ones ("%b" names expand per block).
    std::vector<bool> expands;
    (void)virtual_file_names(dcpl, &expands);
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto& file = resolved[i].file;
      check_inside(file, names[i], resolved[i].link);
      if (!expands[i] && !fs::exists(file)) {
        throw VirtualSourceError(
            fmt::format("{}: source file '{}' does not exist", where(location_.path(), name_), file.string()));
      }
      // HDF5 opens these itself, by path, as it reads.
      if (!expands[i]) check_regular_file(file, fmt::format("{} maps its source file", where(location_.path(), name_)));
    }
    auto self = std::make_unique<Source>();
    self->file = location_.path();
    self->dataset = name_;
    self->shape = info_.shape;
    self->elem_size = info_.dtype.size();
    self->access = ThroughHdf5{{}, open_guarded(file_.get(), name_, location_.path()), copy_type(memory_type_.get())};
    sources_.push_back(std::move(self));
    mappings_.push_back({0, Box::whole(info_.shape), Box::whole(info_.shape)});
  }
}

void OpenDataset::map_virtual(const std::vector<VirtualEntry>& all, const std::vector<ResolvedSource>& resolved) {
  const auto* entries = &all;
  // Tiles h5tile wrote are listed in the tile table with their raw offset, file size and
  // identity: a tile whose file is still the one written (checked here and again at each read)
  // is read with pread, without opening it with HDF5. Anything else (a missing, rewritten or
  // foreign source, a table from before the identity) is opened with HDF5, which checks it.
  const auto table = read_tile_table(dataset_.get(), info_.shape.size());
  const bool has_table = table.size() == entries->size();
  auto checksum_of = [&](std::size_t i) { return has_table ? table[i].checksum : std::nullopt; };
  for (std::size_t i = 0; i < entries->size(); ++i) {
    check_inside(resolved[i].file, (*entries)[i].file, resolved[i].link);
  }
  std::vector<char> by_table(entries->size(), 0);
  std::vector<std::shared_ptr<const PosixFile>> held(entries->size());  // the first hold_tiles tiles
  if (options_.raw_io && has_table) {
    const auto es = info_.dtype.size();
    const auto workers = static_cast<unsigned>(std::min<std::size_t>(options_.threads, 1 + entries->size() / 64));
    parallel_for(entries->size(), workers, [&](std::size_t i) {
      const auto& entry = (*entries)[i];
      const auto& row = table[i];
      if (!row.identity || entry.src || !names_tile_dataset(entry.dataset) || entry.dst.count() == 0 ||
          !resolved[i].found || resolved[i].link || resolved[i].bytes != row.file_size) {
        return;
      }
      auto checked =
          hold_tile(resolved[i].file, {row.raw_offset, row.file_size, *row.identity, false, options_.direct_reads},
                    entry.dst.count() * es);
      by_table[i] = checked != nullptr;
      if (i < options_.hold_tiles) held[i] = std::move(checked);
    });
  }
  std::map<std::pair<std::string, std::string>, std::size_t> seen;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& entry = (*entries)[i];
    const auto& file = resolved[i].file;
    if (by_table[i] != 0) {
      auto source = std::make_unique<Source>();
      source->file = file;
      source->dataset = entry.dataset;
      source->shape = entry.dst.extent;
      source->elem_size = info_.dtype.size();
      source->access = TableTile{table[i].raw_offset,   table[i].file_size, *table[i].identity, false,
                                 options_.direct_reads, std::move(held[i])};
      sources_.push_back(std::move(source));
      mappings_.push_back(
          {sources_.size() - 1, Box::whole(entry.dst.extent), entry.dst, checksum_of(i), table[i].raw_offset});
      continue;
    }
    auto key = std::make_pair(file.lexically_normal().string(), entry.dataset);
    std::size_t index = 0;
    try {
      if (auto it = seen.find(key); it != seen.end()) {
        index = it->second;
      } else {
        index = add_source(file, entry.dataset, memory_type_.get());
        seen.emplace(std::move(key), index);
      }
      map_source(index, entry.src, entry.dst, checksum_of(i), has_table ? table[i].raw_offset : 0);
    } catch (const std::exception& e) {
      throw VirtualSourceError(fmt::format("{}: source '{}' (dataset '{}', mapped to {}) is unusable: {}",
                                           where(location_.path(), name_), file.string(), entry.dataset,
                                           to_string(entry.dst), e.what()));
    }
  }
  finish_mappings();
}

void OpenDataset::map_source(std::size_t index, const std::optional<Box>& src_given, const Box& dst,
                             std::optional<std::uint64_t> checksum, std::uint64_t raw_offset) {
  const auto& source = *sources_[index];
  const Box src = src_given.value_or(Box::whole(source.shape));
  if (src.fits(source.shape) && src.extent != dst.extent && same_but_unit_axes(src.extent, dst.extent)) {
    throw ReshapedMapping{};  // h5py's 1-D sources stacked into a 2-D dataset: HDF5 reads it (open_virtual)
  }
  if (!src.fits(source.shape) || src.extent != dst.extent) {
    throw VirtualSourceError(fmt::format("it has shape {} but the mapping reads {} of it into {}",
                                         to_string(source.shape), to_string(src), to_string(dst)));
  }
  if (dst.count() > 0) mappings_.push_back({index, src, dst, checksum, raw_offset});
}

void OpenDataset::finish_mappings() {
  std::vector<Box> boxes;
  boxes.reserve(mappings_.size());
  for (const auto& m : mappings_) boxes.push_back(m.dst);
  later_overlaps_ = later_overlaps(boxes);
  overlapping_ = std::any_of(later_overlaps_.begin(), later_overlaps_.end(), [](const auto& l) { return !l.empty(); });
}

OpenDataset::~OpenDataset() {
  // Thousands of sources (a virtual dataset's tiles) take milliseconds to free on one thread.
  if (sources_.size() >= 1024) {
    const auto workers = static_cast<unsigned>(std::min<std::size_t>(options_.threads, sources_.size() / 512));
    parallel_ranges(sources_.size(), workers, [&](std::size_t begin, std::size_t end) {
      for (auto i = begin; i < end; ++i) sources_[i].reset();
    });
  }
}

void OpenDataset::check_inside(const fs::path& source, const std::string& stored_name, bool link) {
  if (options_.allow_external || stored_name == ".") {
    return;
  }
  if (!folder_check_) {
    folder_check_ = std::make_unique<FolderCheck>(location_.path());
  }
  if (!folder_check_->inside(source, link)) {
    std::error_code ec;
    throw VirtualSourceError(fmt::format(
        "{}: source '{}' (resolved to '{}') is outside the folder of the file; reading it needs "
        "allow_external_sources (h5tile refuses it by default)",
        where(location_.path(), name_), stored_name, fs::weakly_canonical(fs::absolute(source), ec).string()));
  }
}

namespace {

// The remote object that `source` reads (the byte source of h5tile's HDF5 driver under it), or
// nullptr for a local one.
std::shared_ptr<const ByteSource> remote_object_of(const Source& source) {
  const ThroughHdf5* hdf5 = std::get_if<ThroughHdf5>(&source.access);
  std::shared_ptr<const ByteSource> file;
  if (const auto* raw = std::get_if<RawBytes>(&source.access)) file = raw->file;
  if (const auto* chunks = std::get_if<RawChunks>(&source.access)) file = chunks->file;
  if (const auto* filtered = std::get_if<FilteredChunks>(&source.access)) file = filtered->file;
  if (file) return file->remote() ? file : nullptr;
  return hdf5 != nullptr ? remote_source_holding(hdf5->dataset.get()) : nullptr;
}

}  // namespace

bool OpenDataset::pinned_remote() const {
  if (!location_.remote() || sources_.empty()) return false;
  const auto file = remote_file();
  return file && file->pinned() && std::all_of(sources_.begin(), sources_.end(), [](const auto& source) {
           const auto object = source ? remote_object_of(*source) : nullptr;
           return object && object->pinned();
         });
}

std::shared_ptr<const ByteSource> OpenDataset::remote_file() const { return remote_source_holding(dataset_.get()); }

void OpenDataset::drop_remote_blocks() const {
  drop_cached_blocks(dataset_.get());
  for (const auto& source : sources_) {
    if (!source) continue;
    const ThroughHdf5* hdf5 = std::get_if<ThroughHdf5>(&source->access);
    if (const auto* chunks = std::get_if<RawChunks>(&source->access)) hdf5 = &chunks->hdf5;
    if (const auto* filtered = std::get_if<FilteredChunks>(&source->access)) hdf5 = &filtered->hdf5;
    if (hdf5 != nullptr && hdf5->dataset) drop_cached_blocks(hdf5->dataset.get());
  }
}

void OpenDataset::check_checksums(const Box& region, unsigned threads) const {
  std::vector<const Mapping*> touched;
  for (const auto& m : mappings_) {
    if (m.checksum && (region.rank() == 0 || intersect(m.dst, region))) touched.push_back(&m);
  }
  parallel_for(touched.size(), threads, [&](std::size_t i) {
    const auto& m = *touched[i];
    const auto& file = sources_[m.source]->file;
    const auto* tile = std::get_if<TableTile>(&sources_[m.source]->access);
    // A tile held open is checked in the file its reads read, and so is a remote object.
    const auto object = remote_object_of(*sources_[m.source]);
    std::optional<PosixFile> opened;
    const ByteSource& tile_file = object ? *object
                                  : tile != nullptr && tile->held
                                      ? *tile->held
                                      : opened.emplace(file, O_RDONLY | O_NONBLOCK, options_.direct_reads);
    if (checksum_region(tile_file, m.raw_offset, m.dst.count() * info_.dtype.size()) != *m.checksum) {
      throw VirtualSourceError(
          fmt::format("{}: tile '{}' (mapped to {}) fails its checksum: its bytes changed since "
                      "they were written",
                      where(location_.path(), name_), file.string(), to_string(m.dst)));
    }
  });
}

void OpenDataset::walk_chunk_indexes() const {
  for (const auto& source : sources_) {
    const ThroughHdf5* hdf5 = std::get_if<ThroughHdf5>(&source->access);
    if (const auto* chunks = std::get_if<RawChunks>(&source->access)) hdf5 = &chunks->hdf5;
    if (const auto* filtered = std::get_if<FilteredChunks>(&source->access)) hdf5 = &filtered->hdf5;
    if (hdf5 != nullptr && !source->chunk.empty()) {
      (void)count_chunks(hdf5->dataset.get());
    }
  }
}

DatasetHandle OpenDataset::open_guarded(hid_t file, const std::string& name, const fs::path& where_from) const {
  const GuardedLinks links(external_link_check(location_, options_.allow_external, options_.ext_prefix));
  return open_dataset(file, name, where_from, links);
}

bool OpenDataset::hdf5_decodes() const {
  return std::any_of(sources_.begin(), sources_.end(), [](const auto& source) {
    const auto* hdf5 = std::get_if<ThroughHdf5>(&source->access);
    return hdf5 != nullptr && detail::hdf5_decodes(hdf5->dataset.get());
  });
}

std::size_t OpenDataset::add_source(const fs::path& file, const std::string& dataset, hid_t memory_type) {
  auto source = std::make_unique<Source>();
  source->file = file;
  source->dataset = dataset;
  ThroughHdf5 hdf5{open_local_file(file), {}, copy_type(memory_type)};
  hdf5.dataset = open_guarded(hdf5.file.get(), normalize_dataset_name(dataset), file);
  // Rejects unsupported source types; the source converts to the virtual dataset's type.
  const auto described = describe_dataset(hdf5.dataset.get(), where(file, dataset));
  source->shape = described.shape;
  source->chunk = described.chunk;
  source->elem_size = info_.dtype.size();
  const auto source_dcpl = creation_plist(hdf5.dataset.get());
  check_data_files(location_.path(), file, dataset, hdf5.dataset.get(), source_dcpl.get(), options_.extfile_prefix,
                   options_.allow_external);
  note_kept_file(file, hdf5.dataset.get(), source_dcpl.get());
  source->access = access_for(std::move(hdf5), source->chunk, options_.raw_io, options_.direct_reads, file, dataset);
  sources_.push_back(std::move(source));
  return sources_.size() - 1;
}

void OpenDataset::note_kept_file(const fs::path& file, hid_t dataset, hid_t dcpl) {
  if (file_name_of(dataset) != file.native() || !external_storage_names(dcpl).empty()) {
    files_known_ = false;  // another file, or raw data files beside it, that a stat of `file` does not cover
    return;
  }
  kept_files_.push_back(file);
}

std::optional<std::vector<fs::path>> OpenDataset::kept_files() const {
  if (!files_known_ || options_.metadata_only || options_.hold_tiles > 0) return std::nullopt;
  return kept_files_;
}

namespace {

// `box` cut along `axis` at the boundaries of `chunk` into pieces of as many chunk layers as fit
// `task_bytes` (one at least).
std::vector<Box> chunk_aligned_pieces(const Box& box, const Shape& chunk, std::size_t axis, std::size_t es,
                                      std::uint64_t task_bytes) {
  const auto step = chunk[axis];
  std::uint64_t layer_bytes = step * es;  // one layer of chunks along `axis`, as read
  for (std::size_t a = 0; a < box.rank(); ++a) {
    if (a != axis) layer_bytes *= box.extent[a];
  }
  const auto per_piece = std::max<std::uint64_t>(1, task_bytes / std::max<std::uint64_t>(layer_bytes, 1));
  std::vector<Box> pieces;
  const auto end = box.offset[axis] + box.extent[axis];
  for (auto lo = box.offset[axis]; lo < end;) {
    const auto hi = std::min((lo / step + per_piece) * step, end);
    Box piece = box;
    piece.offset[axis] = lo;
    piece.extent[axis] = hi - lo;
    pieces.push_back(std::move(piece));
    lo = hi;
  }
  return pieces;
}

}  // namespace

std::vector<ReadTask> OpenDataset::plan(const Box& region, std::size_t task_bytes, bool bounded) const {
  std::vector<ReadTask> tasks;
  const auto es = info_.dtype.size();
  // The parts of the region each mapping supplies: where mappings overlap, only what no later
  // mapping maps too (HDF5 reads them in order: the last one's value stands).
  std::vector<std::pair<const Mapping*, Box>> parts;
  for (std::size_t k = 0; k < mappings_.size(); ++k) {
    const auto& m = mappings_[k];
    const auto part = region.rank() == 0 ? std::optional<Box>(region) : intersect(m.dst, region);
    if (!part) {
      continue;
    }
    if (!overlapping_ || region.rank() == 0) {
      parts.emplace_back(&m, *part);
      continue;
    }
    std::vector<Box> left{*part};
    for (const auto later : later_overlaps_[k]) {
      if (left.empty()) break;
      std::vector<Box> rest;
      for (const auto& box : left) {
        for (auto& piece : subtract(box, mappings_[later].dst)) rest.push_back(std::move(piece));
      }
      left = std::move(rest);
    }
    for (auto& box : left) parts.emplace_back(&m, std::move(box));
  }
  for (const auto& [mapping, part] : parts) {
    const auto& m = *mapping;
    // Source box of the part, and the part relative to the region.
    Box src = part;
    Box dst = part;
    for (std::size_t a = 0; a < region.rank(); ++a) {
      src.offset[a] = m.src.offset[a] + (part.offset[a] - m.dst.offset[a]);
      dst.offset[a] = part.offset[a] - region.offset[a];
    }
    const auto& source = *sources_[m.source];
    std::vector<Box> pieces;
    if (!source.chunk.empty() && src.rank() > 0) {
      // Chunked: slabs of whole chunk rows along the first axis, so no chunk is read twice, as
      // many rows to a slab as fit the task size (one row at least); a row of chunks larger than
      // that is cut between chunk columns along the second axis (a box of 8 x 8 chunks makes 16
      // tasks for 16 threads, not 8: each decodes its own chunks).
      for (auto& slab : chunk_aligned_pieces(src, source.chunk, 0, es, task_bytes)) {
        if (bounded) {
          for (auto& bounded_piece : split_rowmajor(slab, es, task_bytes)) pieces.push_back(std::move(bounded_piece));
        } else if (slab.rank() > 1 && byte_count(slab.extent, es) > task_bytes) {
          for (auto& piece : chunk_aligned_pieces(slab, source.chunk, 1, es, task_bytes))
            pieces.push_back(std::move(piece));
        } else {
          pieces.push_back(std::move(slab));
        }
      }
    } else {
      pieces = split_rowmajor(src, es, task_bytes);
    }
    for (auto& piece : pieces) {
      Box piece_dst = piece;
      for (std::size_t a = 0; a < piece.rank(); ++a) {
        piece_dst.offset[a] = dst.offset[a] + (piece.offset[a] - src.offset[a]);
      }
      tasks.push_back({m.source, std::move(piece), std::move(piece_dst)});
    }
  }
  return tasks;
}

void OpenDataset::fill(std::byte* out, std::uint64_t count) const {
  std::vector<std::byte> value(info_.dtype.size());
  fill_value(dataset_.get(), memory_type_.get(), value.data());
  for (std::uint64_t i = 0; i < count; ++i) {
    std::memcpy(out + i * value.size(), value.data(), value.size());
  }
}

void OpenDataset::check_fits(const Box& region) const {
  if (!region.fits(info_.shape)) {
    throw InvalidArgument(fmt::format("region {} does not fit {} of shape {}", to_string(region),
                                      where(location_.path(), name_), to_string(info_.shape)));
  }
}

void OpenDataset::require_fixed_size() const {
  if (info_.dtype.kind() == DTypeKind::VarString) {
    throw UnsupportedType(
        fmt::format("{} holds variable-length strings ({}), which read_strings() reads (in Python, "
                    "from_file and read_box return them as object arrays of bytes)",
                    where(location_.path(), name_), info_.charset));
  }
}

std::vector<std::string> OpenDataset::read_strings(const Box& region) const {
  if (info_.dtype.kind() != DTypeKind::VarString) {
    throw UnsupportedType(fmt::format("{} holds {}, not variable-length strings: read it with from_file or read_box",
                                      where(location_.path(), name_), info_.dtype.name()));
  }
  check_fits(region);
  return hdf5_read_strings(dataset_.get(), memory_type_.get(), region);
}

Array OpenDataset::read(const Box& region, unsigned threads, int device, Progress* progress) const {
  require_fixed_size();
  check_fits(region);
  Array out(info_.dtype, region.extent, device);
  read_into(region, out.data(), device, threads, progress);
  return out;
}

void OpenDataset::read_into(const Box& region, std::byte* out, int device, unsigned threads, Progress* progress) const {
  require_fixed_size();
  check_fits(region);
  if (options_.verify_checksums) {
    check_checksums(region, threads);
  }
  if (device >= 0) {
    read_to_device(region, out, device, threads, progress);
    return;
  }
  // Tasks of the task size, smaller where that would leave threads idle (a 64 MiB block
  // of from_file_batched on 16 threads: 4 MiB each), never under 1 MiB.
  // Data outside the page cache may be read as one stream instead (H5TILE_COLD_READS).
  const std::uint64_t task_size = options_.task_size;
  const auto shape = shape_read(
      region, threads,
      plan(region, std::clamp<std::uint64_t>(byte_count(region.extent, info_.dtype.size()) / std::max(threads, 1U),
                                             std::min<std::uint64_t>(task_size, 1U << 20), task_size)));
  const auto& tasks = shape.tasks;
  std::uint64_t covered = 0;
  for (const auto& task : tasks) {
    covered += task.dst.count();
  }
  if (covered < region.count()) {
    fill(out, region.count());  // a virtual dataset with regions no source maps (never one from
                                // from_tile_index, whose tiles cover it exactly once)
  }
  parallel_for(tasks.size(), shape.threads, [&](std::size_t i) {
    const auto& task = tasks[i];
    sources_[task.source]->read(task.src, out, region.extent, task.dst);
    if (progress != nullptr) progress->add(task.dst.count() * info_.dtype.size());
  });
}

}  // namespace h5tile::detail
