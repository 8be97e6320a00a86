#include "layout/source.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <string_view>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/checksum.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "hdf5/remote_driver.hpp"
#include "hdf5/types.hpp"
#include "layout/boxes.hpp"
#include "layout/virtual/early_open.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

bool is_written_tile(const PosixFile& file, const TableTile& tile, std::uint64_t data_bytes) {
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) != tile.file_size) {
    return false;
  }
  try {
    return tile_identity(file, tile.offset, data_bytes, tile.file_size) == tile.identity;
  } catch (const IoError&) {
    return false;  // shorter than fstat said: changing under us
  }
}

std::optional<PosixFile> open_tile(const fs::path& file, DirectIo direct) {
  try {
    return PosixFile(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, direct);
  } catch (const IoError&) {
    return std::nullopt;  // missing, a link, unreadable
  }
}

std::shared_ptr<const PosixFile> hold_tile(const fs::path& file, const TableTile& tile, std::uint64_t data_bytes) {
  auto opened = open_tile(file, tile.direct_reads);
  if (!opened || !is_written_tile(*opened, tile, data_bytes)) {
    return nullptr;
  }
  return std::make_shared<const PosixFile>(std::move(*opened));
}

namespace {

// The tile file `file` for a read, checked to be the file that was written.
PosixFile open_checked_tile(const fs::path& file, const TableTile& tile, std::uint64_t data_bytes) {
  auto opened = open_tile(file, tile.direct_reads);
  if (opened && is_written_tile(*opened, tile, data_bytes)) {
    return std::move(*opened);
  }
  if (tile.index_only) {
    throw IndexMismatch(fmt::format("tile '{}' is not the file the tile index names", file.string()));
  }
  throw TileChanged(
      fmt::format("tile '{}' changed while being read (a newer write of the file, or another "
                  "program, replaced it)",
                  file.string()));
}

// Reads `src` of a chunked source chunk by chunk with pread; false (nothing read) when a chunk
// it touches is not allocated, or where the directory leaves the chunks to HDF5.
bool read_chunks(const RawChunks& raw, const Shape& chunk, std::size_t es, const Box& src,
                 const StridedBytes& dst_memory) {
  const auto rank = src.rank();
  std::vector<Shape> origins;
  for (auto& c : chunks_touching(src, chunk)) origins.push_back(std::move(c.offset));
  const auto found = raw.directory->find(origins);
  if (!found) {
    return false;  // HDF5 finds them faster
  }
  std::vector<std::pair<Shape, std::uint64_t>> chunks;
  for (std::size_t i = 0; i < origins.size(); ++i) {
    if (!(*found)[i]) {
      return false;  // not allocated: HDF5 supplies the fill value
    }
    chunks.emplace_back(std::move(origins[i]), (*found)[i]->offset);
  }
  for (const auto& [origin, address] : chunks) {
    const auto part = intersect(src, Box{origin, chunk});
    if (!part) continue;
    Box in_chunk = *part;
    for (std::size_t a = 0; a < rank; ++a) in_chunk.offset[a] -= origin[a];
    const RawDataset stored{raw.file.get(), address, chunk, es};  // chunks are stored whole, row-major
    read_raw(stored, in_chunk, sub_memory(dst_memory, src, *part));
  }
  return true;
}

// The rows of `part` (of a chunk at `origin` of shape `chunk`) as runs of the decoded chunk, each
// going to its row of `into` (where `part` goes): empty where a row there is not one run of at
// least 16 elements (the chunk is then decoded aside and copied with copy_box).
std::vector<ElementRun> rows_of(const Box& part, const Shape& origin, const Shape& chunk, const StridedBytes& into,
                                std::size_t es) {
  const auto rank = part.rank();
  if (rank == 0 || part.extent[rank - 1] < 16 || into.strides[rank - 1] != static_cast<std::int64_t>(es)) return {};
  std::vector<std::size_t> chunk_stride(rank, 1);  // in elements
  for (std::size_t a = rank - 1; a-- > 0;) chunk_stride[a] = chunk_stride[a + 1] * chunk[a + 1];
  std::vector<ElementRun> runs;
  Shape index(rank - 1, 0);  // odometer over every axis but the last
  for (;;) {
    std::size_t first = part.offset[rank - 1] - origin[rank - 1];
    std::byte* out = into.ptr;
    for (std::size_t a = 0; a + 1 < rank; ++a) {
      first += (part.offset[a] - origin[a] + index[a]) * chunk_stride[a];
      out += static_cast<std::int64_t>(index[a]) * into.strides[a];
    }
    runs.push_back({first, out});
    std::size_t a = rank - 1;
    while (a > 0 && ++index[a - 1] == part.extent[a - 1]) {
      index[a - 1] = 0;
      --a;
    }
    if (a == 0) return runs;
  }
}

// A read's memory from which on the rows of chunks go there with streaming stores (ChunkRuns): well
// past what the cores' own caches hold, so its lines would only be read in to be overwritten
// (bench/probes/unshuffle_into_rows.cpp).
constexpr std::uint64_t kStreamingBytes = std::uint64_t{8} << 20;

// Reads `src` of a filtered chunked source into `dst` of `out` (of `out_shape`): each allocated
// chunk by pread of its stored bytes, decoded here on the calling worker; each unallocated one
// through HDF5. `where` names the dataset in errors.
void read_filtered_chunks(const FilteredChunks& filtered, const Shape& chunk, std::size_t es, const Box& src,
                          std::byte* out, const Shape& out_shape, const Box& dst, const std::string& where) {
  std::vector<Shape> origins;
  for (auto& c : chunks_touching(src, chunk)) origins.push_back(std::move(c.offset));
  const auto located = filtered.directory->find(origins);  // nullopt: HDF5 reads each chunk's bytes
  const auto chunk_bytes = byte_count(chunk, es);
  const StridedBytes whole{out, rowmajor_strides(out_shape, es)};
  const auto dst_memory = sub_memory(whole, Box::whole(out_shape), dst);
  const auto chunk_strides = rowmajor_strides(chunk, es);
  const bool streaming = byte_count(out_shape, es) >= kStreamingBytes;
  thread_local ByteBuffer data;  // one pair per worker, reused from chunk to chunk
  thread_local ByteBuffer scratch;
  // A remote source's chunks are fetched together first, so that neighbours share a request.
  std::vector<ByteBuffer> fetched;
  if (located && filtered.file->remote()) {
    fetched.resize(origins.size());
    std::vector<ByteRange> ranges;
    for (std::size_t i = 0; i < origins.size(); ++i) {
      const auto& stored = (*located)[i];
      if (stored && intersect(src, Box{origins[i], chunk})) {
        fetched[i].resize(stored->size);
        ranges.push_back({stored->offset, stored->size, fetched[i].data()});
      }
    }
    filtered.file->read_ranges(ranges);
  }
  for (std::size_t i = 0; i < origins.size(); ++i) {
    const Box chunk_box{origins[i], chunk};
    const auto part = intersect(src, chunk_box);
    if (!part) continue;
    std::optional<unsigned> filter_mask;
    if (located) {
      if (const auto& stored = (*located)[i]) {
        if (fetched.empty()) {
          data.resize(stored->size);
          filtered.file->read_at(data.data(), data.size(), stored->offset);
        } else {
          data.swap(fetched[i]);
        }
        filter_mask = stored->filter_mask;
      }
    } else {
      filter_mask = read_stored_chunk(
          filtered.hdf5.dataset.get(), origins[i],
          [&](std::size_t size) {
            data.resize(size);
            return data.data();
          },
          where);
    }
    if (!filter_mask) {      // not allocated
      Box part_dst = *part;  // where the part goes in `out`
      for (std::size_t a = 0; a < src.rank(); ++a)
        part_dst.offset[a] = dst.offset[a] + (part->offset[a] - src.offset[a]);
      hdf5_read(filtered.hdf5.dataset.get(), filtered.hdf5.memory_type.get(), *part, out, out_shape, part_dst);
      continue;
    }
    const auto into = sub_memory(dst_memory, src, *part);
    // A whole chunk whose rows lie one after another in `out` (it spans the trailing axes there)
    // is decoded straight into place; the rows of any other part go to their places as the last
    // filter undone writes them (shuffle), or copied from the decoded chunk; parts of rows too
    // short for that are decoded aside and copied.
    const bool in_place = *part == chunk_box && is_rowmajor_run(into, chunk, es);
    const auto rows = in_place ? std::vector<ElementRun>{} : rows_of(*part, origins[i], chunk, into, es);
    try {
      if (in_place) {
        filtered.pipeline->decode_into(data, scratch, *filter_mask, chunk_bytes, into.ptr);
      } else if (!rows.empty()) {
        filtered.pipeline->decode_into(
            data, scratch, *filter_mask, chunk_bytes,
            ChunkRuns{.runs = rows, .length = part->extent.back(), .element_size = es, .streaming = streaming});
      } else {
        filtered.pipeline->decode(data, scratch, *filter_mask, chunk_bytes);
      }
    } catch (const RuntimeError& e) {
      const auto stored_at =
          located ? fmt::format("at byte {} of", (*located)[i]->offset) : std::string("read by HDF5 from");
      throw RuntimeError(fmt::format("chunk {} of {} ({} '{}') cannot be decoded: {}", to_string(chunk_box), where,
                                     stored_at, filtered.file->name(), e.what()));
    }
    if (!in_place && rows.empty()) {
      const StridedBytes decoded{data.data(), chunk_strides};
      copy_box(into, sub_memory(decoded, chunk_box, *part), part->extent, es);
    }
  }
}

}  // namespace

