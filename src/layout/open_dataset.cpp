#include "layout/open_dataset.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/settings.hpp>

#include "engine/checksum.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"
#include "layout/file_writer.hpp"
#include "layout/virtual/early_open.hpp"
#include "layout/virtual/tile_index.hpp"
#include "layout/virtual/virtual_map.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

std::optional<Box> intersect(const Box& a, const Box& b) {
  Box out;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    const auto lo = std::max(a.offset[i], b.offset[i]);
    const auto hi = std::min(a.offset[i] + a.extent[i], b.offset[i] + b.extent[i]);
    if (hi <= lo) {
      return std::nullopt;
    }
    out.offset.push_back(lo);
    out.extent.push_back(hi - lo);
  }
  return out;
}

std::vector<Box> chunks_touching(const Box& box, const Shape& chunk) {
  const auto rank = box.rank();
  Shape first(rank);
  Shape count(rank);
  std::uint64_t total = 1;
  for (std::size_t a = 0; a < rank; ++a) {
    first[a] = box.offset[a] / chunk[a];
    count[a] = (box.offset[a] + box.extent[a] + chunk[a] - 1) / chunk[a] - first[a];
    total *= count[a];
  }
  std::vector<Box> chunks;
  chunks.reserve(total);
  for (std::uint64_t i = 0; i < total; ++i) {
    Box c{Shape(rank), chunk};
    for (std::size_t a = rank, rest = i; a-- > 0; rest /= count[a]) {
      c.offset[a] = (first[a] + rest % count[a]) * chunk[a];
    }
    chunks.push_back(std::move(c));
  }
  return chunks;
}

namespace {

// Whether `file` is the tile file that `check` describes, with `data_bytes` at `offset`: a plain
// file of the size and identity (tile_identity) it had when it was written.
bool is_written_tile(const PosixFile& file, const Source::TileCheck& check, std::uint64_t offset,
                     std::uint64_t data_bytes) {
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) != check.file_size) {
    return false;
  }
  try {
    return tile_identity(file, offset, data_bytes, check.file_size) == check.identity;
  } catch (const IoError&) {
    return false;  // shorter than fstat said: changing under us
  }
}

