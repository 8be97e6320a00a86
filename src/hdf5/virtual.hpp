#pragma once
// The mappings of virtual datasets (H5Pset_virtual, H5Pget_virtual_*) and the dataspace
// selections they are made of. Source names are passed as HDF5 stores them: escaping them
// (virtual_map.hpp) and checking mappings against each other is layout/'s business.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <h5tile/array.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// Whether the creation property list `dcpl` is a virtual dataset's (H5Pget_layout).
[[nodiscard]] bool is_virtual(hid_t dcpl);

// Adds a mapping to `dcpl`: selection `vspace` of the virtual dataset comes from selection
// `src_space` of dataset `dataset` in file `file` (both as stored). Throws Hdf5Error "<what>: <reason>".
void add_virtual_mapping(hid_t dcpl, hid_t vspace, const std::string& file, const std::string& dataset, hid_t src_space,
                         std::string_view what);

// A dataspace with its selection from HDF5's encoding of it (H5Sdecode of what H5Sencode wrote,
// as h5py's SpaceID.encode gives it). Throws Hdf5Error "<what>: <reason>" for bytes it cannot decode.
[[nodiscard]] SpaceHandle decode_space(const std::vector<std::byte>& encoded, std::string_view what);

// How many mappings `dcpl` has.
[[nodiscard]] std::size_t virtual_count(hid_t dcpl);

// The source file and dataset names of mapping `i`, as stored ("%%" not unescaped).
[[nodiscard]] std::string virtual_file_name(hid_t dcpl, std::size_t i);
[[nodiscard]] std::string virtual_dataset_name(hid_t dcpl, std::size_t i);

// The selections of mapping `i` in the virtual dataset and in its source.
[[nodiscard]] SpaceHandle virtual_space(hid_t dcpl, std::size_t i);
[[nodiscard]] SpaceHandle virtual_source_space(hid_t dcpl, std::size_t i);

// Whether `space` selects all of itself (H5S_SEL_ALL).
[[nodiscard]] bool selects_all(hid_t space);

// The selection of `space` as a box (an empty box at the origin for "none"), or nullopt when
// it is not one (strided, irregular, unlimited or points).
[[nodiscard]] std::optional<Box> selection_box(hid_t space);

}  // namespace h5tile::detail