void Source::read(const Box& src, std::byte* out, const Shape& out_shape, const Box& dst) const {
  const StridedBytes whole{out, rowmajor_strides(out_shape, elem_size)};
  const auto into = [&] { return sub_memory(whole, Box::whole(out_shape), dst); };
  if (const auto* bytes = std::get_if<RawBytes>(&access)) {
    read_raw({bytes->file.get(), bytes->offset, shape, elem_size}, src, into());
  } else if (const auto* tile = std::get_if<TableTile>(&access)) {
    if (tile->held) {
      read_raw({tile->held.get(), tile->offset, shape, elem_size}, src, into());
    } else {
      // Opened for this read only (thousands of tiles would exhaust descriptors), checked first.
      const PosixFile tile_file = open_checked_tile(file, *tile, byte_count(shape, elem_size));
      read_raw({&tile_file, tile->offset, shape, elem_size}, src, into());
    }
  } else if (const auto* chunks = std::get_if<RawChunks>(&access)) {
    if (src.rank() == 0 || !read_chunks(*chunks, chunk, elem_size, src, into())) {
      hdf5_read(chunks->hdf5.dataset.get(), chunks->hdf5.memory_type.get(), src, out, out_shape, dst);
    }
  } else if (const auto* filtered = std::get_if<FilteredChunks>(&access)) {
    if (src.rank() == 0) {
      hdf5_read(filtered->hdf5.dataset.get(), filtered->hdf5.memory_type.get(), src, out, out_shape, dst);
    } else {
      read_filtered_chunks(*filtered, chunk, elem_size, src, out, out_shape, dst, where(file, dataset));
    }
  } else {
    const auto& hdf5 = std::get<ThroughHdf5>(access);
    try {
      hdf5_read(hdf5.dataset.get(), hdf5.memory_type.get(), src, out, out_shape, dst);
    } catch (const Hdf5Error& e) {
      if (hdf5.undecoded_filter.empty()) throw;
      // HDF5's own words name its plugin folder, not the filter it lacks.
      const bool no_plugins = std::string_view(e.what()).find("plugins disabled") != std::string_view::npos;
      throw Hdf5Error(fmt::format(
          "dataset '{}' in '{}': {}, and HDF5 could not decode it either: {}{}", dataset, file.string(),
          hdf5.undecoded_filter, e.what(),
          no_plugins ? "; this process's HDF5 loads no filter plugins (h5tile's Python module turns them off: its "
                       "HDF5 is built in, and plugins built against another HDF5 would break it): read this dataset "
                       "with h5py and hdf5plugin, or with the h5tile command, whose HDF5 loads the plugins of "
                       "HDF5_PLUGIN_PATH"
                     : ""));
    }
  }
}

