#include "hdf5/chunk_directory.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "hdf5/file.hpp"

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

std::optional<StoredChunk> stored(haddr_t address, hsize_t size, unsigned filter_mask, std::uint64_t base) {
  if (address == HADDR_UNDEF || size == 0) {
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

// Calls `each` with the first element and the storage of every allocated chunk of `dataset`, in
// one pass over its index (under the caller's lock); false where this HDF5 cannot (before 1.14,
// or H5Dchunk_iter failed: nothing more is reported then).
using EachChunk = std::function<void(const hsize_t* offset, const StoredChunk& chunk)>;
bool walk_index([[maybe_unused]] hid_t dataset, [[maybe_unused]] const EachChunk& each) {
#if H5_VERSION_GE(1, 14, 0)
  struct Walk {
    const EachChunk* each;
    std::uint64_t base;
  } walk{&each, chunk_address_base(dataset)};
  // Offsets in elements since 1.14.0 (HDFGroup/hdf5#1969).
  const auto on_chunk = [](const hsize_t* offset, unsigned filter_mask, haddr_t address, hsize_t size, void* data) {
    const auto& w = *static_cast<const Walk*>(data);
    if (const auto chunk = stored(address, size, filter_mask, w.base)) (*w.each)(offset, *chunk);
    return H5_ITER_CONT;
  };
  if (H5Dchunk_iter(dataset, H5P_DEFAULT, on_chunk, &walk) >= 0) {
    return true;
  }
  H5Eclear2(H5E_DEFAULT);
#endif
  return false;
}

}  // namespace

std::vector<std::optional<StoredChunk>> stored_chunks(hid_t dataset, const std::vector<Shape>& chunk_offsets) {
  const Hdf5Lock lock;
  std::vector<std::optional<StoredChunk>> chunks;
  chunks.reserve(chunk_offsets.size());
  if (chunk_offsets.empty()) {
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

std::uint64_t count_chunks(hid_t dataset) {
  const Hdf5Lock lock;
  // The dataset's whole space: HDF5 before 1.12 does not take H5S_ALL here.
  const SpaceHandle space(check(H5Dget_space(dataset), "H5Dget_space"));
  hsize_t count = 0;
  check(H5Dget_num_chunks(dataset, space.get(), &count), "H5Dget_num_chunks");
  return count;
}

std::optional<unsigned> read_stored_chunk(hid_t dataset, const Shape& origin,
                                          const std::function<std::byte*(std::size_t)>& room) {
  const Hdf5Lock lock;
  const auto offset = hsizes(origin);
  hsize_t size = 0;
  // Not allocated: an error before 1.14 (the origin is a chunk's first element), a size of 0 later.
  if (H5Dget_chunk_storage_size(dataset, offset.data(), &size) < 0 || size == 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  std::uint32_t filter_mask = 0;
  check(H5Dread_chunk(dataset, H5P_DEFAULT, offset.data(), &filter_mask, room(size)), "H5Dread_chunk");
  return filter_mask;
}

namespace {

// Before 1.14, chunks are looked up one by one (a walk of the index each, about 10 ns per chunk
// of the index) while that costs little in all (up to 1024 chunks: about a million steps, a few
// milliseconds), or a small part of moving the chunks: at most one chunk in the index per 256
// bytes of a chunk, against 4 GB/s for a serial read.
constexpr std::uint64_t kBytesPerIndexedChunk = 256;
constexpr std::uint64_t kAlwaysOneByOne = 1024;  // chunks

}  // namespace

ChunkDirectory::ChunkDirectory(hid_t dataset, Shape chunk, std::uint64_t chunk_bytes)
    : dataset_(dataset), chunk_(std::move(chunk)), chunk_bytes_(chunk_bytes) {}

void ChunkDirectory::build() const {
  const Hdf5Lock lock;
  const SpaceHandle space(check(H5Dget_space(dataset_), "H5Dget_space"));
  const int rank = check(H5Sget_simple_extent_ndims(space.get()), "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), "H5Sget_simple_extent_dims");
  grid_.resize(dims.size());
  for (std::size_t a = 0; a < dims.size(); ++a) grid_[a] = (dims[a] + chunk_[a] - 1) / chunk_[a];
  const bool listed = walk_index(dataset_, [&](const hsize_t* offset, const StoredChunk& chunk) {
    std::uint64_t number = 0;
    for (std::size_t a = 0; a < grid_.size(); ++a) {
      if (offset[a] / chunk_[a] >= grid_[a]) return;  // beyond the extent (shrunk): never read
      number = number * grid_[a] + offset[a] / chunk_[a];
    }
    listed_.emplace_back(number, chunk);
  });
  if (listed) {
    std::sort(listed_.begin(), listed_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    mode_ = Mode::Listed;
    return;
  }
  listed_.clear();
  const auto count = count_chunks(dataset_);  // one walk of the index
  if (count <= kAlwaysOneByOne || count * kBytesPerIndexedChunk <= chunk_bytes_) {
    mode_ = Mode::OneByOne;
    return;
  }
  mode_ = Mode::ThroughHdf5;
  why_ = fmt::format(
      "HDF5 {}.{}.{} finds each of its {} chunks with a walk of the whole chunk index (1.14 lists them in one), "
      "so HDF5 reads them",
      H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, count);
}

std::optional<std::vector<std::optional<StoredChunk>>> ChunkDirectory::find(const std::vector<Shape>& origins) const {
  std::call_once(built_, [this] { build(); });
  switch (mode_) {
    case Mode::ThroughHdf5: return std::nullopt;
    case Mode::OneByOne: return stored_chunks(dataset_, origins);
    case Mode::Listed: break;
  }
  std::vector<std::optional<StoredChunk>> found;
  found.reserve(origins.size());
  for (const auto& origin : origins) {
    std::uint64_t number = 0;
    for (std::size_t a = 0; a < grid_.size(); ++a) number = number * grid_[a] + origin[a] / chunk_[a];
    const auto it = std::lower_bound(listed_.begin(), listed_.end(), number,
                                     [](const auto& entry, std::uint64_t n) { return entry.first < n; });
    found.push_back(it != listed_.end() && it->first == number ? std::optional(it->second) : std::nullopt);
  }
  return found;
}

std::string ChunkDirectory::why_through_hdf5() const { return why_; }

}  // namespace h5tile::detail
