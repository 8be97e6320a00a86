#pragma once
// The links of every group of an open file, as h5py lists them (include/h5tile/object_types.hpp:
// list_links): one H5Literate per group, over the groups reached through hard links.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <h5tile/object_types.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// Every group of `file` reached through hard links from its root, each once, root first
// (breadth first), with its links. Soft and external links are read, not followed.
[[nodiscard]] std::vector<GroupLinks> link_tables(hid_t file);

// (file, object) an external link `name` of `file` names as stored (its parents are groups of
// `file` itself: no external link is followed to reach it); nullopt where `name` is another
// kind of link. Throws DatasetNotFound where there is no link `name`.
[[nodiscard]] std::optional<std::pair<std::string, std::string>> external_link_value(hid_t file,
                                                                                     const std::string& name);

// The links of the one group at `group` (a path HDF5 resolves, soft links followed, external
// ones refused) of `file`. Throws NotADataset where it leads to no group.
[[nodiscard]] GroupLinks group_link_table(hid_t file, const std::string& group);

}  // namespace h5tile::detail
