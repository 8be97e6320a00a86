#include "layout/source.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/checksum.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"
#include "layout/open_dataset.hpp"
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

std::optional<PosixFile> open_tile(const fs::path& file) {
  try {
    return PosixFile(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (const IoError&) {
    return std::nullopt;  // missing, a link, unreadable
  }
}

namespace {

// The tile file `file` for a read, checked to be the file that was written.
PosixFile open_checked_tile(const fs::path& file, const TableTile& tile, std::uint64_t data_bytes) {
  auto opened = open_tile(file);
  if (opened && is_written_tile(*opened, tile, data_bytes)) {
    return std::move(*opened);
  }
  if (tile.index_only) {
    throw IndexMismatch(fmt::format("tile '{}' is not the file the tile index names", file.string()));
  }
  throw VirtualSourceError(
      fmt::format("tile '{}' changed while being read (a newer write of the file, or another "
                  "program, replaced it)",
                  file.string()));
}

// Reads `src` of a chunked source chunk by chunk with pread; false (nothing read) when a chunk
// it touches is not allocated.
bool read_chunks(const RawChunks& raw, const Shape& chunk, std::size_t es, const Box& src,
                 const StridedBytes& dst_memory) {
  const auto rank = src.rank();
  std::vector<Shape> origins;
  for (auto& c : chunks_touching(src, chunk)) origins.push_back(std::move(c.offset));
  const auto addresses = locate_chunks(raw.hdf5.dataset.get(), origins);
  std::vector<std::pair<Shape, std::uint64_t>> chunks;
  for (std::size_t i = 0; i < origins.size(); ++i) {
    if (!addresses[i]) {
      return false;  // not allocated: HDF5 supplies the fill value
    }
    chunks.emplace_back(std::move(origins[i]), *addresses[i]);
  }
  for (const auto& [origin, address] : chunks) {
    const auto part = intersect(src, Box{origin, chunk});
    if (!part) continue;
    Box in_chunk = *part;
    for (std::size_t a = 0; a < rank; ++a) in_chunk.offset[a] -= origin[a];
    const RawDataset stored{&raw.file, address, chunk, es};  // chunks are stored whole, row-major
    read_raw(stored, in_chunk, sub_memory(dst_memory, src, *part));
  }
  return true;
}

}  // namespace

void Source::read(const Box& src, std::byte* out, const Shape& out_shape, const Box& dst) const {
  const StridedBytes whole{out, rowmajor_strides(out_shape, elem_size)};
  const auto into = [&] { return sub_memory(whole, Box::whole(out_shape), dst); };
  if (const auto* bytes = std::get_if<RawBytes>(&access)) {
    read_raw({&bytes->file, bytes->offset, shape, elem_size}, src, into());
  } else if (const auto* tile = std::get_if<TableTile>(&access)) {
    // Opened for this read only (thousands of tiles would exhaust descriptors), checked first.
    const PosixFile tile_file = open_checked_tile(file, *tile, element_count(shape) * elem_size);
    read_raw({&tile_file, tile->offset, shape, elem_size}, src, into());
  } else if (const auto* chunks = std::get_if<RawChunks>(&access)) {
    if (src.rank() == 0 || !read_chunks(*chunks, chunk, elem_size, src, into())) {
      hdf5_read(chunks->hdf5.dataset.get(), chunks->hdf5.memory_type.get(), src, out, out_shape, dst);
    }
  } else {
    const auto& hdf5 = std::get<ThroughHdf5>(access);
    hdf5_read(hdf5.dataset.get(), hdf5.memory_type.get(), src, out, out_shape, dst);
  }
}

std::optional<std::uint64_t> Source::raw_offset() const noexcept {
  if (const auto* bytes = std::get_if<RawBytes>(&access)) return bytes->offset;
  if (const auto* tile = std::get_if<TableTile>(&access)) return tile->offset;
  return std::nullopt;
}

std::variant<ThroughHdf5, RawBytes, RawChunks, TableTile> access_for(ThroughHdf5 hdf5, const Shape& chunk,
                                                                     bool raw_io) {
  if (!raw_io) {
    return hdf5;
  }
  const auto offset = detail::raw_offset(hdf5.dataset.get(), hdf5.memory_type.get());
  const bool chunks = !offset && !chunk.empty() && raw_chunks(hdf5.dataset.get(), hdf5.memory_type.get());
  if (!offset && !chunks) {
    return hdf5;
  }
  // The offsets are in the file HDF5 opened for the dataset, which an external link (or a
  // virtual source found elsewhere) makes another file than the one named: read that one.
  auto opened = file_holding(hdf5.dataset.get());
  if (!opened) {
    return hdf5;  // not a POSIX file (another HDF5 driver): HDF5 reads it
  }
  auto file = PosixFile::adopt(opened->fd, opened->name);
  if (offset) {
    return RawBytes{std::move(file), *offset};  // HDF5's handles close here: not needed to read
  }
  return RawChunks{std::move(file), std::move(hdf5)};
}

}  // namespace h5tile::detail
