#pragma once
// Where the chunks of a chunked dataset lie in its file, for all the tasks of a read.
//
// HDF5 1.14 (and 1.12.3, 1.10.10) lists every chunk in one pass over the dataset's chunk index
// (H5Dchunk_iter, about 20 ns a chunk): the directory makes that pass once, at the first lookup,
// and answers every task from it. Before, HDF5 tells where a chunk is only through
// H5Dget_chunk_info_by_coord, which walks the whole index on every call, so finding all N
// chunks takes time in N^2 (bench/chunk_lookup.cpp). There the directory lists the chunks of a
// version-1 B-tree (HDF5's default index) from the file's bytes, read through its descriptor
// (chunk_btree.hpp), and takes that listing where HDF5 agrees with it (the count, a sample); for
// other indexes (or no descriptor: a remote file) it looks chunks up one by one only where the
// dataset has few chunks for their size, and otherwise says that the chunks are to be read through
// HDF5 (H5Dread, H5Dread_chunk), whose own lookups search the index.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <h5tile/array.hpp>

#include "hdf5/handle.hpp"

// Whether this HDF5 has H5Dchunk_iter with offsets in elements: 1.14.0 on (HDFGroup/hdf5#1969), and
// its backports to 1.12.3 and 1.10.10 (#1970, #1968; Ubuntu 24.04's HDF5 is 1.10.10).
#define H5TILE_HDF5_CHUNK_ITER                                                                       \
  (H5_VERSION_GE(1, 14, 0) || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 12 && H5_VERS_RELEASE >= 3) || \
   (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 10))

namespace h5tile::detail {

// Where a chunk lies in its file, its stored (filtered) size, and which filters HDF5 skipped for
// it (bit i: filter i of the pipeline).
struct StoredChunk {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  unsigned filter_mask = 0;
};

// The chunks that start at the elements `chunk_offsets`, in their order; nullopt for a chunk that
// is not allocated (HDF5 supplies the fill value). With H5Dchunk_iter (H5TILE_HDF5_CHUNK_ITER):
// one pass over the chunk index; without, one H5Dget_chunk_info_by_coord call per chunk, each of
// which walks the index too. For the writers, which need every chunk they wrote; reads use a ChunkDirectory.
[[nodiscard]] std::vector<std::optional<StoredChunk>> stored_chunks(hid_t dataset,
                                                                    const std::vector<Shape>& chunk_offsets);

// The file offsets of the chunks stored_chunks finds.
[[nodiscard]] std::vector<std::optional<std::uint64_t>> locate_chunks(hid_t dataset,
                                                                      const std::vector<Shape>& chunk_offsets);

// Every allocated chunk of a chunked dataset: its first element and where it is stored, in the
// order of its chunk index. With H5Dchunk_iter: one pass over the index; without, one
// H5Dget_chunk_info call per chunk, each a walk of the index up to that chunk (time in N^2 for N
// chunks: for the few chunks of a sparse dataset, whose grid is too large to look chunks up in).
[[nodiscard]] std::vector<std::pair<Shape, StoredChunk>> allocated_chunks(hid_t dataset);

// Every allocated chunk of a chunked dataset in the order of its index, listed from its file's
// bytes read through `fd` (chunk_btree.hpp) where its index is a version-1 B-tree and HDF5 agrees:
// as many chunks as HDF5 counts, and the records HDF5 finds for the first, the last and six
// between, and HDF5's search of the index (a read's) would find each listed chunk where it is
// listed (the keys of every node bound the chunks below it). nullopt otherwise, and where this
// process has the file open for writing or reads it as SWMR (HDF5's caches may hold index nodes that
// are not in the file). For HDF5 without H5Dchunk_iter.
[[nodiscard]] std::optional<std::vector<std::pair<Shape, StoredChunk>>> chunks_from_file(hid_t dataset, int fd);

// The number of allocated chunks of a chunked dataset, counted by walking its whole chunk index
// (HDF5 reads and decodes every node of it, as reads that look chunks up will).
[[nodiscard]] std::uint64_t count_chunks(hid_t dataset);

// The stored (filtered) bytes of the chunk that starts at the elements `origin`, read by HDF5
// (H5Dread_chunk, which finds the chunk with a search of the index) into the buffer that
// `room(size)` returns; the chunk's filter mask, or nullopt for a chunk not allocated. Throws
// RuntimeError naming `where`, before `room` is asked, for a chunk whose stored size reaches past
// the end of the file (a damaged chunk index).
[[nodiscard]] std::optional<unsigned> read_stored_chunk(hid_t dataset, const Shape& origin,
                                                        const std::function<std::byte*(std::size_t)>& room,
                                                        const std::string& where = {});

class ChunkDirectory {
 public:
  // For `dataset`, chunked in chunks of shape `chunk` holding `chunk_bytes` bytes each before
  // filters, whose file h5tile reads through the descriptor `fd` (-1: none); both must stay open
  // while the directory is used. Reads nothing yet. `unfiltered`: the dataset has no filters, so
  // that every chunk's record must say `chunk_bytes`. `where` names the dataset in errors.
  // `size_without_fd`: where `fd` is -1, the size of the file read through something else (a
  // remote object's, fixed when it was opened), which chunk records are checked against; -1: unknown.
  ChunkDirectory(hid_t dataset, int fd, Shape chunk, std::uint64_t chunk_bytes, bool unfiltered = false,
                 std::string where = {}, std::int64_t size_without_fd = -1);

