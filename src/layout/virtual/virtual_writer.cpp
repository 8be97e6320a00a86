#include "layout/virtual/virtual_writer.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/checksum.hpp"
#include "engine/codecs/compression.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/backend.hpp"
#include "hdf5/create.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "hdf5/upload_driver.hpp"
#include "io/posix/posix_file.hpp"
#include "io/remote.hpp"
#include "layout/boxes.hpp"
#include "layout/chunk_encoding.hpp"
#include "layout/file_writer.hpp"
#include "layout/tile_bytes.hpp"
#include "layout/virtual/sidecar.hpp"
#include "layout/virtual/tile_index.hpp"

namespace h5tile::detail {
namespace {

// Where one tile goes: its own local file, or (a target that is an object) its own object,
// uploaded whole before the target is.
struct TileTarget {
  std::filesystem::path path;            // the file, or the object's URL
  std::shared_ptr<ObjectUpload> upload;  // an object: its upload

  [[nodiscard]] WritableFile create(std::uint64_t alignment) const {
    if (!upload) return create_file(path, alignment);
    const auto fapl = write_access(1);  // an object has no blocks to align to
    return {create_upload_file(upload, fapl.get()), path};
  }
};

// A tile object being uploaded, as a byte source for its tile index: the bytes outside its data
// (HDF5's metadata, still held in the upload's memory until it finishes) and its data (the tile's
// contiguous host memory, which the upload sent).
class UploadedTile final : public ByteSource {
 public:
  UploadedTile(const ObjectUpload& upload, std::uint64_t offset, const void* data, std::uint64_t bytes)
      : upload_(upload), offset_(offset), data_(static_cast<const std::byte*>(data)), bytes_(bytes) {}
  [[nodiscard]] std::string name() const override { return upload_.name(); }
  [[nodiscard]] std::uint64_t size() const override { return upload_.end(); }
  void read_at(void* buffer, std::size_t size, std::uint64_t offset) const override {
    auto* out = static_cast<std::byte*>(buffer);
    while (size > 0) {
      std::size_t n = 0;
      if (offset >= offset_ && offset < offset_ + bytes_) {  // the data
        n = static_cast<std::size_t>(std::min<std::uint64_t>(size, offset_ + bytes_ - offset));
        std::memcpy(out, data_ + (offset - offset_), n);
      } else {  // outside it: held by the upload
        n = static_cast<std::size_t>(offset < offset_ ? std::min<std::uint64_t>(size, offset_ - offset) : size);
        upload_.read_at(out, n, offset);
      }
      out += n;
      offset += n;
      size -= n;
    }
  }

 private:
  const ObjectUpload& upload_;
  std::uint64_t offset_;
  const std::byte* data_;
  std::uint64_t bytes_;
};

class VirtualWriter final : public LayoutWriter {
 public:
  VirtualWriter(const WritePlan& plan, const WriteConfig& config) : plan_(plan), config_(config) {
    if (!plan.filters.empty()) {
      pipeline_.emplace(write_pipeline(plan.filters, plan.dtype.size()));
    }
  }

  std::string create(const WriteCommit& /*commit*/) override { return {}; }  // tiles first, the main file last

  std::vector<WrittenTile> write(Communicator& /*comm*/, const WriteCommit& commit, const std::string& /*created*/,
                                 std::span<const Tile> tiles, std::size_t first, Progress& progress) override {
    std::vector<WrittenTile> written(tiles.size());
    for (std::size_t i = 0; i < tiles.size(); ++i) {
      if (tiles[i].box.count() == 0) continue;
      const auto relative = tile_relative(plan_.target, plan_.dataset, commit.generation(), first + i);
      if (commit.uploads()) {
        written[i] = write_tile_object(commit, relative, tiles[i], progress);
      } else {
        const TileTarget out{plan_.target.parent_path() / relative, nullptr};
        written[i] =
            pipeline_ ? write_filtered_tile(out, tiles[i], progress) : write_tile_file(out.path, tiles[i], progress);
      }
    }
    return written;
  }

  void finish(const WriteCommit& commit, const std::vector<WrittenTile>& written) override {
    std::vector<IndexedTile> tiles;
    bool indexed = !pipeline_;  // tile objects: where every tile's identity was taken (host memory)
    for (std::size_t i = 0; i < plan_.boxes.size(); ++i) {
      if (commit.uploads() && plan_.boxes[i].count() > 0 && written[i].identity == 0) indexed = false;
    }
    for (std::size_t i = 0; i < plan_.boxes.size(); ++i) {
      if (plan_.boxes[i].count() > 0) {
        const auto& w = written[i];
        tiles.push_back({plan_.boxes[i], tile_relative(plan_.target, plan_.dataset, commit.generation(), i).string(),
                         w.offset, w.file_size, w.checksum, w.identity});
      }
    }
    auto file = commit.start_main_file();
    // Filtered tiles have no raw bytes to index (readers open them with HDF5 and decode them), nor
    // tile objects written from device memory or strided views (write_tile_object).
    create_virtual_dataset(file.get(), plan_.dataset, plan_.dtype, plan_.shape, tiles, indexed);
    file.close();
  }

