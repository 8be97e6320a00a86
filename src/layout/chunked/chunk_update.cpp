#include "layout/chunked/chunk_update.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/raw_transfer.hpp"
#include "engine/thread_pool.hpp"
#include "hdf5/chunk_directory.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/reserve.hpp"
#include "layout/boxes.hpp"
#include "layout/chunk_encoding.hpp"

namespace h5tile::detail {

namespace {

// One chunk of a round: its bytes as they will be stored.
struct Encoded {
  ByteBuffer bytes;
  ByteBuffer scratch;
};

// The whole chunk `chunk_box` as it is now, decoded: its stored bytes, or the fill value where
// it was never written.
void current_chunk(const ChunkedTarget& target, const Box& chunk_box, ByteBuffer& out, ByteBuffer& scratch) {
  const auto chunk_bytes = chunk_box.count() * target.elem_size;
  const auto mask = read_stored_chunk(
      target.dataset, chunk_box.offset,
      [&](std::size_t size) {
        out.resize(size);
        return out.data();
      },
      target.where);
  if (!mask) {
    out.resize(chunk_bytes);
    for (std::size_t at = 0; at < chunk_bytes; at += target.elem_size) {
      std::memcpy(out.data() + at, target.fill.data(), target.elem_size);
    }
    return;
  }
  if (target.pipeline != nullptr) {
    target.pipeline->decode(out, scratch, *mask, chunk_bytes);
  } else if (out.size() != chunk_bytes) {
    throw RuntimeError(fmt::format("{}: the chunk at {} is stored with {} bytes, not the {} of an unfiltered chunk",
                                   target.where, to_string(chunk_box.offset), out.size(), chunk_bytes));
  }
}

// Where the elements of `part` inside `chunk_box` lie, in the chunk and in the part (nullopt:
// none there).
struct InChunk {
  Shape first;  // the index i of the first element of `part` in the chunk, per axis
  Shape count;  // how many of its elements along each axis
};

std::optional<InChunk> in_chunk(const StridedPart& part, const Box& chunk_box, const Shape& shape) {
  InChunk out;
  for (std::size_t a = 0; a < chunk_box.rank(); ++a) {
    const auto lo = std::max(chunk_box.offset[a], part.offset[a]);
    const auto hi = std::min(chunk_box.offset[a] + chunk_box.extent[a], shape[a]);  // exclusive
    const auto step = part.step[a];
    const auto first = (lo - part.offset[a] + step - 1) / step;
    if (hi <= lo || first >= part.count[a] || part.offset[a] + first * step >= hi) return std::nullopt;
    const auto last = std::min(part.count[a] - 1, (hi - 1 - part.offset[a]) / step);
    out.first.push_back(first);
    out.count.push_back(last - first + 1);
  }
  return out;
}

// Chunk `chunk_box` with the elements of `part` (memory `src`) written over it, encoded into `out`.
void update_chunk(const ChunkedTarget& target, const StridedBytes& src, const StridedPart& part, const Box& chunk_box,
                  const InChunk& where, Encoded& out) {
  const auto es = target.elem_size;
  const bool unit = std::all_of(part.step.begin(), part.step.end(), [](auto s) { return s == 1; });
  const Box box{part.offset, part.count};
  if (unit && chunk_box.fits(target.shape) && intersect(box, chunk_box) == chunk_box) {  // covered whole
    if (target.pipeline != nullptr) {
      encode_chunk(*target.pipeline, src, box, chunk_box, es, out.bytes, out.scratch);
    } else {
      out.bytes.resize(chunk_box.count() * es);
      pack_chunk(src, box, chunk_box, es, out.bytes.data());
    }
    return;
  }
  current_chunk(target, chunk_box, out.bytes, out.scratch);
  const auto chunk_strides = rowmajor_strides(chunk_box.extent, es);
  StridedBytes into{out.bytes.data(), chunk_strides};
  auto from = src;
  for (std::size_t a = 0; a < chunk_box.rank(); ++a) {
    const auto at = part.offset[a] + where.first[a] * part.step[a] - chunk_box.offset[a];
    into.ptr += static_cast<std::int64_t>(at) * chunk_strides[a];
    into.strides[a] = chunk_strides[a] * static_cast<std::int64_t>(part.step[a]);
    from.ptr += static_cast<std::int64_t>(where.first[a]) * src.strides[a];
  }
  copy_box(into, from, where.count, es);
  if (target.pipeline != nullptr) target.pipeline->encode(out.bytes, out.scratch);
}

}  // namespace

void write_chunks_in_place(const ChunkedTarget& target, const std::byte* data, const StridedPart& part,
                           unsigned threads) {
  if (element_count(part.count) == 0) return;
  Box covering{part.offset, part.count};
  for (std::size_t a = 0; a < covering.rank(); ++a) covering.extent[a] = (part.count[a] - 1) * part.step[a] + 1;
  std::vector<Box> chunks;
  std::vector<InChunk> places;
  for (auto& chunk_box : chunks_touching(covering, target.chunk)) {
    if (auto where = in_chunk(part, chunk_box, target.shape)) {
      chunks.push_back(std::move(chunk_box));
      places.push_back(std::move(*where));
    }
  }
  const StridedBytes src{const_cast<std::byte*>(data), rowmajor_strides(part.count, target.elem_size)};
  const auto workers = std::max(1U, threads);
  const std::size_t round = 2 * static_cast<std::size_t>(workers);
  std::vector<Encoded> encoded(std::min(round, chunks.size()));
  for (std::size_t first = 0; first < chunks.size(); first += round) {
    const auto count = std::min(round, chunks.size() - first);
    parallel_for(count, workers, [&](std::size_t i) {
      update_chunk(target, src, part, chunks[first + i], places[first + i], encoded[i]);
    });
    // HDF5 rewrites a chunk of the same stored size in place and keeps its old filter mask: a
    // chunk stored with a filter skipped (h5py's LZF leaves incompressible chunks raw) would then
    // be read as if every filter had run. Such a chunk is first written at another size, so that
    // HDF5 stores it anew with the mask written.
    std::vector<std::optional<StoredChunk>> old;
    if (target.pipeline != nullptr) {
      std::vector<Shape> origins;
      for (std::size_t i = 0; i < count; ++i) origins.push_back(chunks[first + i].offset);
      old = stored_chunks(target.dataset, origins);
    }
    const auto stored_longer_first = [&](std::size_t i) {
      return !old.empty() && old[i] && old[i]->filter_mask != 0 && old[i]->size == encoded[i].bytes.size();
    };
    // Room for the round's chunks where HDF5 stores them anew (past the end of the file), before
    // it frees or writes any: a full disk fails here, with every chunk still wholly old.
    std::uint64_t room = kRoomForTheIndex;
    for (std::size_t i = 0; i < count; ++i) {
      room += encoded[i].bytes.size() + (stored_longer_first(i) ? encoded[i].bytes.size() + 1 : 0);
    }
    const SpaceReservation reserved(target.dataset, room);
    for (std::size_t i = 0; i < count; ++i) {
      auto& bytes = encoded[i].bytes;
      const auto& origin = chunks[first + i].offset;
      if (stored_longer_first(i)) {
        auto& longer = encoded[i].scratch;
        longer.resize(bytes.size() + 1);
        std::memcpy(longer.data(), bytes.data(), bytes.size());
        write_chunk(target.dataset, origin, longer.data(), longer.size());
      }
      write_chunk(target.dataset, origin, bytes.data(), bytes.size());
    }
  }
}

}  // namespace h5tile::detail
