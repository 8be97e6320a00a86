#include "hdf5/dataset_io.hpp"

#include <map>

#include "hdf5/file.hpp"

namespace h5tile::detail {

void hdf5_read(hid_t dataset, hid_t memory_type, const Box& src, std::byte* dst_base, const Shape& dst_shape,
               const Box& dst) {
  if (src.count() == 0) {
    return;
  }
  const Hdf5Lock lock;
  const SpaceHandle file_space(check(H5Dget_space(dataset), "H5Dget_space"));
  select_box(file_space.get(), src);
  const auto memory_space = make_space(dst_shape);
  select_box(memory_space.get(), dst);
  check(H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, dst_base), "H5Dread");
}

void hdf5_write_all(hid_t dataset, hid_t memory_type, const void* data) {
  const Hdf5Lock lock;
  check(H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "H5Dwrite");
}

void write_chunk(hid_t dataset, const Shape& offset, const void* data, std::size_t bytes, unsigned filter_mask) {
  const Hdf5Lock lock;
  const auto start = hsizes(offset);
  check(H5Dwrite_chunk(dataset, H5P_DEFAULT, filter_mask, start.data(), bytes, data), "H5Dwrite_chunk");
}

std::optional<std::uint64_t> contiguous_offset(hid_t dataset) {
  const Hdf5Lock lock;
  const PlistHandle dcpl(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  if (H5Pget_layout(dcpl.get()) != H5D_CONTIGUOUS || H5Pget_external_count(dcpl.get()) != 0) {
    return std::nullopt;
  }
  const haddr_t address = H5Dget_offset(dataset);
  if (address == HADDR_UNDEF) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;  // not allocated: HDF5 supplies the fill value
  }
  // H5Dget_offset counts from the start of the file, user block included (tested).
  return static_cast<std::uint64_t>(address);
}

std::optional<std::uint64_t> raw_offset(hid_t dataset, hid_t memory_type) {
  const Hdf5Lock lock;
  const TypeHandle file_type(check(H5Dget_type(dataset), "H5Dget_type"));
  if (H5Tequal(file_type.get(), memory_type) <= 0) {
    return std::nullopt;
  }
  return contiguous_offset(dataset);
}

