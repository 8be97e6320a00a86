// Changes to a file's structure, in place, as h5py makes them (include/h5tile/objects.hpp):
// files, groups, links, copies, new datasets and their shapes.
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/error.hpp>
#include <h5tile/objects.hpp>

#include "api/dataset_reader.hpp"
#include "api/held_files.hpp"
#include "api/write_checks.hpp"
#include "engine/codecs/compression.hpp"
#include "hdf5/create.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/types.hpp"
#include "hdf5/virtual.hpp"

namespace h5tile {
namespace fs = std::filesystem;

namespace {

// `name` as an absolute path ("/a/b"); InvalidArgument for an empty one or the root.
std::string link_name(const std::string& name, const fs::path& path, std::string_view what) {
  if (name.empty() || name.find('\0') != std::string::npos) {
    throw InvalidArgument(fmt::format("cannot {} '{}' in '{}': the name must be non-empty, without NUL characters",
                                      what, name, path.string()));
  }
  auto normalized = detail::normalize_dataset_name(name);
  if (normalized == "/") {
    throw InvalidArgument(fmt::format("cannot {} '/' in '{}': it is the root group", what, path.string()));
  }
  return normalized;
}

// InvalidArgument where `name` exists in `file`, or where a part of its path is not a group.
void check_new_name(hid_t file, const std::string& name, const fs::path& path, std::string_view what) {
  if (detail::link_exists(file, name)) {
    throw InvalidArgument(fmt::format("cannot {} '{}' in '{}': the name already exists", what, name, path.string()));
  }
  if (const auto blocker = detail::non_group_on_the_way(file, name); !blocker.empty()) {
    throw InvalidArgument(
        fmt::format("cannot {} '{}' in '{}': '{}' is not a group", what, name, path.string(), blocker));
  }
}

// DatasetNotFound where the link `name` does not exist in `file`.
void check_existing(hid_t file, const std::string& name, const fs::path& path, std::string_view what) {
  if (!detail::link_exists(file, name)) {
    throw DatasetNotFound(fmt::format("cannot {} '{}' in '{}': no such link", what, name, path.string()));
  }
}

}  // namespace

void create_file(const fs::path& path, bool exclusive, const FileCreation& options) {
  detail::check_target(path, exclusive ? Mode::Exclusive : Mode::Overwrite, "/");
  const auto block = options.userblock_size;
  if (block != 0 && (block < 512 || (block & (block - 1)) != 0)) {
    throw InvalidArgument(fmt::format("cannot create '{}': a user block is 0 bytes, or a power of two from 512, not {}",
                                      path.string(), block));
  }
  detail::settle_before_open(path);
  detail::release_kept(path);
  auto file = detail::create_plain_file(path, !exclusive, options.track_order, block);
  detail::flush_file(file.get(), path);
}

void create_group(const fs::path& path, const std::string& group, bool track_order) {
  const auto name = link_name(group, path, "create group");
  detail::FileChange change(path);
  const hid_t file = change.file();
  check_new_name(file, name, path, "create group");
  detail::create_group(file, name, track_order, fmt::format("cannot create group '{}' in '{}'", name, path.string()));
  change.finish();
}

void delete_link(const fs::path& path, const std::string& link) {
  const auto name = link_name(link, path, "delete");
  detail::FileChange change(path);
  const hid_t file = change.file();
  check_existing(file, name, path, "delete");
  change.forget_datasets();  // a name may lead elsewhere after the change
  detail::delete_link(file, name, fmt::format("cannot delete '{}' in '{}'", name, path.string()));
  change.finish();
}

void move_link(const fs::path& path, const std::string& from, const std::string& to) {
  const auto source = link_name(from, path, "move");
  const auto target = link_name(to, path, "move to");
  detail::FileChange change(path);
  const hid_t file = change.file();
  check_existing(file, source, path, "move");
  if (source == target) return;  // h5py: nothing to do
  check_new_name(file, target, path, fmt::format("move '{}' to", source));
  change.forget_datasets();  // a name may lead elsewhere after the change
  detail::move_link(file, source, target,
                    fmt::format("cannot move '{}' to '{}' in '{}'", source, target, path.string()));
  change.finish();
}

void create_link(const fs::path& path, const std::string& link, const Link& value) {
  const auto name = link_name(link, path, "create link");
  detail::FileChange change(path);
  const hid_t file = change.file();
  check_new_name(file, name, path, "create link");
  const auto what = fmt::format("cannot create link '{}' in '{}'", name, path.string());
  switch (value.kind) {
    case LinkKind::Soft: detail::create_soft_link(file, name, value.target, what); break;
    case LinkKind::External: detail::create_external_link(file, name, value.file, value.target, what); break;
    case LinkKind::Hard: {
      const auto target = link_name(value.target, path, "link to");
      check_existing(file, target, path, "link to");
      detail::create_hard_link(file, name, target, what);
      break;
    }
  }
  change.finish();
}

void copy_object(const fs::path& source, const std::string& from, const fs::path& destination, const std::string& to,
                 const CopyOptions& options) {
  const auto name = link_name(from, source, "copy");
  const auto target = link_name(to, destination, "copy to");
  detail::check_not_remote(source);
  std::error_code ec;
  const bool same = fs::equivalent(source, destination, ec);  // false where either is missing: the opens say so
  detail::FileChange change(destination);
  const hid_t into = change.file();
  const auto from_file = same ? detail::FileHandle() : detail::open_local_file(source);
  const hid_t src = same ? into : from_file.get();
  check_existing(src, name, source, "copy");
  check_new_name(into, target, destination, fmt::format("copy '{}' to", name));
  detail::copy_object(
      src, name, into, target,
      {options.shallow, options.expand_soft, options.expand_external, options.expand_references,
       options.without_attributes},
      fmt::format("cannot copy '{}' of '{}' to '{}' of '{}'", name, source.string(), target, destination.string()));
  change.finish();
}

void resize_dataset(const fs::path& path, const std::string& dataset, const Shape& shape) {
  const auto name = link_name(dataset, path, "resize");
  detail::FileChange change(path);
  const auto where = detail::where(path, name);
  const auto handle = change.dataset(name);
  const auto described = detail::describe_dataset(handle.get(), where);
  if (described.storage != detail::Storage::Chunked) {
    throw UnsupportedType(fmt::format("cannot resize {}: only chunked datasets can be resized (it is {})", where,
                                      detail::storage_name(described.storage)));
  }
  if (shape.size() != described.shape.size()) {
    throw InvalidArgument(fmt::format("cannot resize {} of shape {} to {}: the rank differs", where,
                                      to_string(described.shape), to_string(shape)));
  }
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (described.max_shape[a] != kUnlimitedExtent && shape[a] > described.max_shape[a]) {
      throw InvalidArgument(fmt::format("cannot resize {} to {}: axis {} may grow to {} at most (its maximum shape {})",
                                        where, to_string(shape), a, described.max_shape[a],
                                        to_string(described.max_shape)));
    }
  }
  bool shrinks = false;
  for (std::size_t a = 0; a < shape.size(); ++a) shrinks = shrinks || shape[a] < described.shape[a];
  if (shrinks && !detail::hdf5_applies_filters(handle.get())) {
    // HDF5 rewrites the chunks a shrink cuts through, through the filters, which it cannot load.
    throw UnsupportedType(
        fmt::format("cannot shrink {} to {}: its filters ({}) are h5tile's, which HDF5 here does not "
                    "apply itself to the chunks a shrink cuts (growing it works)",
                    where, to_string(shape), fmt::join(described.filters, ", ")));
  }
  try {
    detail::set_extent(handle.get(), shape, fmt::format("cannot resize {}", where));
  } catch (...) {
    change.forget_datasets();  // no open keeps an extent the file may not have
    throw;
  }
  change.finish(handle.get());
}

