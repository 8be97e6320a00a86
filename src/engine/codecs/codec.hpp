#pragma once
// One step of a chunk's filter pipeline, applied and undone on h5tile's own workers: the interface
// each codec implements (one file per codec: deflate.cpp, shuffle.cpp, fletcher32.cpp) and the
// pure byte transforms that tests check against HDF5's own encoding.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace h5tile::detail {

// A filter as a dataset's creation list gives it: its HDF5 filter ID and client data, and (for
// writing) whether HDF5 may skip it for a chunk (H5Z_FLAG_OPTIONAL).
struct FilterSpec {
  unsigned id = 0;
  std::vector<unsigned> params;
  bool optional = true;
};

// The part of a decoded chunk that a read wants, where it wants it: runs of `length` elements of
// `element_size` bytes each (a row of the part), run r starting at element runs[r].first of the
// chunk (row-major) and going to runs[r].out. A codec undone last writes them straight there,
// with streaming (non-temporal) stores where `streaming`: for a read's memory too large to stay in
// the caches, whose lines are then not read in before they are written (shuffle streams 2-, 4- and
// 8-byte elements with SSE2, where a store's address is 16-byte aligned; the others it stores).
struct ElementRun {
  std::size_t first = 0;
  std::byte* out = nullptr;
};
struct ChunkRuns {
  std::span<const ElementRun> runs;
  std::size_t length = 0;
  std::size_t element_size = 0;
  bool streaming = false;
};

// A growable byte buffer that does not zero what it grows into (chunks are overwritten whole).
class ByteBuffer {
 public:
  [[nodiscard]] std::byte* data() noexcept { return data_.get(); }
  [[nodiscard]] const std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // Sets the size, keeping the first min(size(), n) bytes; new bytes are uninitialised.
  void resize(std::size_t n);
  void swap(ByteBuffer& other) noexcept;

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

class Codec {
 public:
  virtual ~Codec() = default;
  // Undoes the filter on `data` in place (it may swap `data` with `scratch`). `chunk_bytes`, the
  // size of the whole decoded chunk, bounds what a decompressor may produce. Throws
  // h5tile::RuntimeError with the reason when the bytes are not what the filter writes.
  virtual void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const = 0;
  // Undoes the filter on `data` into `out` (room for `chunk_bytes`) rather than in place, and
  // returns how many bytes it wrote: the last filter of a chunk decodes straight into the
  // caller's memory this way, without a copy. std::nullopt, writing nothing, where the filter
  // only works in place (fletcher32). Throws as decode does, and where the result would not fit.
  [[nodiscard]] virtual std::optional<std::size_t> decode_to(const ByteBuffer& /*data*/, std::byte* /*out*/,
                                                             std::size_t /*chunk_bytes*/) const {
    return std::nullopt;
  }
  // Undoes the filter on `data` (a whole chunk of `chunk_bytes` once undone) into the runs the
  // read wants only, rather than in place: the decoded chunk is not copied again. false, writing
  // nothing, where the filter cannot (all but shuffle: the pipeline copies the runs itself).
  [[nodiscard]] virtual bool decode_to_runs(const ByteBuffer& /*data*/, const ChunkRuns& /*runs*/,
                                            std::size_t /*chunk_bytes*/) const {
    return false;
  }
  // Applies the filter to `data` in place (it may swap `data` with `scratch`), as HDF5 (or the
  // filter's plugin) does when it writes a chunk.
  virtual void encode(ByteBuffer& data, ByteBuffer& scratch) const = 0;
  // Applies the filter to the `size` bytes at `in` (not in `out`), leaving the result in `out`:
  // the first filter of a chunk reads the caller's memory this way, without a copy. false,
  // writing nothing, where the filter only works in place (fletcher32).
  [[nodiscard]] virtual bool encode_from(const std::byte* /*in*/, std::size_t /*size*/, ByteBuffer& /*out*/) const {
    return false;
  }
};

// The codecs, made from a filter's client data and the dataset's element size; nullptr where
// the client data are not what h5tile decodes (HDF5 then reads the dataset).
[[nodiscard]] std::unique_ptr<Codec> make_deflate(const FilterSpec& spec, std::size_t elem_size);
[[nodiscard]] std::unique_ptr<Codec> make_shuffle(const FilterSpec& spec, std::size_t elem_size);
[[nodiscard]] std::unique_ptr<Codec> make_fletcher32(const FilterSpec& spec, std::size_t elem_size);
// hdf5plugin's filters, each built where its library is found (pipeline.cpp lists them).
[[nodiscard]] std::unique_ptr<Codec> make_zstd(const FilterSpec& spec, std::size_t elem_size);
[[nodiscard]] std::unique_ptr<Codec> make_lz4(const FilterSpec& spec, std::size_t elem_size);
[[nodiscard]] std::unique_ptr<Codec> make_blosc(const FilterSpec& spec, std::size_t elem_size);
// The bitshuffle filter (LZ4 inside, or Zstandard where built with it), built where liblz4 is found.
[[nodiscard]] std::unique_ptr<Codec> make_bitshuffle(const FilterSpec& spec, std::size_t elem_size);
// h5py's LZF filter, built where liblzf is found.
[[nodiscard]] std::unique_ptr<Codec> make_lzf(const FilterSpec& spec, std::size_t elem_size);

// HDF5's shuffle filter: byte k of every element together, for k = 0 .. elem_size - 1; the
// `size % elem_size` trailing bytes stay where they are. unshuffle is its inverse.
void shuffle(const std::byte* in, std::byte* out, std::size_t size, std::size_t elem_size);
void unshuffle(const std::byte* in, std::byte* out, std::size_t size, std::size_t elem_size);
// unshuffle of the `n` elements of `runs.element_size` bytes at `in` (a whole chunk's streams),
// writing only the elements of `runs` where they go (visible to other threads when it returns).
void unshuffle_runs(const std::byte* in, std::size_t n, const ChunkRuns& runs);

// HDF5's Fletcher-32 (H5_checksum_fletcher32): 16-bit big-endian words, an odd last byte as
// the high byte of a word.
[[nodiscard]] std::uint32_t fletcher32(const std::byte* data, std::size_t size);

// Why a chunk whose stored Fletcher-32 is `stored` but whose bytes have `computed` is refused, as
// the fletcher32 codec says it (and the GPU's check of stored chunks), or "" where they agree
// (HDF5's byte-swapped form of before 1.6.3 included).
[[nodiscard]] std::string fletcher32_mismatch(std::uint32_t stored, std::uint32_t computed);

}  // namespace h5tile::detail
