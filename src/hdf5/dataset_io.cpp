#include "hdf5/dataset_io.hpp"

#include <cstring>
#include <type_traits>
#include <vector>

#include "hdf5/file.hpp"

namespace h5tile::detail {

namespace {

// Whether HDF5 leaves the buffer untouched where `dataset` has no storage (fill time "never").
bool fills_nothing(hid_t dataset) {
  const PlistHandle dcpl(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  H5D_fill_time_t when = H5D_FILL_TIME_IFSET;
  check(H5Pget_fill_time(dcpl.get(), &when), "H5Pget_fill_time");
  // A damaged file may hold a value outside the enumeration: compared as its bytes (loading it
  // as the enum would be undefined; the fuzzer found one).
  std::underlying_type_t<H5D_fill_time_t> raw = 0;
  std::memcpy(&raw, &when, sizeof raw);
  return raw == static_cast<std::underlying_type_t<H5D_fill_time_t>>(H5D_FILL_TIME_NEVER);
}

}  // namespace

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
  if (fills_nothing(dataset) && H5Tdetect_class(memory_type, H5T_VLEN) <= 0 && H5Tis_variable_str(memory_type) <= 0) {
    // HDF5 then leaves the buffer as it was where nothing was ever written: zeros there, as in
    // h5py's buffers, never what this memory held before.
    const std::vector<std::byte> zero(H5Tget_size(memory_type));
    check(H5Dfill(zero.data(), memory_type, dst_base, memory_type, memory_space.get()), "H5Dfill");
  }
  check(H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, dst_base), "H5Dread");
}

namespace {

// Frees what H5Dread allocated for variable-length data (H5Treclaim from 1.12 on).
herr_t reclaim(hid_t memory_type, hid_t memory_space, void* buffer) {
#if H5_VERSION_GE(1, 12, 0)
  return H5Treclaim(memory_type, memory_space, H5P_DEFAULT, buffer);
#else
  return H5Dvlen_reclaim(memory_type, memory_space, H5P_DEFAULT, buffer);
#endif
}

}  // namespace

std::vector<std::string> hdf5_read_strings(hid_t dataset, hid_t memory_type, const Box& src) {
  const auto n = static_cast<std::size_t>(src.count());
  if (n == 0) {
    return {};
  }
  const Hdf5Lock lock;
  const SpaceHandle file_space(check(H5Dget_space(dataset), "H5Dget_space"));
  select_box(file_space.get(), src);
  const auto memory_space = make_space(src.extent);
  std::vector<char*> pointers(n, nullptr);
  check(H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, pointers.data()), "H5Dread");
  std::vector<std::string> strings;
  try {
    strings.reserve(n);
    for (const char* p : pointers) strings.emplace_back(p == nullptr ? "" : p);
  } catch (...) {
    (void)reclaim(memory_type, memory_space.get(), pointers.data());
    throw;
  }
  // HDF5 allocated each string: HDF5 frees them.
  check(reclaim(memory_type, memory_space.get(), pointers.data()), "H5Treclaim");
  return strings;
}

void hdf5_write_all(hid_t dataset, hid_t memory_type, const void* data) {
  const Hdf5Lock lock;
  check(H5Dwrite(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "H5Dwrite");
}

void hdf5_write(hid_t dataset, hid_t memory_type, const Shape& start, const Shape& count, const Shape& step,
                const void* data) {
  if (element_count(count) == 0) return;
  const Hdf5Lock lock;
  const SpaceHandle file_space(check(H5Dget_space(dataset), "H5Dget_space"));
  const auto memory_space = make_space(count);
  if (!start.empty()) {
    const auto first = hsizes(start);
    const auto counts = hsizes(count);
    const auto strides = hsizes(step);
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, first.data(), strides.data(), counts.data(), nullptr),
          "H5Sselect_hyperslab");
  }
  check(H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data), "H5Dwrite");
}

bool hdf5_applies_filters(hid_t dataset) {
  const Hdf5Lock lock;
  const PlistHandle dcpl(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  const int count = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < count; ++i) {
    unsigned flags = 0;
    std::size_t values = 0;
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &values, nullptr, 0, nullptr, nullptr);
    if (id < 0 || H5Zfilter_avail(id) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
  }
  return count >= 0;
}

void flush_dataset(hid_t dataset) {
  const Hdf5Lock lock;
  check(H5Dflush(dataset), "H5Dflush");
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
  // Not allocated: HDF5 supplies the fill value. H5Dget_offset alone does not say so in a file
  // with a user block: it adds the block's size to the undefined address, which wraps round to a
  // small offset (the superblock's).
  H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
  if (H5Dget_space_status(dataset, &status) < 0 || status != H5D_SPACE_STATUS_ALLOCATED) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  const haddr_t address = H5Dget_offset(dataset);
  if (address == HADDR_UNDEF) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
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

bool hdf5_decodes(hid_t dataset) {
  const Hdf5Lock lock;
  const PlistHandle dcpl(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  const auto layout = H5Pget_layout(dcpl.get());
  return layout == H5D_VIRTUAL || (layout == H5D_CHUNKED && H5Pget_nfilters(dcpl.get()) > 0);
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