// Opens a tile file read by its tile table (no symbolic link, no waiting on a FIFO), or nullopt.
std::optional<PosixFile> open_tile(const fs::path& file) {
  try {
    return PosixFile(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (const IoError&) {
    return std::nullopt;  // missing, a link, unreadable
  }
}

// The tile file `file` for a read, checked to be the file that was written (Source::TileCheck).
PosixFile open_checked_tile(const fs::path& file, const Source::TileCheck& check, const RawDataset& raw) {
  auto tile = open_tile(file);
  if (tile && is_written_tile(*tile, check, raw.base, element_count(raw.shape) * raw.elem_size)) {
    return std::move(*tile);
  }
  if (check.index_only) {
    throw IndexMismatch(fmt::format("tile '{}' is not the file the tile index names", file.string()));
  }
  throw VirtualSourceError(
      fmt::format("tile '{}' changed while being read (a newer write of the file, or another "
                  "program, replaced it)",
                  file.string()));
}

}  // namespace

void Source::read(const Box& src, std::byte* out, const Shape& out_shape, const Box& dst) const {
  if (raw) {
    const auto strides = rowmajor_strides(out_shape, raw->elem_size);
    const StridedBytes whole{out, strides};
    if (tile) {  // read by its tile table: open it for this read only, and check it first
      const PosixFile tile_file = open_checked_tile(file, *tile, *raw);
      RawDataset opened = *raw;
      opened.file = &tile_file;
      read_raw(opened, src, sub_memory(whole, Box::whole(out_shape), dst));
      return;
    }
    read_raw(*raw, src, sub_memory(whole, Box::whole(out_shape), dst));
    return;
  }
  if (raw_chunks && src.rank() > 0) {
    const StridedBytes whole{out, rowmajor_strides(out_shape, elem_size)};
    if (read_chunks(src, sub_memory(whole, Box::whole(out_shape), dst))) {
      return;
    }
  }
  hdf5_read(handle.get(), memory_type.get(), src, out, out_shape, dst);
}

bool Source::read_chunks(const Box& src, const StridedBytes& dst_memory) const {
  const auto rank = src.rank();
  const auto es = elem_size;
  // The chunks the box touches, and their addresses (all allocated, or read through HDF5).
  std::vector<Shape> origins;
  for (auto& c : chunks_touching(src, chunk)) {
    origins.push_back(std::move(c.offset));
  }
  const auto addresses = locate_chunks(handle.get(), origins);
  std::vector<std::pair<Shape, std::uint64_t>> chunks;
  for (std::size_t i = 0; i < origins.size(); ++i) {
    if (!addresses[i]) {
      return false;
    }
    chunks.emplace_back(std::move(origins[i]), *addresses[i]);
  }
  for (const auto& [origin, address] : chunks) {
    const auto part = intersect(src, Box{origin, chunk});
    if (!part) continue;
    Box in_chunk = *part;
    for (std::size_t a = 0; a < rank; ++a) in_chunk.offset[a] -= origin[a];
    const RawDataset stored{&posix, address, chunk, es};  // chunks are stored whole, row-major
    read_raw(stored, in_chunk, sub_memory(dst_memory, src, *part));
  }
  return true;
}

namespace {

// The source file name of every mapping, from `entries` where read_virtual_map gave them.
std::vector<std::string> source_names(hid_t dcpl, const std::optional<std::vector<VirtualEntry>>& entries) {
  if (!entries) return virtual_file_names(dcpl);
  std::vector<std::string> names;
  names.reserve(entries->size());
  for (const auto& entry : *entries) names.push_back(entry.file);
  return names;
}

std::string filter_name(H5Z_filter_t id) {
  switch (id) {
    case H5Z_FILTER_DEFLATE: return "deflate";
    case H5Z_FILTER_SHUFFLE: return "shuffle";
    case H5Z_FILTER_FLETCHER32: return "fletcher32";
    case H5Z_FILTER_SZIP: return "szip";
    case H5Z_FILTER_NBIT: return "nbit";
    case H5Z_FILTER_SCALEOFFSET: return "scaleoffset";
    default: return fmt::format("filter {}", id);
  }
}

void describe_storage(hid_t dcpl, DatasetInfo& info, Shape& chunk) {
  const Hdf5Lock lock;
  switch (H5Pget_layout(dcpl)) {
    case H5D_CONTIGUOUS: info.layout = "contiguous"; break;
    case H5D_COMPACT: info.layout = "compact"; break;
    case H5D_VIRTUAL: info.layout = "virtual"; break;
    case H5D_CHUNKED: {
      info.layout = "chunked";
      std::vector<hsize_t> dims(info.shape.size());
      check(H5Pget_chunk(dcpl, static_cast<int>(dims.size()), dims.data()), "H5Pget_chunk");
      chunk.assign(dims.begin(), dims.end());
      info.chunk = chunk;
      const int n = H5Pget_nfilters(dcpl);
      for (int i = 0; i < n; ++i) {
        unsigned flags = 0;
        std::size_t nvalues = 0;
        unsigned config = 0;
        const auto id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &nvalues, nullptr, 0, nullptr, &config);
        info.filters.push_back(filter_name(id));
      }
      break;
    }
    default: info.layout = "unknown"; break;
  }
}

}  // namespace

namespace {

// Turns on the pread paths a source's storage allows (unless `raw_io` is off).
void enable_raw(Source& source, hid_t file, bool raw_io) {
  {
    const Hdf5Lock lock;
    source.elem_size = H5Tget_size(source.memory_type.get());
  }
  if (!raw_io) {
    return;
  }
  const auto offset = raw_offset(file, source.handle.get(), source.memory_type.get());
  const bool chunks = !offset && !source.chunk.empty() && raw_chunks(source.handle.get(), source.memory_type.get());
  if (!offset && !chunks) {
    return;
  }
  // The offsets are in the file HDF5 opened for the dataset, which an external link (or a
  // virtual source found elsewhere) makes another file than `source.file`: read that one.
  auto opened = file_holding(source.handle.get());
  if (!opened) {
    return;  // not a POSIX file (another HDF5 driver): HDF5 reads it
  }
  source.posix = PosixFile::adopt(opened->fd, opened->name);
  if (offset) {
    source.raw = RawDataset{&source.posix, *offset, source.shape, source.elem_size};
  } else {
    source.raw_chunks = true;
  }
}

}  // namespace

