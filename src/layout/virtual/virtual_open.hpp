#pragma once
// Opening a virtual dataset for reading (layout/opener.hpp calls it): its mapping decoded, each
// source found (HDF5_VDS_PREFIX, then beside the file), confined to the folder of the file
// unless allowed out, and opened (tiles h5tile wrote by their tile table, others with HDF5), or
// the whole dataset left to HDF5 where its mapping is not box to box. A remote file's sources:
// remote_sources.hpp.

#include <cstdint>
#include <optional>

#include "hdf5/handle.hpp"
#include "layout/boxes.hpp"
#include "layout/opened_dataset.hpp"

namespace h5tile::detail {

// The virtual dataset `opened` (its file, dataset and info in place) with dataset creation
// property list `dcpl`, in a local file: its sources opened and mapped. Throws
// VirtualSourceError naming the source that is missing, outside the folder or unusable.
void open_virtual(OpenedDataset& opened, hid_t dcpl);

// For metadata_only: info.virtual_sources, and (local files) info.stored_bytes, without opening
// the sources.
void describe_virtual(OpenedDataset& opened, hid_t dcpl);

// A mapping h5tile's box-to-box reads do not model but HDF5 reads (same_but_unit_axes).
struct ReshapedMapping {};

// One mapping of a virtual dataset onto source `index` of `opened` (`src`: its region, nullopt
// the whole source): VirtualSourceError where the region does not fit the source or differs in
// shape from `dst`; an empty `dst` maps nothing. Throws ReshapedMapping where `src` and `dst`
// hold the same elements in other shapes.
void map_source(OpenedDataset& opened, std::size_t index, const std::optional<Box>& src, const Box& dst,
                std::optional<std::uint64_t> checksum, std::uint64_t raw_offset);

}  // namespace h5tile::detail
