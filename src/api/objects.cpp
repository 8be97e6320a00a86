// list_objects and attributes: what a file holds besides array data (h5py's groups and .attrs).
#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/objects.hpp>

#include "api/dataset_reader.hpp"
#include "api/held_files.hpp"
#include "api/pending_writes.hpp"
#include "api/probe.hpp"
#include "api/resolve.hpp"
#include "api/write_checks.hpp"
#include "hdf5/attributes.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/link_table.hpp"
#include "hdf5/links.hpp"
#include "io/http/url.hpp"
#include "layout/data_files.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

namespace {

// "/" stays the root; any other name is normalised as a dataset name.
std::string object_name(const std::string& name) { return name == "/" ? name : normalize_dataset_name(name); }

// Opens `object` of the existing local file `path` for writing its attributes, after the writes
// of `path` this process started.
template <class Change>
void change_attributes(const fs::path& path, const std::string& object, const std::string& name, Change change) {
  check_not_remote(path);
  if (name.empty() || name.find('\0') != std::string::npos) {
    throw InvalidArgument(
        fmt::format("cannot write an attribute of '{}' in '{}': the name must be non-empty, "
                    "without NUL characters",
                    object, path.string()));
  }
  const auto normalized = object_name(object);
  FileChange changing(path);
  {
    const auto handle = open_object(changing.file(), normalized, path);
    change(handle.get(), normalized);
  }
  changing.finish();
}

}  // namespace

std::vector<ObjectEntry> list_objects(const fs::path& path) {
  const auto location = Location::of(path);
  start_call_report(location);
  settle_before_open(path);
  probe_if_wanted(std::nullopt, fmt::format("'{}'", path.string()),
                  [&] { (void)object_paths(open_file(location, remote_options()).get()); });
  const auto file = open_file(location, remote_options());
  return object_paths(file.get());
}

std::vector<GroupLinks> list_links(const fs::path& path) {
  const auto location = Location::of(path);
  start_call_report(location);
  settle_before_open(path);
  probe_if_wanted(std::nullopt, fmt::format("'{}'", path.string()),
                  [&] { (void)link_tables(open_file(location, remote_options()).get()); });
  const auto file = open_file(location, remote_options());
  return link_tables(file.get());
}

GroupLinks list_group_links(const fs::path& path, const std::string& group) {
  const auto location = Location::of(path);
  start_call_report(location);
  settle_before_open(path);
  probe_if_wanted(std::nullopt, fmt::format("'{}'", path.string()),
                  [&] { (void)group_link_table(open_file(location, remote_options()).get(), group); });
  const auto file = open_file(location, remote_options());
  return group_link_table(file.get(), group);
}

NamedType describe_named_type(const fs::path& path, const std::string& name) {
  const auto location = Location::of(path);
  start_call_report(location);
  settle_before_open(path);
  const auto file = open_file(location, remote_options());
  const auto object = open_object(file.get(), object_name(name), path);
  const auto where = fmt::format("named datatype '{}' in '{}'", object_name(name), display_name(path.native()));
  return named_type_of(object.get(), where);
}

ExternalTarget external_link_target(const fs::path& path, const std::string& link, bool allow_external) {
  const auto location = Location::of(path);
  start_call_report(location);
  settle_before_open(path);
  const auto name = object_name(link);
  const auto file = open_file(location, remote_options());
  std::optional<std::pair<std::string, std::string>> stored;
  try {
    stored = external_link_value(file.get(), name);
  } catch (const DatasetNotFound&) {
    throw DatasetNotFound(fmt::format("'{}' is no link of '{}'", name, display_name(path.native())));
  }
  if (!stored) {
    throw InvalidArgument(fmt::format("'{}' in '{}' is no external link", name, display_name(path.native())));
  }
  const ExternalLink followed{path.string(), fs::path(name).parent_path().string(), stored->first, stored->second};
  external_link_check(location, allow_external, ext_prefix())(followed);  // refuses, naming the link
  const auto target = detail::external_link_target(path, followed.file, ext_prefix());
  if (!target) {
    throw DatasetNotFound(fmt::format("the external link '{}' of '{}' names '{}', which does not exist", name,
                                      display_name(path.native()), followed.file));
  }
  return {*target, followed.object};
}