namespace {

// The HDF5 type of a dataset or named datatype that `creation` describes (its dtype, NumPy type,
// character set); `refuse` throws what is wrong.
detail::TypeHandle creation_type(const DatasetCreation& creation,
                                 const std::function<void(const std::string&)>& refuse) {
  if (!creation.numpy_type.empty() && creation.dtype.kind() != DTypeKind::Opaque) {
    refuse(fmt::format("a type given as NumPy's ({}) needs the dtype of opaque bytes of its size, not {}",
                       creation.numpy_type, creation.dtype.name()));
  }
  if (!creation.charset.empty() && creation.charset != "ascii" && creation.charset != "utf-8") {
    refuse(fmt::format("the character set '{}' is neither 'ascii' nor 'utf-8'", creation.charset));
  }
  const bool strings = creation.dtype.kind() == DTypeKind::Bytes || creation.dtype.kind() == DTypeKind::VarString;
  if (!creation.charset.empty() && !strings) refuse(fmt::format("{} holds no strings", creation.dtype.name()));
  if (!creation.numpy_type.empty()) return detail::make_structured_type(creation.numpy_type, creation.dtype.size());
  if (strings) return detail::make_string_type(creation.dtype, creation.charset == "utf-8");
  return detail::make_type(creation.dtype);
}

// The type of a new dataset: the named datatype `creation` names (of `file`), else the one it
// describes; of the size of its dtype.
detail::TypeHandle dataset_type(hid_t file, const DatasetCreation& creation, const std::string& where,
                                const std::function<void(const std::string&)>& refuse) {
  auto type = creation.named_type.empty()
                  ? creation_type(creation, refuse)
                  : detail::open_named_type(
                        file, creation.named_type,
                        fmt::format("cannot create {}: no named datatype '{}'", where, creation.named_type));
  if (detail::type_size(type.get()) != creation.dtype.size()) {
    refuse(fmt::format("its type has {} bytes, not the {} of {}", detail::type_size(type.get()), creation.dtype.size(),
                       creation.dtype.name()));
  }
  return type;
}

}  // namespace