bool raw_chunks(hid_t dataset, hid_t memory_type) {
  const Hdf5Lock lock;
  const PlistHandle dcpl(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  if (H5Pget_layout(dcpl.get()) != H5D_CHUNKED || H5Pget_nfilters(dcpl.get()) != 0) {
    return false;
  }
  const TypeHandle file_type(check(H5Dget_type(dataset), "H5Dget_type"));
  return H5Tequal(file_type.get(), memory_type) > 0;
}

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

std::optional<StoredChunk> chunk_info(hid_t dataset, const Shape& chunk_offset, std::uint64_t base) {
  const auto offset = hsizes(chunk_offset);
  unsigned filter_mask = 0;
  haddr_t address = HADDR_UNDEF;
  hsize_t size = 0;
  if (H5Dget_chunk_info_by_coord(dataset, offset.data(), &filter_mask, &address, &size) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  if (address == HADDR_UNDEF || size == 0) {
    return std::nullopt;
  }
  return StoredChunk{base + static_cast<std::uint64_t>(address), static_cast<std::uint64_t>(size), filter_mask};
}

#if H5_VERSION_GE(1, 14, 0)
// The chunks asked for, keyed by their first element; H5Dchunk_iter fills in where they are.
struct WantedChunks {
  std::map<Shape, std::optional<StoredChunk>> found;
  std::size_t rank = 0;
  std::size_t left = 0;
  std::uint64_t base = 0;
  Shape key;
};

int on_chunk(const hsize_t* offset, unsigned filter_mask, haddr_t address, hsize_t size, void* data) {
  auto& wanted = *static_cast<WantedChunks*>(data);
  wanted.key.assign(offset, offset + wanted.rank);
  const auto it = wanted.found.find(wanted.key);
  if (it != wanted.found.end() && !it->second && address != HADDR_UNDEF && size != 0) {
    it->second =
        StoredChunk{wanted.base + static_cast<std::uint64_t>(address), static_cast<std::uint64_t>(size), filter_mask};
    if (--wanted.left == 0) {
      return H5_ITER_STOP;
    }
  }
  return H5_ITER_CONT;
}
#endif

}  // namespace

std::vector<std::optional<StoredChunk>> stored_chunks(hid_t dataset, const std::vector<Shape>& chunk_offsets) {
  const Hdf5Lock lock;
  std::vector<std::optional<StoredChunk>> chunks;
  chunks.reserve(chunk_offsets.size());
  if (chunk_offsets.empty()) {
    return chunks;
  }
  const auto base = chunk_address_base(dataset);  // the same for both calls (before 1.14.4: the user block)
#if H5_VERSION_GE(1, 14, 0)
  // Offsets in elements since 1.14.0 (HDFGroup/hdf5#1969).
  WantedChunks wanted;
  wanted.rank = chunk_offsets.front().size();
  wanted.base = base;
  for (const auto& offset : chunk_offsets) {
    wanted.found.emplace(offset, std::nullopt);
  }
  wanted.left = wanted.found.size();
  if (H5Dchunk_iter(dataset, H5P_DEFAULT, on_chunk, &wanted) >= 0) {
    for (const auto& offset : chunk_offsets) {
      chunks.push_back(wanted.found.at(offset));
    }
    return chunks;
  }
  H5Eclear2(H5E_DEFAULT);  // then one chunk at a time, as before 1.14
#endif
  for (const auto& offset : chunk_offsets) {
    chunks.push_back(chunk_info(dataset, offset, base));
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
  hsize_t count = 0;
  check(H5Dget_num_chunks(dataset, H5S_ALL, &count), "H5Dget_num_chunks");
  return count;
}

ChunkFilters chunk_filters(hid_t dataset, hid_t memory_type) {
  const Hdf5Lock lock;
  const PlistHandle dcpl(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  const int count = H5Pget_nfilters(dcpl.get());
  ChunkFilters result;
  if (H5Pget_layout(dcpl.get()) != H5D_CHUNKED || count <= 0) {
    return result;
  }
  for (int i = 0; i < count; ++i) {
    unsigned flags = 0;
    std::size_t nvalues = 16;
    std::vector<unsigned> values(nvalues);
    unsigned config = 0;
    const auto id = check(
        H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues, values.data(), 0, nullptr, &config),
        "H5Pget_filter2");
    if (nvalues > values.size()) {
      values.resize(nvalues);
      check(H5Pget_filter_by_id2(dcpl.get(), id, &flags, &nvalues, values.data(), 0, nullptr, &config),
            "H5Pget_filter_by_id2");
    }
    values.resize(nvalues);
    result.filters.push_back({static_cast<unsigned>(id), std::move(values)});
  }
  unsigned options = 0;
  check(H5Pget_chunk_opts(dcpl.get(), &options), "H5Pget_chunk_opts");
  const TypeHandle file_type(check(H5Dget_type(dataset), "H5Dget_type"));
  if ((options & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) != 0) {
    result.obstacle = "partial edge chunks are stored unfiltered";
  } else if (H5Tequal(file_type.get(), memory_type) <= 0) {
    result.obstacle = "the stored type differs from the type read (HDF5 converts it)";
  }
  return result;
}

std::vector<std::string> external_storage_names(hid_t dcpl) {
  const Hdf5Lock lock;
  const int count = check(H5Pget_external_count(dcpl), "H5Pget_external_count");
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    std::string name(4096, '\0');
    off_t offset = 0;
    hsize_t size = 0;
    check(H5Pget_external(dcpl, static_cast<unsigned>(i), name.size(), name.data(), &offset, &size), "H5Pget_external");
    name.resize(name.find('\0'));
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace h5tile::detail
