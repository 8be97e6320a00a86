#include "hdf5/describe.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"

namespace h5tile::detail {

const char* storage_name(Storage storage) noexcept {
  switch (storage) {
    case Storage::Contiguous: return "contiguous";
    case Storage::Chunked: return "chunked";
    case Storage::Compact: return "compact";
    case Storage::Virtual: return "virtual";
    case Storage::Other: break;
  }
  return "other";
}

PlistHandle creation_plist(hid_t dataset) {
  const Hdf5Lock lock;
  return PlistHandle(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
}

DatasetDescription describe_dataset(hid_t dataset, const std::string& where, bool allow_null_space) {
  const Hdf5Lock lock;
  DatasetDescription d;
  const TypeHandle type(check(H5Dget_type(dataset), "H5Dget_type"));
  d.dtype = dtype_of_type(type.get(), where);
  d.memory_type = memory_type_for(type.get(), d.dtype);
  d.charset = string_charset(type.get());
  d.numpy_type = structured_numpy_type(type.get());
  const SpaceHandle space(check(H5Dget_space(dataset), "H5Dget_space"));
  if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) {
    if (!allow_null_space) {
      throw UnsupportedType(
          fmt::format("{} has a null dataspace (no elements, no shape): it holds no data to read", where));
    }
    d.null_space = true;
    d.storage = H5Pget_layout(creation_plist(dataset).get()) == H5D_COMPACT ? Storage::Compact : Storage::Contiguous;
    return d;
  }
  d.shape = shape_of(space.get());
  d.max_shape = max_shape_of(space.get());
  const auto dcpl = creation_plist(dataset);
  switch (H5Pget_layout(dcpl.get())) {
    case H5D_CONTIGUOUS: d.storage = Storage::Contiguous; break;
    case H5D_COMPACT: d.storage = Storage::Compact; break;
    case H5D_VIRTUAL: d.storage = Storage::Virtual; break;
    case H5D_CHUNKED: {
      d.storage = Storage::Chunked;
      std::vector<hsize_t> dims(d.shape.size());
      check(H5Pget_chunk(dcpl.get(), static_cast<int>(dims.size()), dims.data()), "H5Pget_chunk");
      d.chunk.assign(dims.begin(), dims.end());
      const int n = H5Pget_nfilters(dcpl.get());
      for (int i = 0; i < n; ++i) {
        unsigned flags = 0;
        constexpr std::size_t kMaxValues = 32;
        std::vector<unsigned> values(kMaxValues);
        std::size_t nvalues = values.size();
        unsigned config = 0;
        const auto id =
            H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues, values.data(), 0, nullptr, &config);
        d.filters.push_back(filter_name(static_cast<unsigned>(id)));
        values.resize(std::min(nvalues, kMaxValues));
        d.filter_values.push_back(std::move(values));
      }
      break;
    }
    default: d.storage = Storage::Other; break;
  }
  return d;
}

NamedType named_type_of(hid_t object, const std::string& where) {
  const Hdf5Lock lock;
  if (H5Iget_type(object) != H5I_DATATYPE) {
    throw NotADataset(fmt::format("{} is not a named datatype", where));
  }
  NamedType named;
  named.dtype = dtype_of_type(object, where);
  named.numpy_type = structured_numpy_type(object);
  named.charset = string_charset(object);
  return named;
}

std::uint64_t storage_bytes(hid_t dataset) {
  const Hdf5Lock lock;
  return H5Dget_storage_size(dataset);
}

namespace {

// Whether `dcpl` has a fill value HDF5 can give (H5Pget_fill_value fails for one made undefined
// with H5Pset_fill_value(dcpl, type, NULL): what never-written elements then hold is unknown).
bool fill_value_known(hid_t dcpl) {
  H5D_fill_value_t status{};
  check(H5Pfill_value_defined(dcpl, &status), "H5Pfill_value_defined");
  return status != H5D_FILL_VALUE_UNDEFINED;
}

}  // namespace

void fill_value(hid_t dataset, hid_t memory_type, void* out) {
  const Hdf5Lock lock;
  const auto dcpl = creation_plist(dataset);
  if (!fill_value_known(dcpl.get())) {  // zeros, as h5py's fillvalue gives then
    std::memset(out, 0, H5Tget_size(memory_type));
    return;
  }
  check(H5Pget_fill_value(dcpl.get(), memory_type, out), "H5Pget_fill_value");
}

std::string string_fill_value(hid_t dataset, hid_t memory_type) {
  const Hdf5Lock lock;
  const auto dcpl = creation_plist(dataset);
  if (!fill_value_known(dcpl.get())) return {};
  char* element = nullptr;  // HDF5 allocates the string (none where no fill value is set)
  check(H5Pget_fill_value(dcpl.get(), memory_type, static_cast<void*>(&element)), "H5Pget_fill_value");
  if (element == nullptr) return {};
  std::string value(element);
  H5free_memory(element);
  return value;
}

}  // namespace h5tile::detail