std::optional<std::uint64_t> Source::raw_offset() const noexcept {
  if (const auto* bytes = std::get_if<RawBytes>(&access)) return bytes->offset;
  if (const auto* tile = std::get_if<TableTile>(&access)) return tile->offset;
  return std::nullopt;
}

namespace {

// The pipeline that decodes the chunks of `hdf5`'s dataset in h5tile's workers, or why HDF5 has
// to (a filter h5tile does not decode, setting `undecoded`; type conversion; unfiltered edge
// chunks); nullptr and "" for a dataset without filters.
std::shared_ptr<const FilterPipeline> decodable_pipeline(const ThroughHdf5& hdf5, const Shape& chunk,
                                                         std::string& why_hdf5, bool& undecoded) {
  const auto stored = chunk_filters(hdf5.dataset.get(), hdf5.memory_type.get());
  if (stored.filters.empty() || chunk.empty()) {
    return nullptr;
  }
  std::vector<FilterSpec> filters;
  for (const auto& f : stored.filters) filters.push_back({f.id, f.params});
  auto made = FilterPipeline::make(filters, type_size(hdf5.memory_type.get()));
  if (auto* unsupported = std::get_if<std::string>(&made)) {
    why_hdf5 = fmt::format("h5tile does not decode {}", *unsupported);
    undecoded = true;
    return nullptr;
  }
  if (!stored.obstacle.empty()) {
    why_hdf5 = stored.obstacle;
    return nullptr;
  }
  return std::make_shared<const FilterPipeline>(std::move(std::get<FilterPipeline>(made)));
}

}  // namespace