 private:
  // Writes tile `index` to its own file; what the tile table records of it is read back from
  // the file as the tile is written (the checksum, part by part while the other parts are
  // written: RegionChecksum) and once it is (the identity).
  WrittenTile write_tile_file(const std::filesystem::path& path, const Tile& tile, Progress& progress) const {
    std::uint64_t offset = 0;
    {
      auto file = create_file(path, config_.alignment);
      offset = create_raw_dataset(file.get(), kTileDataset, plan_.dtype, tile.box.extent);
      file.close();
    }
    const PosixFile out(path, O_WRONLY);
    const PosixFile back(path, O_RDONLY, config_.direct_reads);
    const RawDataset raw{&out, offset, tile.box.extent, plan_.dtype.size()};
    const auto bytes = tile.box.count() * plan_.dtype.size();
    RegionChecksum checksum(back, offset, bytes);
    const auto writeback = writeback_of(raw, config_);
    write_tile_bytes(raw, Box::whole(tile.box.extent), tile.data, progress, config_, [&](const Box& part) {
      if (writeback) writeback(part);
      // The parts of a whole tile are runs of its file: their spans hold their bytes only.
      const auto span = file_span(raw, part);
      if (span.end - span.begin == part.count() * raw.elem_size) {
        checksum.written(span.begin, span.end);
      }
    });
    const auto file_size = static_cast<std::uint64_t>(std::filesystem::file_size(path));
    std::uint64_t digest = 0;
    std::optional<std::uint64_t> identity;
    // What is left of the checksum, and the identity, are read back while the bytes go to
    // stable storage: a rank that writes one large tile waits for the longer of the two.
    parallel_for(config_.sync ? 2 : 1, 2, [&](std::size_t job) {
      if (job == 1) {
        out.sync();
        return;
      }
      digest = checksum.finish();
      identity = tile_identity(back, offset, bytes, file_size);
    });
    if (!identity) {
      throw Hdf5Error(fmt::format("tile file '{}' holds more than its data and a few KiB of metadata", path.string()));
    }
    return {offset, file_size, digest, *identity};
  }

  // Writes the tile to its own object (`relative` to the target's folder): the tile's file built
  // as a local one is, its bytes uploaded, the object completed. For the tile index, the checksum
  // and the identity are taken before the upload finishes, of the bytes it holds and the tile's
  // memory (nothing is read back from the server); only for contiguous host memory (identity 0
  // otherwise: the dataset gets no index, and readers open the tiles with HDF5).
  WrittenTile write_tile_object(const WriteCommit& commit, const std::filesystem::path& relative, const Tile& tile,
                                Progress& progress) const {
    const auto bytes = tile.box.count() * plan_.dtype.size();
    const TileTarget out{commit.object_beside(relative), nullptr};
    const auto upload = start_upload(out.path.native(), commit.remote(), false, bytes + bytes / 64 + (1 << 20));
    const TileTarget object{out.path, upload};
    if (pipeline_) {
      (void)write_filtered_tile(object, tile, progress);
    } else {
      std::uint64_t offset = 0;
      {
        auto file = object.create(1);
        offset = create_raw_dataset(file.get(), kTileDataset, plan_.dtype, tile.box.extent);
        file.close();
      }
      const RawDataset raw{
          .base = offset, .shape = tile.box.extent, .elem_size = plan_.dtype.size(), .sink = upload.get()};
      write_tile_bytes(raw, Box::whole(tile.box.extent), tile.data, progress, config_);
      if (gpu::device_of(tile.data) < 0 && tile.data.is_contiguous()) {
        const UploadedTile held(*upload, offset, tile.data.data, bytes);
        const auto identity = tile_identity(held, offset, bytes, upload->end());
        if (identity && *identity != 0) {
          const auto checksum = checksum_region(held, offset, bytes);
          upload->finish();
          return {offset, upload->end(), checksum, *identity};
        }
      }
    }
    upload->finish();
    return {0, upload->end(), 0, 0};
  }

  // Writes the tile to its own file or object as a filtered chunked dataset (plan_.chunk, clipped
  // to the tile), its chunks compressed on the rank's workers and written with H5Dwrite_chunk.
  // An object's upload is left to finish.
  WrittenTile write_filtered_tile(const TileTarget& out, const Tile& tile, Progress& progress) const {
    if (gpu::device_of(tile.data) >= 0) {
      throw InvalidArgument(fmt::format("{}: compressed writes take arrays in host memory, not device memory",
                                        where(plan_.target, plan_.dataset)));
    }
    const auto& path = out.path;
    const auto& extent = tile.box.extent;
    Shape chunk = plan_.chunk;
    for (std::size_t a = 0; a < chunk.size(); ++a) chunk[a] = std::min(chunk[a], extent[a]);
    const auto es = plan_.dtype.size();
    const auto whole = Box::whole(extent);
    const auto memory = memory_of(tile.data);
    {
      auto file = out.create(config_.alignment);
      {
        const auto dataset = create_chunked_dataset(file.get(), kTileDataset, plan_.dtype, extent, chunk, false,
                                                    with_chunk_bytes(plan_.filters, element_count(chunk) * es));
        const auto chunks = chunks_touching(whole, chunk);
        parallel_for(chunks.size(), config_.threads, [&](std::size_t i) {
          thread_local ByteBuffer encoded;
          thread_local ByteBuffer scratch;
          encode_chunk(*pipeline_, memory, whole, chunks[i], es, encoded, scratch);
          write_chunk(dataset.get(), chunks[i].offset, encoded.data(), encoded.size());
          progress.add(intersect(whole, chunks[i])->count() * es);
        });
      }
      file.close();
    }
    if (out.upload) return {};
    if (config_.sync) {
      PosixFile(path, O_WRONLY).sync();
    }
    return {0, static_cast<std::uint64_t>(std::filesystem::file_size(path)), 0, 0};
  }

  const WritePlan& plan_;
  WriteConfig config_;
  std::optional<FilterPipeline> pipeline_;  // the tiles' filters, if any
};

}  // namespace

std::unique_ptr<LayoutWriter> make_virtual_writer(const WritePlan& plan, const WriteConfig& config) {
  return std::make_unique<VirtualWriter>(plan, config);
}

}  // namespace h5tile::detail