void commit_datatype(const fs::path& path, const std::string& name, const DatasetCreation& type) {
  const auto link = link_name(name, path, "commit datatype");
  const auto where = fmt::format("'{}' in '{}'", link, path.string());
  const auto made = creation_type(type, [&](const std::string& why) {
    throw InvalidArgument(fmt::format("cannot commit the datatype {}: {}", where, why));
  });
  detail::FileChange change(path);
  check_new_name(change.file(), link, path, "commit datatype");
  detail::commit_type(change.file(), link, made.get(), fmt::format("cannot commit the datatype {}", where));
  change.finish();
}

void create_dataset(const fs::path& path, const std::string& dataset, const DatasetCreation& creation) {
  const auto name = link_name(dataset, path, "create dataset");
  const auto where = detail::where(path, name);
  const auto rank = creation.shape.size();
  const auto max_shape = creation.max_shape.empty() ? creation.shape : creation.max_shape;
  const auto& chunk = creation.chunk;
  auto refuse = [&](const std::string& why) {
    throw InvalidArgument(fmt::format("cannot create {} of shape {}: {}", where, to_string(creation.shape), why));
  };
  if (max_shape.size() != rank) refuse(fmt::format("its maximum shape {} has another rank", to_string(max_shape)));
  for (std::size_t a = 0; a < rank; ++a) {
    if (max_shape[a] < creation.shape[a]) refuse(fmt::format("its maximum shape {} is smaller", to_string(max_shape)));
  }
  const bool extendable = max_shape != creation.shape;
  if (!chunk.empty()) {
    if (chunk.size() != rank) refuse(fmt::format("chunks {} have another rank", to_string(chunk)));
    for (std::size_t a = 0; a < rank; ++a) {
      if (chunk[a] == 0 || (max_shape[a] != kUnlimitedExtent && chunk[a] > max_shape[a])) {
        refuse(fmt::format("chunks {} do not fit its maximum shape {}", to_string(chunk), to_string(max_shape)));
      }
    }
  } else if (creation.compression.any() || (extendable && creation.external.empty())) {
    refuse("compression, checksums and a maximum shape other than the shape need chunks");
  }
  if (creation.compact && !chunk.empty()) refuse("a compact dataset has no chunks");
  if (creation.null_space && (rank != 0 || !chunk.empty() || creation.compact || !creation.external.empty())) {
    refuse("a dataset without elements (a null dataspace) has no shape, chunks or storage");
  }
  if (creation.scale_offset) {
    const auto kind = creation.dtype.kind();
    const bool numbers = kind >= DTypeKind::Int8 && kind <= DTypeKind::Float64 && kind != DTypeKind::Float16;
    if (!numbers || !creation.numpy_type.empty()) {
      refuse(fmt::format("the scale-offset filter takes integers and floats, not {}", creation.dtype.name()));
    }
    if (chunk.empty()) refuse("the scale-offset filter needs chunks");
  }
  if (!creation.external.empty() && (!chunk.empty() || creation.compact)) {
    refuse("external storage is contiguous: it has no chunks");
  }
  const bool var_strings = creation.dtype.kind() == DTypeKind::VarString;  // a fill value: the string's bytes
  if (!var_strings && !creation.fill_value.empty() && creation.fill_value.size() != creation.dtype.size()) {
    refuse(
        fmt::format("a fill value of {} bytes for elements of {}", creation.fill_value.size(), creation.dtype.size()));
  }
  detail::FileChange change(path);
  const hid_t file = change.file();
  check_new_name(file, name, path, "create dataset");
  const auto type = dataset_type(file, creation, where, refuse);
  const auto dcpl = detail::dataset_creation();
  if (creation.compact) detail::set_compact(dcpl.get());
  for (const auto& external : creation.external) {
    const auto size = external.size == kUnlimitedExtent ? H5F_UNLIMITED : static_cast<hsize_t>(external.size);
    detail::add_external(dcpl.get(), external.name, external.offset, size);
  }
  if (creation.fill_time != FillTime::IfSet) {
    detail::set_fill_time(dcpl.get(),
                          creation.fill_time == FillTime::Alloc ? H5D_FILL_TIME_ALLOC : H5D_FILL_TIME_NEVER);
  }
  if (!chunk.empty()) {
    detail::set_chunk(dcpl.get(), chunk);
    if (creation.scale_offset) {
      const bool floats = creation.dtype.kind() == DTypeKind::Float32 || creation.dtype.kind() == DTypeKind::Float64;
      detail::set_scale_offset(dcpl.get(), floats, *creation.scale_offset);
    }
    const auto chunk_bytes = element_count(chunk) * creation.dtype.size();
    for (const auto& f : detail::write_filters(creation.compression, creation.dtype.size(), chunk_bytes)) {
      detail::add_filter(dcpl.get(), f.id, f.optional, f.params);
    }
  }
  if (var_strings && !creation.fill_value.empty()) {
    const std::string fill(reinterpret_cast<const char*>(creation.fill_value.data()), creation.fill_value.size());
    const char* element = fill.c_str();  // a variable-length string's element is its char*
    detail::set_fill_value(dcpl.get(), type.get(), static_cast<const void*>(&element));
  } else if (!creation.fill_value.empty()) {
    detail::set_fill_value(dcpl.get(), type.get(), creation.fill_value.data());
  }
  if (creation.track_order) detail::set_track_order(dcpl.get(), false);
  detail::set_track_times(dcpl.get(), creation.track_times);
  const auto space = creation.null_space ? detail::make_null_space()
                     : rank == 0         ? detail::make_space(Shape{})
                                         : detail::make_space(creation.shape, max_shape);
  (void)detail::create_dataset(file, name, type.get(), space.get(), dcpl.get(), fmt::format("cannot create {}", where));
  change.finish();
}