SourceAccess access_for(ThroughHdf5 hdf5, const Shape& chunk, bool raw_io, DirectIo direct, const fs::path& named_file,
                        const std::string& dataset, std::string* why_hdf5) {
  std::string why;
  bool undecoded = false;  // why: a filter h5tile does not decode
  auto access = [&]() -> SourceAccess {
    if (!raw_io) {
      why = "raw_io is off";
      return std::move(hdf5);
    }
    const auto offset = detail::raw_offset(hdf5.dataset.get(), hdf5.memory_type.get());
    const bool chunks = !offset && !chunk.empty() && raw_chunks(hdf5.dataset.get(), hdf5.memory_type.get());
    std::shared_ptr<const FilterPipeline> pipeline;
    if (!offset && !chunks && !chunk.empty()) {
      pipeline = decodable_pipeline(hdf5, chunk, why, undecoded);
    }
    if (!offset && !chunks && !pipeline) {
      if (undecoded) hdf5.undecoded_filter = why;
      return std::move(hdf5);
    }
    // The offsets are in the file HDF5 opened for the dataset, which an external link (or a
    // virtual source found elsewhere) makes another file than the one named: read that one.
    std::shared_ptr<const ByteSource> file = remote_source_holding(hdf5.dataset.get());
    if (!file) {
      auto opened = file_holding(hdf5.dataset.get());
      if (!opened) {
        why = "its file is not a POSIX file (another HDF5 driver)";
        return std::move(hdf5);  // HDF5 reads it
      }
      file = std::make_shared<const PosixFile>(PosixFile::adopt(opened->fd, opened->name, direct));
    }
    if (offset) {
      return RawBytes{std::move(file), *offset};  // HDF5's handles close here: not needed to read
    }
    // Errors about the chunk index name the file read where it is not the one named.
    const auto* local = file->posix_file();
    auto named = detail::where(named_file, dataset);
    if (local != nullptr && local->path().lexically_normal() != named_file.lexically_normal()) {
      named += fmt::format(" (stored in '{}')", local->path().string());
    }
    // A remote object has no descriptor: its chunk records are checked against its size.
    auto directory = std::make_shared<const ChunkDirectory>(
        hdf5.dataset.get(), local != nullptr ? local->fd() : -1, chunk,
        byte_count(chunk, type_size(hdf5.memory_type.get())), !pipeline, std::move(named),
        local != nullptr ? -1 : static_cast<std::int64_t>(file->size()));
    if (pipeline) {
      return FilteredChunks{std::move(file), std::move(hdf5), std::move(pipeline), std::move(directory)};
    }
    return RawChunks{std::move(file), std::move(hdf5), std::move(directory)};
  }();
  if (why_hdf5 != nullptr) {
    *why_hdf5 = std::holds_alternative<ThroughHdf5>(access) ? why : std::string();
  }
  return access;
}

}  // namespace h5tile::detail