std::vector<Attribute> read_attributes(const fs::path& path, const std::string& object) {
  return std::move(read_attributes_of_each(path, {object}).front());
}

std::vector<std::vector<Attribute>> read_attributes_of_each(const fs::path& path,
                                                            const std::vector<std::string>& objects) {
  const auto location = Location::of(path);
  start_call_report(location);
  std::vector<std::string> names;
  names.reserve(objects.size());
  for (const auto& object : objects) names.push_back(object_name(object));
  const auto what = names.size() == 1 ? fmt::format("'{}' in '{}'", names.front(), path.string())
                                      : fmt::format("'{}'", path.string());
  settle_before_open(path);
  probe_if_wanted(std::nullopt, what, [&] {
    const auto file = open_file(location, remote_options());
    for (const auto& name : names) (void)attribute_names(open_object(file.get(), name, path).get());
  });
  const auto file = open_file(location, remote_options());
  std::vector<std::vector<Attribute>> out;
  out.reserve(names.size());
  for (const auto& name : names) {
    const auto handle = open_object(file.get(), name, path);
    const auto where = fmt::format("'{}' in '{}'", name, path.string());
    auto& attributes = out.emplace_back();
    for (const auto& attribute : attribute_names(handle.get())) {
      attributes.push_back(read_attribute(handle.get(), attribute, where));
    }
  }
  return out;
}

void write_attribute(const fs::path& path, const std::string& object, const std::string& name, const ArrayView& value) {
  if (value.memory == MemoryKind::Device) {
    throw InvalidArgument(fmt::format("attribute '{}' of '{}' in '{}': attributes are written from host memory", name,
                                      object, path.string()));
  }
  if (!value.is_contiguous()) {
    throw InvalidArgument(
        fmt::format("attribute '{}' of '{}' in '{}': the value must be C-contiguous", name, object, path.string()));
  }
  change_attributes(path, object, name,
                    [&](hid_t handle, const std::string&) { detail::write_attribute(handle, name, value); });
}

void write_attribute(const fs::path& path, const std::string& object, const std::string& name,
                     const std::vector<std::string>& strings, const Shape& shape, std::size_t fixed_width) {
  if (element_count(shape) != strings.size()) {
    throw InvalidArgument(fmt::format("attribute '{}' of '{}' in '{}': {} strings for shape {}", name, object,
                                      path.string(), strings.size(), to_string(shape)));
  }
  for (const auto& s : strings) {
    if (fixed_width > 0 && s.size() > fixed_width) {
      throw InvalidArgument(fmt::format("attribute '{}' of '{}' in '{}': a string of {} bytes does not fit width {}",
                                        name, object, path.string(), s.size(), fixed_width));
    }
    if (fixed_width == 0 && s.find('\0') != std::string::npos) {
      throw InvalidArgument(fmt::format(
          "attribute '{}' of '{}' in '{}': a variable-length string cannot hold a NUL character (write bytes)", name,
          object, path.string()));
    }
  }
  change_attributes(path, object, name, [&](hid_t handle, const std::string&) {
    detail::write_attribute(handle, name, strings, shape, fixed_width);
  });
}

void write_empty_attribute(const fs::path& path, const std::string& object, const std::string& name, DType dtype) {
  change_attributes(path, object, name,
                    [&](hid_t handle, const std::string&) { detail::write_empty_attribute(handle, name, dtype); });
}

void delete_attribute(const fs::path& path, const std::string& object, const std::string& name) {
  change_attributes(path, object, name, [&](hid_t handle, const std::string& normalized) {
    if (!detail::delete_attribute(handle, name)) {
      throw DatasetNotFound(
          fmt::format("attribute '{}' of '{}' in '{}' does not exist", name, normalized, path.string()));
    }
  });
}

std::array<unsigned, 3> hdf5_library_version() { return detail::library_version(); }

}  // namespace h5tile
