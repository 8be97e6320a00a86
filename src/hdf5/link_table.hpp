#pragma once
// The links of every group of an open file, as h5py lists them (include/h5tile/objects.hpp:
// list_links): one H5Literate per group, over the groups reached through hard links.

#include <vector>

#include <h5tile/objects.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// Every group of `file` reached through hard links from its root, each once, root first
// (breadth first), with its links. Soft and external links are read, not followed.
[[nodiscard]] std::vector<GroupLinks> link_tables(hid_t file);

// The links of the one group at `group` (a path HDF5 resolves, soft links followed, external
// ones refused) of `file`. Throws NotADataset where it leads to no group.
[[nodiscard]] GroupLinks group_link_table(hid_t file, const std::string& group);

}  // namespace h5tile::detail