OpenDataset::OpenDataset(const fs::path& path, const std::string& dataset, const OpenOptions& options)
    : path_(path), name_(normalize_dataset_name(dataset)), options_(options) {
  file_ = open_file(path_);
  dataset_ = open_dataset(file_.get(), name_, path_);
  const Hdf5Lock lock;
  const TypeHandle file_type(check(H5Dget_type(dataset_.get()), "H5Dget_type"));
  info_.dtype = dtype_of_type(file_type.get(), where(path_, name_));
  memory_type_ = memory_type_for(file_type.get(), info_.dtype);
  const SpaceHandle space(check(H5Dget_space(dataset_.get()), "H5Dget_space"));
  if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) {
    throw UnsupportedType(fmt::format("{} has a null dataspace (no elements, no shape)", where(path_, name_)));
  }
  info_.shape = shape_of(space.get());
  const PlistHandle dcpl(check(H5Dget_create_plist(dataset_.get()), "H5Dget_create_plist"));
  Shape chunk;
  describe_storage(dcpl.get(), info_, chunk);
  if (info_.layout == "virtual") {
    if (options_.metadata_only) {
      const auto names = source_names(dcpl.get(), read_virtual_map(dcpl.get()));
      info_.virtual_sources = names.size();
      info_.stored_bytes = stored_bytes_of(resolve_sources(path_, names, options_.threads));
    } else {
      open_virtual(dcpl.get());
    }
    return;
  }
  info_.stored_bytes = H5Dget_storage_size(dataset_.get());
  auto self = std::make_unique<Source>();
  self->file = path_;
  self->dataset = name_;
  self->shape = info_.shape;
  self->chunk = chunk;
  self->memory_type = memory_type_for(file_type.get(), info_.dtype);
  self->handle = DatasetHandle(check(H5Dopen2(file_.get(), name_.c_str(), H5P_DEFAULT), "H5Dopen2"));
  enable_raw(*self, file_.get(), options_.raw_io);
  sources_.push_back(std::move(self));
  mappings_.push_back({0, Box::whole(info_.shape), Box::whole(info_.shape)});
}

void OpenDataset::open_virtual(hid_t dcpl) {
  const auto entries = read_virtual_map(dcpl);
  const auto names = source_names(dcpl, entries);
  info_.virtual_sources = names.size();
  const auto resolved = resolve_sources(path_, names, options_.threads);
  info_.stored_bytes = stored_bytes_of(resolved);
  if (!entries) {
    // Not box-to-box: let HDF5 read it, but first make sure the sources it names exist,
    // since HDF5 silently returns fill values for missing ones ("%b" names expand per block).
    std::vector<bool> expands;
    (void)virtual_file_names(dcpl, &expands);
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto& file = resolved[i].file;
      check_inside(file, names[i], resolved[i].link);
      if (!expands[i] && !fs::exists(file)) {
        throw VirtualSourceError(
            fmt::format("{}: source file '{}' does not exist", where(path_, name_), file.string()));
      }
    }
    auto self = std::make_unique<Source>();
    self->file = path_;
    self->dataset = name_;
    self->shape = info_.shape;
    const TypeHandle file_type(check(H5Dget_type(dataset_.get()), "H5Dget_type"));
    self->memory_type = memory_type_for(file_type.get(), info_.dtype);
    self->handle = DatasetHandle(check(H5Dopen2(file_.get(), name_.c_str(), H5P_DEFAULT), "H5Dopen2"));
    sources_.push_back(std::move(self));
    mappings_.push_back({0, Box::whole(info_.shape), Box::whole(info_.shape)});
    return;
  }
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
      const auto tile = open_tile(resolved[i].file);
      by_table[i] =
          tile && is_written_tile(*tile, {row.file_size, *row.identity, false}, row.raw_offset, entry.dst.count() * es);
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
      source->raw = RawDataset{nullptr, table[i].raw_offset, entry.dst.extent, info_.dtype.size()};
      source->tile = Source::TileCheck{table[i].file_size, *table[i].identity, false};
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
      const auto& source = *sources_[index];
      const Box src = entry.src.value_or(Box::whole(source.shape));
      if (!src.fits(source.shape) || src.extent != entry.dst.extent) {
        throw VirtualSourceError(fmt::format("it has shape {} but the mapping reads {} of it into {}",
                                             to_string(source.shape), to_string(src), to_string(entry.dst)));
      }
      if (entry.dst.count() > 0) {
        mappings_.push_back({index, src, entry.dst, checksum_of(i), has_table ? table[i].raw_offset : 0});
      }
    } catch (const std::exception& e) {
      throw VirtualSourceError(fmt::format("{}: source '{}' (dataset '{}', mapped to {}) is unusable: {}",
                                           where(path_, name_), file.string(), entry.dataset, to_string(entry.dst),
                                           e.what()));
    }
  }
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
    folder_check_ = std::make_unique<FolderCheck>(path_);
  }
  if (!folder_check_->inside(source, link)) {
    std::error_code ec;
    throw VirtualSourceError(
        fmt::format("{}: source '{}' (resolved to '{}') is outside the folder of the file; reading it needs "
                    "allow_external_sources (h5tile refuses it by default)",
                    where(path_, name_), stored_name, fs::weakly_canonical(fs::absolute(source), ec).string()));
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
    if (checksum_region(PosixFile(file, O_RDONLY), m.raw_offset, m.dst.count() * info_.dtype.size()) != *m.checksum) {
      throw VirtualSourceError(
          fmt::format("{}: tile '{}' (mapped to {}) fails its checksum: its bytes changed since "
                      "they were written",
                      where(path_, name_), file.string(), to_string(m.dst)));
    }
  });
}