void create_virtual_dataset(const fs::path& path, const std::string& dataset, const DatasetCreation& creation,
                            const std::vector<VirtualMapping>& mappings) {
  const auto name = link_name(dataset, path, "create virtual dataset");
  const auto where = detail::where(path, name);
  auto refuse = [&](const std::string& why) {
    throw InvalidArgument(fmt::format("cannot create the virtual dataset {}: {}", where, why));
  };
  const auto max_shape = creation.max_shape.empty() ? creation.shape : creation.max_shape;
  if (max_shape.size() != creation.shape.size()) refuse("its maximum shape has another rank");
  if (!creation.fill_value.empty() && creation.fill_value.size() != creation.dtype.size()) {
    refuse(
        fmt::format("a fill value of {} bytes for elements of {}", creation.fill_value.size(), creation.dtype.size()));
  }
  if (creation.dtype.kind() == DTypeKind::VarString) refuse("h5tile makes virtual datasets of fixed-size elements");
  detail::FileChange change(path);
  const hid_t file = change.file();
  check_new_name(file, name, path, "create virtual dataset");
  const auto type = dataset_type(file, creation, where, refuse);
  const auto dcpl = detail::dataset_creation();
  detail::set_virtual_layout(dcpl.get());
  for (std::size_t i = 0; i < mappings.size(); ++i) {
    const auto& m = mappings[i];
    const auto what = fmt::format("cannot create the virtual dataset {}: mapping {} (from '{}' in '{}')", where, i,
                                  m.dataset, m.file);
    const auto part = detail::decode_space(m.selection, what);
    const auto source = detail::decode_space(m.source_selection, what);
    try {
      detail::add_virtual_mapping(dcpl.get(), part.get(), m.file, m.dataset, source.get(), what);
    } catch (const Hdf5Error& e) {
      throw InvalidArgument(e.what());  // HDF5 refuses the mapping itself (parts of different sizes)
    }
  }
  if (!creation.fill_value.empty()) detail::set_fill_value(dcpl.get(), type.get(), creation.fill_value.data());
  const auto space = detail::make_space(creation.shape, max_shape);
  (void)detail::create_dataset(file, name, type.get(), space.get(), dcpl.get(), fmt::format("cannot create {}", where));
  change.finish();
}

}  // namespace h5tile
