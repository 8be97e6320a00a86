#include "hdf5/link_table.hpp"

#include <cstring>
#include <deque>
#include <set>
#include <string>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/links.hpp"

namespace h5tile::detail {
namespace {

#if H5_VERSION_GE(1, 12, 0)
using ObjectInfo = H5O_info2_t;  // objects by token
std::string identity(hid_t, const H5O_token_t& token) {
  std::string out;
  for (const auto byte : token.__data) out += fmt::format("{:02x}", byte);
  return out;
}
herr_t object_info(hid_t group, const char* name, ObjectInfo& info, hid_t lapl) {
  return H5Oget_info_by_name3(group, name, &info, H5O_INFO_BASIC, lapl);
}
std::string identity_of(hid_t file, const ObjectInfo& info) { return identity(file, info.token); }
#else
using ObjectInfo = H5O_info_t;  // objects by address
herr_t object_info(hid_t group, const char* name, ObjectInfo& info, hid_t lapl) {
  return H5Oget_info_by_name2(group, name, &info, H5O_INFO_BASIC, lapl);
}
std::string identity_of(hid_t /*file*/, const ObjectInfo& info) { return fmt::format("{:x}", info.addr); }
#endif

// The order h5py lists a group's links in: creation order where the group tracks it (h5py's
// track_order), else name order.
H5_index_t index_of(hid_t group) {
  const hid_t gcpl = H5Gget_create_plist(group);
  unsigned flags = 0;
  const bool indexed =
      gcpl >= 0 && H5Pget_link_creation_order(gcpl, &flags) >= 0 && (flags & H5P_CRT_ORDER_INDEXED) != 0;
  if (gcpl >= 0) H5Pclose(gcpl);
  H5Eclear2(H5E_DEFAULT);
  return indexed ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
}

struct Walk {
  hid_t file;
  hid_t lapl;
  GroupLinks* current = nullptr;
  bool queue_groups = true;       // false: list the current group's links only
  std::set<std::string> seen;     // groups listed or queued, by identity
  std::deque<GroupLinks> queued;  // groups found, links not yet read
};

herr_t on_link(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto& walk = *static_cast<Walk*>(data);
  Link link{.name = name};
  if (info->type == H5L_TYPE_HARD) {
    ObjectInfo object{};
    if (object_info(group, name, object, walk.lapl) < 0) {
      H5Eclear2(H5E_DEFAULT);
      return 0;  // an object HDF5 cannot describe: not listed (as h5py cannot open it either)
    }
    if (object.type == H5O_TYPE_GROUP) {
      link.object = ObjectKind::Group;
    } else if (object.type == H5O_TYPE_DATASET) {
      link.object = ObjectKind::Dataset;
    } else if (object.type == H5O_TYPE_NAMED_DATATYPE) {
      link.object = ObjectKind::Datatype;
    } else {
      return 0;
    }
    link.object_id = identity_of(walk.file, object);
    if (walk.queue_groups && link.object == ObjectKind::Group && walk.seen.insert(link.object_id).second) {
      const auto& parent = walk.current->path;
      walk.queued.push_back({parent == "/" ? "/" + link.name : parent + "/" + link.name, link.object_id, {}});
    }
  } else if (info->type == H5L_TYPE_SOFT || info->type == H5L_TYPE_EXTERNAL) {
    std::string value(info->u.val_size, '\0');
    if (H5Lget_val(group, name, value.data(), value.size(), H5P_DEFAULT) < 0) {
      H5Eclear2(H5E_DEFAULT);
      return 0;
    }
    if (info->type == H5L_TYPE_SOFT) {
      link.kind = LinkKind::Soft;
      link.target = value.c_str();
    } else {
      const char* file = nullptr;
      const char* object = nullptr;
      if (H5Lunpack_elink_val(value.data(), value.size(), nullptr, &file, &object) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
      }
      link.kind = LinkKind::External;
      link.file = file != nullptr ? file : "";
      link.target = object != nullptr ? object : "";
    }
  } else {
    return 0;  // a user-defined link class: h5py shows none either
  }
  walk.current->links.push_back(std::move(link));
  return 0;
}

}  // namespace

std::vector<GroupLinks> link_tables(hid_t file) {
  const Hdf5Lock lock;
  const GuardedLinks no_external({});  // nothing here opens another file
  Walk walk{.file = file, .lapl = no_external.lapl()};
  ObjectInfo root{};
  check(object_info(file, "/", root, walk.lapl), "cannot describe the root group");
  walk.seen.insert(identity_of(file, root));
  walk.queued.push_back({"/", identity_of(file, root), {}});
  std::vector<GroupLinks> tables;
  while (!walk.queued.empty()) {
    tables.push_back(std::move(walk.queued.front()));
    walk.queued.pop_front();
    walk.current = &tables.back();
    const hid_t group = H5Gopen2(file, walk.current->path.c_str(), walk.lapl);
    if (group < 0) {
      H5Eclear2(H5E_DEFAULT);
      continue;  // listed, not readable: no links
    }
    hsize_t at = 0;
    if (H5Literate(group, index_of(group), H5_ITER_INC, &at, on_link, &walk) < 0) H5Eclear2(H5E_DEFAULT);
    H5Gclose(group);
  }
  return tables;
}

std::optional<std::pair<std::string, std::string>> external_link_value(hid_t file, const std::string& name) {
  const Hdf5Lock lock;
  const GuardedLinks no_external({});
  H5L_info_t info{};
  if (H5Lget_info(file, name.c_str(), &info, no_external.lapl()) < 0) {
    H5Eclear2(H5E_DEFAULT);
    throw DatasetNotFound(fmt::format("'{}' is no link of the file (or not one reached without leaving it)", name));
  }
  if (info.type != H5L_TYPE_EXTERNAL) return std::nullopt;
  std::string value(info.u.val_size, '\0');
  check(H5Lget_val(file, name.c_str(), value.data(), value.size(), no_external.lapl()), "H5Lget_val");
  const char* stored = nullptr;
  const char* object = nullptr;
  check(H5Lunpack_elink_val(value.data(), value.size(), nullptr, &stored, &object), "H5Lunpack_elink_val");
  return std::make_pair(std::string(stored != nullptr ? stored : ""), std::string(object != nullptr ? object : ""));
}

GroupLinks group_link_table(hid_t file, const std::string& group) {
  const Hdf5Lock lock;
  const GuardedLinks no_external({});
  Walk walk{.file = file, .lapl = no_external.lapl(), .queue_groups = false};
  ObjectInfo info{};
  if (object_info(file, group.c_str(), info, walk.lapl) < 0 || info.type != H5O_TYPE_GROUP) {
    H5Eclear2(H5E_DEFAULT);
    throw NotADataset(
        fmt::format("'{}' is not a group of the file (or not one h5tile reaches without "
                    "leaving the file)",
                    group));
  }
  GroupLinks table{group, identity_of(file, info), {}};
  walk.current = &table;
  const hid_t opened = check(H5Gopen2(file, group.c_str(), walk.lapl), "H5Gopen2");
  hsize_t at = 0;
  if (H5Literate(opened, index_of(opened), H5_ITER_INC, &at, on_link, &walk) < 0) H5Eclear2(H5E_DEFAULT);
  H5Gclose(opened);
  return table;
}

}  // namespace h5tile::detail