std::size_t OpenDataset::add_source(const fs::path& file, const std::string& dataset, hid_t memory_type) {
  auto source = std::make_unique<Source>();
  source->file = file;
  source->dataset = dataset;
  source->file_handle = open_file(file);
  source->handle = open_dataset(source->file_handle.get(), normalize_dataset_name(dataset), file);
  const Hdf5Lock lock;
  const TypeHandle type(check(H5Dget_type(source->handle.get()), "H5Dget_type"));
  (void)dtype_of_type(type.get(), where(file, dataset));  // rejects unsupported source types
  const SpaceHandle space(check(H5Dget_space(source->handle.get()), "H5Dget_space"));
  source->shape = shape_of(space.get());
  source->memory_type = TypeHandle(check(H5Tcopy(memory_type), "H5Tcopy"));
  const PlistHandle dcpl(check(H5Dget_create_plist(source->handle.get()), "H5Dget_create_plist"));
  if (H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
    std::vector<hsize_t> dims(source->shape.size());
    check(H5Pget_chunk(dcpl.get(), static_cast<int>(dims.size()), dims.data()), "H5Pget_chunk");
    source->chunk.assign(dims.begin(), dims.end());
  }
  enable_raw(*source, source->file_handle.get(), options_.raw_io);
  sources_.push_back(std::move(source));
  return sources_.size() - 1;
}

std::vector<ReadTask> OpenDataset::plan(const Box& region, std::size_t task_bytes, bool bounded) const {
  std::vector<ReadTask> tasks;
  const auto es = info_.dtype.size();
  for (const auto& m : mappings_) {
    const auto part = region.rank() == 0 ? std::optional<Box>(region) : intersect(m.dst, region);
    if (!part) {
      continue;
    }
    // Source box of the part, and the part relative to the region.
    Box src = *part;
    Box dst = *part;
    for (std::size_t a = 0; a < region.rank(); ++a) {
      src.offset[a] = m.src.offset[a] + (part->offset[a] - m.dst.offset[a]);
      dst.offset[a] = part->offset[a] - region.offset[a];
    }
    const auto& source = *sources_[m.source];
    std::vector<Box> pieces;
    if (!source.chunk.empty() && src.rank() > 0) {
      // Chunked: slabs of whole chunk rows along the first axis, so no chunk is read twice.
      const auto rows = source.chunk[0];
      for (auto lo = src.offset[0]; lo < src.offset[0] + src.extent[0];) {
        const auto hi = std::min((lo / rows + 1) * rows, src.offset[0] + src.extent[0]);
        Box piece = src;
        piece.offset[0] = lo;
        piece.extent[0] = hi - lo;
        if (bounded) {
          for (auto& bounded_piece : split_rowmajor(piece, es, task_bytes)) pieces.push_back(std::move(bounded_piece));
        } else {
          pieces.push_back(std::move(piece));
        }
        lo = hi;
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
  {
    const Hdf5Lock lock;
    const PlistHandle dcpl(check(H5Dget_create_plist(dataset_.get()), "H5Dget_create_plist"));
    check(H5Pget_fill_value(dcpl.get(), memory_type_.get(), value.data()), "H5Pget_fill_value");
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    std::memcpy(out + i * value.size(), value.data(), value.size());
  }
}

void OpenDataset::check_fits(const Box& region) const {
  if (!region.fits(info_.shape)) {
    throw InvalidArgument(fmt::format("region {} does not fit {} of shape {}", to_string(region), where(path_, name_),
                                      to_string(info_.shape)));
  }
}

Array OpenDataset::read(const Box& region, unsigned threads, int device, Progress* progress) const {
  check_fits(region);
  Array out(info_.dtype, region.extent, device);
  read_into(region, out.data(), device, threads, progress);
  return out;
}

void OpenDataset::read_into(const Box& region, std::byte* out, int device, unsigned threads, Progress* progress) const {
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
  const std::uint64_t task_size = options_.task_size;
  const auto tasks = plan(region, std::clamp<std::uint64_t>(region.count() * info_.dtype.size() / std::max(threads, 1U),
                                                            std::min<std::uint64_t>(task_size, 1U << 20), task_size));
  std::uint64_t covered = 0;
  for (const auto& task : tasks) {
    covered += task.dst.count();
  }
  if (covered < region.count()) {
    fill(out, region.count());  // a virtual dataset with regions no source maps (never one from
                                // from_tile_index, whose tiles cover it exactly once)
  }
  parallel_for(tasks.size(), threads, [&](std::size_t i) {
    const auto& task = tasks[i];
    sources_[task.source]->read(task.src, out, region.extent, task.dst);
    if (progress != nullptr) progress->add(task.dst.count() * info_.dtype.size());
  });
}

}  // namespace h5tile::detail