  // The chunks that start at the elements `origins`, in their order: where each is stored, or
  // nullopt for a chunk not allocated (HDF5 supplies the fill value) or outside the dataset's
  // current extent. nullopt as a whole where this HDF5 cannot find the dataset's chunks cheaply
  // (without H5Dchunk_iter, many small chunks): read them through HDF5 instead. Safe to call from several
  // threads. Throws RuntimeError, before anything is read or allocated for it, for a chunk whose
  // record is damaged: stored past the end of the file (its descriptor's size), or, unfiltered,
  // of another size than a chunk's (HDF5 reads a record of size 0 as uninitialised memory).
  //
  // A listing is made at the first call and made again at any call that finds the dataset's
  // extent, or its file's size or modification time, changed since: a change flushed by HDF5 in
  // this process or made by another program is seen by the next read. (Within one read, a file
  // that changes is a race that HDF5 does not settle either; and bytes that HDF5 holds in its
  // caches unflushed are not in the file, so no pread sees them.)
  [[nodiscard]] std::optional<std::vector<std::optional<StoredChunk>>> find(const std::vector<Shape>& origins) const;

  // Why the last find() answered nullopt, for the reports that say how a dataset is read ("" where
  // it did not, or before the first find()).
  [[nodiscard]] std::string why_through_hdf5() const;

  // How many chunks this directory has asked HDF5 for one at a time (H5Dget_chunk_info_by_coord,
  // without H5Dchunk_iter): each once while the dataset and its file stay unchanged (twice where
  // two reads ask for it at the same moment).
  [[nodiscard]] std::uint64_t chunks_asked() const noexcept { return asked_.load(); }

 private:
  // Implicit: chunk i at first + i * chunk_bytes (the implicit index of HDF5 1.10's formats, with
  // any HDF5); Listed: one H5Dchunk_iter pass (H5TILE_HDF5_CHUNK_ITER), or without it, a version-1
  // B-tree listed from the file's bytes (chunk_btree.hpp) where HDF5 agrees; OneByOne and
  // ThroughHdf5: otherwise.
  enum class Mode { Implicit, Listed, OneByOne, ThroughHdf5 };
  // What a listing was made from: the dataset's extent, and its file's size and times.
  struct Signature {
    std::vector<hsize_t> dims;
    std::int64_t file_size = -1;
    std::int64_t modified_ns = -1;
    std::int64_t changed_ns = -1;
    bool operator==(const Signature&) const = default;
  };
  struct Listing {
    Signature signature;
    Mode mode = Mode::OneByOne;
    Shape grid;  // chunks along each axis of the current extent
    // A chunk's number: the sum of its place along each axis times down (Listed: row-major in
    // `grid`; Implicit: HDF5's, in the grid of the maximum extent).
    Shape down;
    std::vector<std::pair<std::uint64_t, StoredChunk>> chunks;  // by chunk number (Listed)
    std::uint64_t first = 0;                                    // chunk 0's offset (Implicit)
    std::uint64_t chunk_bytes = 0;                              // (Implicit)
    std::string why;                                            // (ThroughHdf5)
    // OneByOne over a grid numbered in 64 bits: the chunks looked up so far, by number (nullopt:
    // none stored there), so that each is asked of HDF5 once per listing.
    mutable std::mutex looked_up_mutex;
    mutable std::unordered_map<std::uint64_t, std::optional<StoredChunk>> looked_up;
  };
  [[nodiscard]] Signature signature() const;
  [[nodiscard]] std::shared_ptr<const Listing> build(Signature signature) const;
  [[nodiscard]] std::shared_ptr<const Listing> current() const;
  // HDF5 asked for the chunks at `origins`, one by one (counted in chunks_asked()).
  [[nodiscard]] std::vector<std::optional<StoredChunk>> ask(const std::vector<Shape>& origins) const;
  // The chunks at `origins` from `listing`'s memory, HDF5 asked for the others (OneByOne).
  [[nodiscard]] std::vector<std::optional<StoredChunk>> remembered(const Listing& listing,
                                                                   const std::vector<Shape>& origins) const;

  hid_t dataset_;
  int fd_;
  std::int64_t size_without_fd_;
  // Throws for a damaged record among `found` (the chunks at `origins`), given the listing's file size.
  void check_records(const std::vector<Shape>& origins, const std::vector<std::optional<StoredChunk>>& found,
                     std::int64_t file_size) const;

  Shape chunk_;
  std::uint64_t chunk_bytes_;
  bool unfiltered_;
  std::string where_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const Listing> listing_;
  mutable std::atomic<std::uint64_t> asked_{0};
};

}  // namespace h5tile::detail
