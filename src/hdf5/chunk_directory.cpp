#include "hdf5/chunk_directory.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <limits>
#include <map>
#include <span>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/chunk_btree.hpp"
#include "hdf5/file.hpp"
#include "hdf5/remote_driver.hpp"

namespace h5tile::detail {

namespace {

// What to add to the chunk addresses HDF5 reports to get file offsets. Before 1.14.4 they count
// from the superblock, not from the start of the file, so a user block shifted every chunk
// (HDFGroup/hdf5#3003, fixed by #4236); H5Dget_offset has always counted it.
std::uint64_t chunk_address_base([[maybe_unused]] hid_t dataset) {
#if H5_VERSION_GE(1, 14, 4)
  return 0;
#else
  const FileHandle file(check(H5Iget_file_id(dataset), "H5Iget_file_id"));
  const PlistHandle fcpl(check(H5Fget_create_plist(file.get()), "H5Fget_create_plist"));
  hsize_t user_block = 0;
  check(H5Pget_userblock(fcpl.get(), &user_block), "H5Pget_userblock");
  return user_block;
#endif
}

// An allocated chunk's storage; nullopt where there is none. A record of size 0 at an address is
// kept (HDF5 itself reads such an unfiltered chunk as uninitialised memory): the readers refuse it.
std::optional<StoredChunk> stored(haddr_t address, hsize_t size, unsigned filter_mask, std::uint64_t base) {
  if (address == HADDR_UNDEF) {
    return std::nullopt;
  }
  return StoredChunk{base + static_cast<std::uint64_t>(address), static_cast<std::uint64_t>(size), filter_mask};
}

// One H5Dget_chunk_info_by_coord call: a walk of the whole index (under the caller's lock).
std::optional<StoredChunk> chunk_info(hid_t dataset, const Shape& chunk_offset, std::uint64_t base) {
  const auto offset = hsizes(chunk_offset);
  unsigned filter_mask = 0;
  haddr_t address = HADDR_UNDEF;
  hsize_t size = 0;
  if (H5Dget_chunk_info_by_coord(dataset, offset.data(), &filter_mask, &address, &size) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  return stored(address, size, filter_mask, base);
}

// Whether `dataset`'s chunks are indexed by `kind` (false where HDF5 cannot say).
bool index_is(hid_t dataset, H5D_chunk_index_t kind) {
  H5D_chunk_index_t index{};
  if (H5Dget_chunk_index_type(dataset, &index) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  return index == kind;
}

#if !H5TILE_HDF5_CHUNK_ITER
// chunks_from_file through a descriptor of the file HDF5 opened for `dataset` (sec2: h5tile's
// local files), or through h5tile's remote driver (a URL); nullopt for another driver.
std::optional<std::vector<std::pair<Shape, StoredChunk>>> chunks_from_hdf5s_file(hid_t dataset) {
  // Before the descriptor's dup: the one-by-one lookups of other indexes come here.
  if (!index_is(dataset, H5D_CHUNK_IDX_BTREE)) return std::nullopt;
  const auto held = file_holding(dataset);
  if (!held) {
    // A remote object: through the driver's block cache, a level of the tree side by side.
    const auto remote = cached_reads_of(dataset);
    if (!remote) return std::nullopt;
    return chunks_read_through(dataset, remote->read, remote->size, ReadAhead{remote->ahead, remote->ahead_bytes});
  }
  std::optional<std::vector<std::pair<Shape, StoredChunk>>> listed;
  try {
    listed = chunks_from_file(dataset, held->fd);
  } catch (...) {
    ::close(held->fd);
    throw;
  }
  ::close(held->fd);
  return listed;
}
#endif

// Calls `each` with the first element and the storage of every allocated chunk of `dataset`, in
// one pass over its index (under the caller's lock): H5Dchunk_iter, or without it a version-1
// B-tree listed from the file (chunks_from_file). False where neither can, or H5Dchunk_iter failed
// (nothing more is reported then).
using EachChunk = std::function<void(const hsize_t* offset, const StoredChunk& chunk)>;
bool walk_index(hid_t dataset, const EachChunk& each) {
#if H5TILE_HDF5_CHUNK_ITER
  struct Walk {
    const EachChunk* each;
    std::uint64_t base;
    std::exception_ptr error;  // from `each`: carried across HDF5's C frames, thrown after the walk
  } walk{&each, chunk_address_base(dataset), nullptr};
  // Offsets in elements (HDFGroup/hdf5#1969, in each release that H5TILE_HDF5_CHUNK_ITER admits).
  const auto on_chunk = [](const hsize_t* offset, unsigned filter_mask, haddr_t address, hsize_t size, void* data) {
    auto& w = *static_cast<Walk*>(data);
    try {
      if (const auto chunk = stored(address, size, filter_mask, w.base)) (*w.each)(offset, *chunk);
    } catch (...) {
      w.error = std::current_exception();
      return H5_ITER_ERROR;
    }
    return H5_ITER_CONT;
  };
  const auto status = H5Dchunk_iter(dataset, H5P_DEFAULT, on_chunk, &walk);
  if (walk.error) {
    H5Eclear2(H5E_DEFAULT);
    std::rethrow_exception(walk.error);
  }
  if (status >= 0) {
    return true;
  }
  H5Eclear2(H5E_DEFAULT);
  return false;  // `each` may have had some of the chunks: no second listing after them
#else
  const auto listed = chunks_from_hdf5s_file(dataset);
  if (!listed) return false;
  std::vector<hsize_t> offset;
  for (const auto& [origin, chunk] : *listed) {
    offset.assign(origin.begin(), origin.end());
    each(offset.data(), chunk);
  }
  return true;
#endif
}

// The number of the chunk that starts at the elements `origin` (indexable, of the rank of
// `grid`): the sum over the axes of its place there (origin / chunk) times `down`; nullopt where
// it lies outside `grid`, the chunks of the current extent (never another chunk's number).
template <typename Origin>
std::optional<std::uint64_t> chunk_number(const Origin& origin, const Shape& chunk, const Shape& grid,
                                          const Shape& down) {
  std::uint64_t number = 0;
  for (std::size_t a = 0; a < grid.size(); ++a) {
    if (origin[a] / chunk[a] >= grid[a]) return std::nullopt;
    number += origin[a] / chunk[a] * down[a];
  }
  return number;
}

// Whether the chunks of `grid` can be numbered in 64 bits (a sparse dataset of 2^62 x 2^62
// chunks cannot: numbers that wrapped would find another chunk's storage).
bool numberable(const Shape& grid) {
  std::uint64_t n = 1;
  for (const auto g : grid) {
    if (g != 0 && n > std::numeric_limits<std::uint64_t>::max() / g) return false;
    n *= g;
  }
  return true;
}

// `down` for chunks numbered in row-major order of `grid`.
Shape row_major_down(const Shape& grid) {
  Shape down(grid.size(), 1);
  for (std::size_t a = grid.size(); a-- > 1;) down[a - 1] = down[a] * grid[a];
  return down;
}

// A dataset whose chunks HDF5 keeps in one block (the implicit chunk index of HDF5 1.10's
// formats: unfiltered, allocated when made, no unlimited axis): chunk number n (chunk_number with
// `down` counting the chunks of the axes after each in the grid of the *maximum* extent, as HDF5
// computes it: H5Dnone.c) starts at first + n * chunk_bytes; `grid` (the current extent's)
// bounds what is read.
struct ImplicitChunks {
  std::uint64_t first = 0;
  std::uint64_t chunk_bytes = 0;
  Shape chunk;
  Shape grid;
  Shape down;
  [[nodiscard]] std::optional<StoredChunk> at(const Shape& origin) const {
    if (origin.size() != grid.size()) return std::nullopt;
    const auto n = chunk_number(origin, chunk, grid, down);
    if (!n) return std::nullopt;
    return StoredChunk{first + *n * chunk_bytes, chunk_bytes, 0};
  }
};

// `dataset`'s chunks where its index is the implicit one and its first and last chunks lie where
// the formula puts them (HDF5's own lookups of the two, each a pass over the computed index);
// nullopt otherwise. Under the caller's lock.
std::optional<ImplicitChunks> implicit_chunks(hid_t dataset) {
  if (!index_is(dataset, H5D_CHUNK_IDX_NONE)) return std::nullopt;
  const SpaceHandle space(check(H5Dget_space(dataset), "H5Dget_space"));
  const int rank = check(H5Sget_simple_extent_ndims(space.get()), "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  std::vector<hsize_t> max_dims(static_cast<std::size_t>(rank));
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), max_dims.data()), "H5Sget_simple_extent_dims");
  const PlistHandle dcpl(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  std::vector<hsize_t> chunk(dims.size());
  if (rank == 0 || H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank) return std::nullopt;
  const TypeHandle type(check(H5Dget_type(dataset), "H5Dget_type"));
  ImplicitChunks found;
  found.chunk_bytes = H5Tget_size(type.get());
  found.down.assign(dims.size(), 1);
  Shape last(dims.size());
  for (std::size_t a = dims.size(); a-- > 0;) {
    // An unlimited axis has no grid to count in: HDF5 never makes such an index (a damaged file).
    if (chunk[a] == 0 || dims[a] == 0 || max_dims[a] == H5S_UNLIMITED || max_dims[a] < dims[a]) return std::nullopt;
    if (a + 1 < dims.size()) found.down[a] = found.down[a + 1] * ((max_dims[a + 1] + chunk[a + 1] - 1) / chunk[a + 1]);
    found.chunk_bytes *= chunk[a];
    last[a] = (dims[a] - 1) / chunk[a] * chunk[a];
  }
  Shape max_grid;
  for (std::size_t a = 0; a < dims.size(); ++a) {
    found.chunk.push_back(chunk[a]);
    found.grid.push_back(dims[a] / chunk[a] + (dims[a] % chunk[a] != 0 ? 1 : 0));
    max_grid.push_back(max_dims[a] / chunk[a] + (max_dims[a] % chunk[a] != 0 ? 1 : 0));
  }
  if (!numberable(max_grid)) return std::nullopt;  // never so many chunks in one block (a damaged file)
  const auto base = chunk_address_base(dataset);
  const auto head = chunk_info(dataset, Shape(dims.size(), 0), base);
  const auto tail = chunk_info(dataset, last, base);
  if (!head || !tail || head->size != found.chunk_bytes || head->filter_mask != 0) return std::nullopt;
  found.first = head->offset;
  const auto tail_at = found.at(last);
  if (!tail_at || tail_at->offset != tail->offset) return std::nullopt;
  return found;
}

}  // namespace

std::vector<std::optional<StoredChunk>> stored_chunks(hid_t dataset, const std::vector<Shape>& chunk_offsets) {
  const Hdf5Lock lock;
  std::vector<std::optional<StoredChunk>> chunks;
  chunks.reserve(chunk_offsets.size());
  if (chunk_offsets.empty()) {
    return chunks;
  }
  if (const auto implicit = implicit_chunks(dataset)) {
    for (const auto& offset : chunk_offsets) chunks.push_back(implicit->at(offset));
    return chunks;
  }
  std::map<Shape, std::optional<StoredChunk>> wanted;
  for (const auto& offset : chunk_offsets) wanted.emplace(offset, std::nullopt);
  const auto rank = chunk_offsets.front().size();
  Shape key;
  const bool walked = walk_index(dataset, [&](const hsize_t* offset, const StoredChunk& chunk) {
    key.assign(offset, offset + rank);
    if (const auto it = wanted.find(key); it != wanted.end()) it->second = chunk;
  });
  const auto base = walked ? 0 : chunk_address_base(dataset);
  for (const auto& offset : chunk_offsets) {
    chunks.push_back(walked ? wanted.at(offset) : chunk_info(dataset, offset, base));
  }
  return chunks;
}

std::vector<std::optional<std::uint64_t>> locate_chunks(hid_t dataset, const std::vector<Shape>& chunk_offsets) {
  std::vector<std::optional<std::uint64_t>> addresses;
  addresses.reserve(chunk_offsets.size());
  for (const auto& chunk : stored_chunks(dataset, chunk_offsets)) {
    addresses.push_back(chunk ? std::optional(chunk->offset) : std::nullopt);
  }
  return addresses;
}

std::vector<std::pair<Shape, StoredChunk>> allocated_chunks(hid_t dataset) {
  const Hdf5Lock lock;
  std::vector<std::pair<Shape, StoredChunk>> chunks;
  const SpaceHandle space(check(H5Dget_space(dataset), "H5Dget_space"));
  const auto rank =
      static_cast<std::size_t>(check(H5Sget_simple_extent_ndims(space.get()), "H5Sget_simple_extent_ndims"));
  if (walk_index(dataset, [&](const hsize_t* offset, const StoredChunk& chunk) {
        chunks.emplace_back(Shape(offset, offset + rank), chunk);
      })) {
    return chunks;
  }
  chunks.clear();
  hsize_t count = 0;
  check(H5Dget_num_chunks(dataset, space.get(), &count), "H5Dget_num_chunks");
  const auto base = chunk_address_base(dataset);
  std::vector<hsize_t> offset(rank);
  for (hsize_t i = 0; i < count; ++i) {
    unsigned filter_mask = 0;
    haddr_t address = HADDR_UNDEF;
    hsize_t size = 0;
    check(H5Dget_chunk_info(dataset, space.get(), i, offset.data(), &filter_mask, &address, &size),
          "H5Dget_chunk_info");
    if (const auto chunk = stored(address, size, filter_mask, base)) {
      chunks.emplace_back(Shape(offset.begin(), offset.end()), *chunk);
    }
  }
  return chunks;
}

std::uint64_t count_chunks(hid_t dataset) {
  const Hdf5Lock lock;
  // The dataset's whole space: HDF5 before 1.12 does not take H5S_ALL here.
  const SpaceHandle space(check(H5Dget_space(dataset), "H5Dget_space"));
  hsize_t count = 0;
  check(H5Dget_num_chunks(dataset, space.get(), &count), "H5Dget_num_chunks");
  return count;
}

std::optional<unsigned> read_stored_chunk(hid_t dataset, const Shape& origin,
                                          const std::function<std::byte*(std::size_t)>& room,
                                          const std::string& where) {
  const Hdf5Lock lock;
  const auto offset = hsizes(origin);
  hsize_t size = 0;
  // Not allocated: an error before 1.14 (the origin is a chunk's first element), a size of 0 later.
  if (H5Dget_chunk_storage_size(dataset, offset.data(), &size) < 0 || size == 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  // A record larger than the file is damage: refused before memory is allocated for it.
  const FileHandle file(check(H5Iget_file_id(dataset), "H5Iget_file_id"));
  hsize_t file_size = 0;
  if (H5Fget_filesize(file.get(), &file_size) >= 0 && size > file_size) {
    throw RuntimeError(
        fmt::format("{}: the chunk at {} is recorded with {} bytes, more than the whole file ({} "
                    "bytes): its chunk index is damaged",
                    where, to_string(origin), size, file_size));
  }
  H5Eclear2(H5E_DEFAULT);
  std::uint32_t filter_mask = 0;
  check(H5Dread_chunk(dataset, H5P_DEFAULT, offset.data(), &filter_mask, room(size)), "H5Dread_chunk");
  return filter_mask;
}

namespace {

// Where `dataset`'s object header lies: its address (from the base).
std::optional<std::uint64_t> object_address(hid_t dataset, hid_t file) {
  haddr_t address = HADDR_UNDEF;
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info{};
  if (H5Oget_info3(dataset, &info, H5O_INFO_BASIC) < 0 || H5VLnative_token_to_addr(file, info.token, &address) < 0) {
#else
  (void)file;
  H5O_info_t info{};
  const bool failed = H5Oget_info2(dataset, &info, H5O_INFO_BASIC) < 0;
  address = info.addr;
  if (failed) {
#endif
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  if (address == HADDR_UNDEF) return std::nullopt;
  return address;
}

// Reads whole, through `fd`.
bool read_whole(int fd, std::uint64_t offset, std::span<std::byte> into) {
  while (!into.empty()) {
    const auto got = ::pread(fd, into.data(), into.size(), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    into = into.subspan(static_cast<std::size_t>(got));
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::pair<Shape, StoredChunk>>> chunks_from_file(hid_t dataset, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return chunks_read_through(
      dataset, [fd](std::uint64_t offset, std::span<std::byte> into) { return read_whole(fd, offset, into); },
      static_cast<std::uint64_t>(st.st_size));
}

std::optional<std::vector<std::pair<Shape, StoredChunk>>> chunks_read_through(hid_t dataset, const ReadAt& read,
                                                                              std::uint64_t file_size,
                                                                              const ReadAhead& ahead) {
  const Hdf5Lock lock;
  if (!index_is(dataset, H5D_CHUNK_IDX_BTREE)) return std::nullopt;
  const FileHandle file(check(H5Iget_file_id(dataset), "H5Iget_file_id"));
  unsigned intent = 0;
  check(H5Fget_intent(file.get(), &intent), "H5Fget_intent");
  // Open for writing here, or read as SWMR: HDF5's view of the index may be nodes not in the file.
  if ((intent & (H5F_ACC_RDWR | H5F_ACC_SWMR_READ)) != 0) return std::nullopt;
  const PlistHandle fcpl(check(H5Fget_create_plist(file.get()), "H5Fget_create_plist"));
  ChunkBtreeFormat format;
  hsize_t user_block = 0;
  unsigned istore_k = 0;
  check(H5Pget_sizes(fcpl.get(), &format.address_bytes, &format.length_bytes), "H5Pget_sizes");
  check(H5Pget_userblock(fcpl.get(), &user_block), "H5Pget_userblock");
  check(H5Pget_istore_k(fcpl.get(), &istore_k), "H5Pget_istore_k");
  format.base = user_block;
  format.max_entries = 2 * istore_k;
  const SpaceHandle space(check(H5Dget_space(dataset), "H5Dget_space"));
  const int rank = check(H5Sget_simple_extent_ndims(space.get()), "H5Sget_simple_extent_ndims");
  const PlistHandle dcpl(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  std::vector<hsize_t> chunk(static_cast<std::size_t>(rank));
  if (rank == 0 || H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank) return std::nullopt;
  const TypeHandle type(check(H5Dget_type(dataset), "H5Dget_type"));
  format.chunk.assign(chunk.begin(), chunk.end());
  format.chunk.push_back(static_cast<std::uint32_t>(H5Tget_size(type.get())));
  format.file_size = file_size;
  const auto header = object_address(dataset, file.get());
  if (!header) return std::nullopt;
  const auto root = chunk_index_address(*header, read, format);
  if (!root) return std::nullopt;
  auto chunks = chunk_btree_chunks(*root, read, format, ahead);
  if (!chunks || chunks->size() != count_chunks(dataset)) return std::nullopt;
  const auto base = chunk_address_base(dataset);
  constexpr std::size_t kSampled = 8;
  for (std::size_t k = 0; k < kSampled && !chunks->empty(); ++k) {
    const auto& [origin, listed] = (*chunks)[k * (chunks->size() - 1) / (kSampled - 1)];
    const auto asked = chunk_info(dataset, origin, base);
    if (!asked || asked->offset != listed.offset || asked->size != listed.size ||
        asked->filter_mask != listed.filter_mask) {
      return std::nullopt;
    }
  }
  return chunks;
}

namespace {

// Without H5Dchunk_iter (HDF5 before 1.10.10, 1.12.0 to 1.12.2), chunks are looked up one by one (a walk of the index
// each: all of N chunks in time N^2, BENCHMARKS.md "Finding the chunks") while that costs little in all (up to 1024
// chunks: 8 ms on the CPU machine), or less than HDF5's serial read of them: at most one chunk in the index per 64
// bytes of a chunk, and at most 16384 chunks (1.7 s for all of them there, where reading 16 GiB of 1 MiB chunks through
// HDF5 takes about 4 s; 65536 took 251 s). Beyond, HDF5 reads the chunks, one at a time: 8 GiB of 1 MiB chunks went to
// device memory at 3.6 GiB/s that way on one H200 machine, while h5tile's own parallel reads need the chunks' places.
constexpr std::uint64_t kBytesPerIndexedChunk = 64;
constexpr std::uint64_t kAlwaysOneByOne = 1024;  // chunks
constexpr std::uint64_t kMostOneByOne = 16384;   // chunks

}  // namespace

ChunkDirectory::ChunkDirectory(hid_t dataset, int fd, Shape chunk, std::uint64_t chunk_bytes, bool unfiltered,
                               std::string where, std::int64_t size_without_fd)
    : dataset_(dataset),
      fd_(fd),
      size_without_fd_(size_without_fd),
      chunk_(std::move(chunk)),
      chunk_bytes_(chunk_bytes),
      unfiltered_(unfiltered),
      where_(std::move(where)) {}

void ChunkDirectory::check_records(const std::vector<Shape>& origins,
                                   const std::vector<std::optional<StoredChunk>>& found, std::int64_t file_size) const {
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (!found[i]) continue;
    const auto& c = *found[i];
    const auto name = [&] { return fmt::format("{}: chunk {}", where_, to_string(Box{origins[i], chunk_})); };
    if (file_size >= 0 && (c.offset > static_cast<std::uint64_t>(file_size) ||
                           c.size > static_cast<std::uint64_t>(file_size) - c.offset)) {
      throw RuntimeError(
          fmt::format("{} is recorded at byte {} with {} bytes, past the end of the file ({} bytes): "
                      "its chunk index is damaged",
                      name(), c.offset, c.size, file_size));
    }
    if (unfiltered_ && c.size != chunk_bytes_) {
      throw RuntimeError(
          fmt::format("{} is recorded with {} bytes, but an unfiltered chunk of this dataset holds {}: "
                      "its chunk index is damaged",
                      name(), c.size, chunk_bytes_));
    }
  }
}

ChunkDirectory::Signature ChunkDirectory::signature() const {
  Signature now;
  {
    const Hdf5Lock lock;
    const SpaceHandle space(check(H5Dget_space(dataset_), "H5Dget_space"));
    const int rank = check(H5Sget_simple_extent_ndims(space.get()), "H5Sget_simple_extent_ndims");
    now.dims.resize(static_cast<std::size_t>(rank));
    check(H5Sget_simple_extent_dims(space.get(), now.dims.data(), nullptr), "H5Sget_simple_extent_dims");
  }
  struct stat st {};
  if (fd_ >= 0 && ::fstat(fd_, &st) == 0) {
    constexpr std::int64_t kNs = 1'000'000'000;
    now.file_size = st.st_size;
    now.modified_ns = std::int64_t{st.st_mtim.tv_sec} * kNs + st.st_mtim.tv_nsec;
    now.changed_ns = std::int64_t{st.st_ctim.tv_sec} * kNs + st.st_ctim.tv_nsec;
  } else if (fd_ < 0) {
    now.file_size = size_without_fd_;
  }
  return now;
}

std::shared_ptr<const ChunkDirectory::Listing> ChunkDirectory::build(Signature signature) const {
  auto listing = std::make_shared<Listing>();
  listing->signature = std::move(signature);
  const auto& dims = listing->signature.dims;
  auto& grid = listing->grid;
  grid.resize(dims.size());
  for (std::size_t a = 0; a < dims.size(); ++a) grid[a] = dims[a] / chunk_[a] + (dims[a] % chunk_[a] != 0 ? 1 : 0);
  listing->down = row_major_down(grid);
  if (!numberable(grid)) {
    listing->mode = Mode::OneByOne;  // each chunk looked up by its coordinates
    return listing;
  }
  const Hdf5Lock lock;
  if (auto implicit = implicit_chunks(dataset_)) {
    listing->mode = Mode::Implicit;
    listing->first = implicit->first;
    listing->chunk_bytes = implicit->chunk_bytes;
    listing->down = std::move(implicit->down);
    return listing;
  }
  const bool listed = walk_index(dataset_, [&](const hsize_t* offset, const StoredChunk& chunk) {
    // A chunk beyond a shrunk extent is never read: left out.
    if (const auto number = chunk_number(offset, chunk_, grid, listing->down)) {
      listing->chunks.emplace_back(*number, chunk);
    }
  });
  if (listed) {
    std::sort(listing->chunks.begin(), listing->chunks.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    listing->mode = Mode::Listed;
    return listing;
  }
  listing->chunks.clear();
  const auto count = count_chunks(dataset_);  // one walk of the index
  if (count <= kAlwaysOneByOne || (count <= kMostOneByOne && count * kBytesPerIndexedChunk <= chunk_bytes_)) {
    listing->mode = Mode::OneByOne;
    return listing;
  }
  listing->mode = Mode::ThroughHdf5;
#if H5TILE_HDF5_CHUNK_ITER
  listing->why = fmt::format(
      "HDF5 {}.{}.{} could not list its {} chunks in one pass (H5Dchunk_iter failed), and finding each with a walk "
      "of the whole chunk index costs more than reading it, so HDF5 reads them",
      H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, count);
#else
  listing->why = fmt::format(
      "HDF5 {}.{}.{} finds each of its {} chunks with a walk of the whole chunk index (1.10.10, 1.12.3 and 1.14 list "
      "them in one), so HDF5 reads them",
      H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, count);
#endif
  return listing;
}

std::shared_ptr<const ChunkDirectory::Listing> ChunkDirectory::current() const {
  auto now = signature();
  const std::lock_guard lock(mutex_);
  if (!listing_ || !(listing_->signature == now)) {
    listing_ = build(std::move(now));
  }
  return listing_;
}

std::optional<std::vector<std::optional<StoredChunk>>> ChunkDirectory::find(const std::vector<Shape>& origins) const {
  const auto listing = current();
  switch (listing->mode) {
    case Mode::ThroughHdf5: return std::nullopt;
    case Mode::OneByOne: {
      auto found = remembered(*listing, origins);
      check_records(origins, found, listing->signature.file_size);
      return found;
    }
    case Mode::Implicit:
    case Mode::Listed: break;
  }
  const auto& chunks = listing->chunks;
  std::vector<std::optional<StoredChunk>> found;
  found.reserve(origins.size());
  for (const auto& origin : origins) {
    const auto number = origin.size() == listing->grid.size()
                            ? chunk_number(origin, chunk_, listing->grid, listing->down)
                            : std::nullopt;  // outside the grid: none
    if (!number) {
      found.emplace_back();
    } else if (listing->mode == Mode::Implicit) {
      found.push_back(StoredChunk{listing->first + *number * listing->chunk_bytes, listing->chunk_bytes, 0});
    } else {
      const auto it = std::lower_bound(chunks.begin(), chunks.end(), *number,
                                       [](const auto& entry, std::uint64_t n) { return entry.first < n; });
      found.push_back(it != chunks.end() && it->first == *number ? std::optional(it->second) : std::nullopt);
    }
  }
  check_records(origins, found, listing->signature.file_size);
  return found;
}

std::vector<std::optional<StoredChunk>> ChunkDirectory::ask(const std::vector<Shape>& origins) const {
  asked_ += origins.size();
  return stored_chunks(dataset_, origins);
}

std::vector<std::optional<StoredChunk>> ChunkDirectory::remembered(const Listing& listing,
                                                                   const std::vector<Shape>& origins) const {
  if (!numberable(listing.grid)) return ask(origins);  // no numbers to remember them by
  std::vector<std::optional<StoredChunk>> found(origins.size());
  std::vector<std::optional<std::uint64_t>> numbers(origins.size());
  std::vector<Shape> asked;
  std::vector<std::size_t> at;  // where each asked chunk goes in `found`
  {
    const std::lock_guard lock(listing.looked_up_mutex);
    for (std::size_t i = 0; i < origins.size(); ++i) {
      if (origins[i].size() == listing.grid.size()) {
        numbers[i] = chunk_number(origins[i], chunk_, listing.grid, listing.down);
      }
      if (!numbers[i]) continue;  // outside the current extent: none (as a listing answers)
      const auto known = listing.looked_up.find(*numbers[i]);
      if (known != listing.looked_up.end()) {
        found[i] = known->second;
      } else {
        asked.push_back(origins[i]);
        at.push_back(i);
      }
    }
  }
  if (asked.empty()) return found;
  const auto answers = ask(asked);  // under HDF5's lock, not the memory's
  const std::lock_guard lock(listing.looked_up_mutex);
  for (std::size_t k = 0; k < asked.size(); ++k) {
    found[at[k]] = answers[k];
    listing.looked_up.emplace(*numbers[at[k]], answers[k]);
  }
  return found;
}

std::string ChunkDirectory::why_through_hdf5() const {
  const std::lock_guard lock(mutex_);
  return listing_ ? listing_->why : std::string();
}

}  // namespace h5tile::detail
