// h5py's object model underneath h5tile.File, h5tile.Group and h5tile.Dataset's attrs: the
// listing of a file's objects and the reads and writes of attributes (include/h5tile/objects.hpp).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <h5tile/h5tile.hpp>

#include "arrays.hpp"
#include "objects.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace h5tile::python {
namespace {

// A name as stored (HDF5 names are bytes): text where it is UTF-8, else with its other bytes as
// surrogates (Python's "surrogateescape", as os.fsdecode gives file names), so that one name
// that is not UTF-8 never makes a whole listing fail.
nb::object name_text(const std::string& name) {
  PyObject* text = PyUnicode_DecodeUTF8(name.data(), static_cast<Py_ssize_t>(name.size()), "surrogateescape");
  if (text == nullptr) throw nb::python_error();
  return nb::steal(text);
}

// read_attributes()'s answer as the Python package reads it: [(name, kind, shape, value, width)].
nb::list attribute_list(std::vector<h5tile::Attribute>& attributes) {
  nb::list out;
  for (auto& a : attributes) {
    nb::object value = nb::none();
    const char* kind = "unsupported";
    switch (a.kind) {
      case h5tile::AttributeKind::Numbers: kind = "numbers"; break;
      case h5tile::AttributeKind::FixedStrings: kind = "fixed_strings"; break;
      case h5tile::AttributeKind::VariableStrings: kind = "variable_strings"; break;
      case h5tile::AttributeKind::Empty: kind = "empty"; break;
      case h5tile::AttributeKind::References: kind = "references"; break;
      case h5tile::AttributeKind::Unsupported: value = nb::str(a.reason.c_str()); break;
    }
    if (a.numbers) {
      value = to_python(std::move(*a.numbers));
    } else if (!a.strings.empty()) {
      nb::list strings;
      for (const auto& s : a.strings) strings.append(nb::bytes(s.data(), s.size()));
      value = strings;
    } else if (a.kind == h5tile::AttributeKind::References) {
      nb::list lists;
      for (const auto& paths : a.references) lists.append(nb::tuple(nb::cast(paths)));
      value = lists;
    }
    out.append(nb::make_tuple(a.name, kind, nb::tuple(nb::cast(a.shape)), value, a.string_width));
  }
  return out;
}

// (group path, group id, [(name, kind, object, object id, target, file)]) of one group's links.
nb::tuple group_tuple(const h5tile::GroupLinks& g) {
  nb::list links;
  for (const auto& l : g.links) {
    const char* kind = l.kind == h5tile::LinkKind::Hard   ? "hard"
                       : l.kind == h5tile::LinkKind::Soft ? "soft"
                                                          : "external";
    const char* object = l.object == h5tile::ObjectKind::Group     ? "group"
                         : l.object == h5tile::ObjectKind::Dataset ? "dataset"
                                                                   : "datatype";
    links.append(nb::make_tuple(name_text(l.name), kind, object, l.object_id, name_text(l.target), name_text(l.file)));
  }
  return nb::make_tuple(name_text(g.path), g.id, links);
}

}  // namespace

void bind_objects(nb::module_& m) {
  m.def(
      "list_objects",
      [](const std::filesystem::path& path) {
        std::vector<h5tile::ObjectEntry> entries;
        {
          nb::gil_scoped_release release;
          entries = h5tile::list_objects(path);
        }
        nb::list out;
        for (const auto& e : entries) {
          const char* kind = e.kind == h5tile::ObjectKind::Group     ? "group"
                             : e.kind == h5tile::ObjectKind::Dataset ? "dataset"
                                                                     : "datatype";
          out.append(nb::make_tuple(e.name, kind));
        }
        return out;
      },
      "path"_a, "[(name, kind)] of every group, dataset and named datatype below the root, depth first.");
  m.def(
      "list_links",
      [](const std::filesystem::path& path) {
        std::vector<h5tile::GroupLinks> groups;
        {
          nb::gil_scoped_release release;
          groups = h5tile::list_links(path);
        }
        nb::list out;
        for (const auto& g : groups) out.append(group_tuple(g));
        return out;
      },
      "path"_a,
      "[(group path, group id, [(name, kind, object, object id, target, file)])] of every group reached "
      "through hard links, root first; kind 'hard', 'soft' or 'external'.");
  m.def(
      "register_memory_file",
      [](const std::string& name, nb::bytes contents) {
        const auto* first = static_cast<const std::byte*>(contents.data());
        h5tile::register_memory_file(name, std::vector<std::byte>(first, first + contents.size()));
      },
      "name"_a, "contents"_a, "Makes `contents` readable as the file `name` (python://<id>/<name>).");
  m.def("register_descriptor_file", &h5tile::register_descriptor_file, "name"_a, "fd"_a,
        "Makes the regular file open as `fd` (duplicated) readable as the file `name` (python://<id>/<name>).");
  m.def("unregister_file", &h5tile::unregister_file, "name"_a, "Forgets a file registered by name.");
  m.def(
      "describe_named_type",
      [](const std::filesystem::path& path, const std::string& name) {
        h5tile::NamedType named;
        {
          nb::gil_scoped_release release;
          named = h5tile::describe_named_type(path, name);
        }
        nb::dict d;
        d["dtype"] = named.dtype.name();
        d["numpy_type"] = named.numpy_type.empty() ? nb::none() : nb::object(nb::str(named.numpy_type.c_str()));
        d["charset"] = named.charset.empty() ? nb::none() : nb::object(nb::str(named.charset.c_str()));
        return d;
      },
      "path"_a, "name"_a, "{dtype, numpy_type, charset} of the named datatype `name` (as describe() gives them).");
  m.def(
      "external_link_target",
      [](const std::filesystem::path& path, const std::string& link, bool allow_external) {
        h5tile::ExternalTarget target;
        {
          nb::gil_scoped_release release;
          target = h5tile::external_link_target(path, link, allow_external);
        }
        return nb::make_tuple(target.file, name_text(target.object));
      },
      "path"_a, "link"_a, "allow_external"_a,
      "(file, object path there) of the external link `link`, under h5tile's rules for external links.");
  m.def(
      "list_group_links",
      [](const std::filesystem::path& path, const std::string& group) {
        h5tile::GroupLinks links;
        {
          nb::gil_scoped_release release;
          links = h5tile::list_group_links(path, group);
        }
        return group_tuple(links);
      },
      "path"_a, "group"_a, "list_links' row of the one group at `group` (soft links followed), without the others.");
  m.def(
      "read_attributes",
      [](const std::filesystem::path& path, const std::string& object) {
        std::vector<h5tile::Attribute> attributes;
        {
          nb::gil_scoped_release release;
          attributes = h5tile::read_attributes(path, object);
        }
        return attribute_list(attributes);
      },
      "path"_a, "object"_a,
      "[(name, kind, shape, value, string width)] of the object's attributes, in h5py's order (creation order where "
      "the object tracks it, else name order).");
  m.def(
      "read_attributes_of_each",
      [](const std::filesystem::path& path, const std::vector<std::string>& objects) {
        std::vector<std::vector<h5tile::Attribute>> each;
        {
          nb::gil_scoped_release release;
          each = h5tile::read_attributes_of_each(path, objects);
        }
        nb::list out;
        for (auto& attributes : each) out.append(attribute_list(attributes));
        return out;
      },
      "path"_a, "objects"_a, "read_attributes() of each object, in order, from one open of the file.");
  m.def(
      "write_attribute",
      [](const std::filesystem::path& path, const std::string& object, const std::string& name, AnyArray value,
         const std::string& sized) {
        const auto v = view_of(value, sized);
        nb::gil_scoped_release release;
        h5tile::write_attribute(path, object, name, v);
      },
      "path"_a, "object"_a, "name"_a, "value"_a, "sized"_a);
  m.def(
      "write_into",
      [](const std::filesystem::path& path, const std::string& dataset, AnyArray value, const std::string& sized,
         const h5tile::Shape& offset, const h5tile::Shape& step, unsigned threads) {
        const auto v = view_of(value, sized);
        nb::gil_scoped_release release;
        h5tile::write_into(path, dataset, v, offset, step, threads);
      },
      "path"_a, "dataset"_a, "value"_a, "sized"_a, "offset"_a, "step"_a, "threads"_a,
      "h5tile::write_into: `value` (the dataset's dtype, C-contiguous) into the elements at offset + i * step, in "
      "place.");
  m.def(
      "write_string_attribute",
      [](const std::filesystem::path& path, const std::string& object, const std::string& name,
         const std::vector<nb::bytes>& strings, const h5tile::Shape& shape, std::size_t fixed_width) {
        std::vector<std::string> values;
        values.reserve(strings.size());
        for (const auto& s : strings) values.emplace_back(s.c_str(), s.size());
        nb::gil_scoped_release release;
        h5tile::write_attribute(path, object, name, values, shape, fixed_width);
      },
      "path"_a, "object"_a, "name"_a, "strings"_a, "shape"_a, "fixed_width"_a);
  m.def(
      "write_empty_attribute",
      [](const std::filesystem::path& path, const std::string& object, const std::string& name,
         const std::string& dtype) {
        const auto type = h5tile::DType::from_name(dtype);
        nb::gil_scoped_release release;
        h5tile::write_empty_attribute(path, object, name, type);
      },
      "path"_a, "object"_a, "name"_a, "dtype"_a);
  m.def(
      "delete_attribute",
      [](const std::filesystem::path& path, const std::string& object, const std::string& name) {
        nb::gil_scoped_release release;
        h5tile::delete_attribute(path, object, name);
      },
      "path"_a, "object"_a, "name"_a);

  // A file held open for writing while an h5tile.File in a write mode is open.
  m.def(
      "hold_for_writing",
      [](const std::filesystem::path& path) {
        nb::gil_scoped_release release;
        h5tile::hold_for_writing(path);
      },
      "path"_a);
  m.def(
      "flush_writes",
      [](const std::filesystem::path& path) {
        nb::gil_scoped_release release;
        h5tile::flush_writes(path);
      },
      "path"_a);
  m.def(
      "hdf5_library_version", [] { return h5tile::hdf5_library_version(); },
      "(major, minor, release) of the HDF5 library h5tile reads and writes files with.");
  m.def(
      "lend_for_writing",
      [](const std::filesystem::path& path) {
        nb::gil_scoped_release release;
        h5tile::lend_for_writing(path);
      },
      "path"_a, "Lends the held file to h5py's HDF5 (h5tile::lend_for_writing).");
  m.def(
      "take_back_for_writing",
      [](const std::filesystem::path& path) {
        nb::gil_scoped_release release;
        h5tile::take_back_for_writing(path);
      },
      "path"_a, "Ends lend_for_writing (h5tile::take_back_for_writing).");
  m.def(
      "release_for_writing",
      [](const std::filesystem::path& path) {
        nb::gil_scoped_release release;
        h5tile::release_for_writing(path);
      },
      "path"_a);

  // Changes to the structure (include/h5tile/objects.hpp), for h5tile.File's modes and groups.
  m.def(
      "create_file",
      [](const std::filesystem::path& path, bool exclusive, bool track_order, std::uint64_t userblock_size) {
        nb::gil_scoped_release release;
        h5tile::create_file(path, exclusive, {.track_order = track_order, .userblock_size = userblock_size});
      },
      "path"_a, "exclusive"_a, "track_order"_a = false, "userblock_size"_a = 0);
  m.def(
      "create_group",
      [](const std::filesystem::path& path, const std::string& name, bool track_order) {
        nb::gil_scoped_release release;
        h5tile::create_group(path, name, track_order);
      },
      "path"_a, "name"_a, "track_order"_a = false);
  m.def(
      "delete_link",
      [](const std::filesystem::path& path, const std::string& name) {
        nb::gil_scoped_release release;
        h5tile::delete_link(path, name);
      },
      "path"_a, "name"_a);
  m.def(
      "move_link",
      [](const std::filesystem::path& path, const std::string& from, const std::string& to) {
        nb::gil_scoped_release release;
        h5tile::move_link(path, from, to);
      },
      "path"_a, "source"_a, "dest"_a);
  m.def(
      "create_link",
      [](const std::filesystem::path& path, const std::string& name, const std::string& kind, const std::string& target,
         const std::string& file) {
        h5tile::Link link;
        link.kind = kind == "soft"       ? h5tile::LinkKind::Soft
                    : kind == "external" ? h5tile::LinkKind::External
                    : kind == "hard"     ? h5tile::LinkKind::Hard
                                     : throw h5tile::InvalidArgument("a link is soft, external or hard, not " + kind);
        link.target = target;
        link.file = file;
        nb::gil_scoped_release release;
        h5tile::create_link(path, name, link);
      },
      "path"_a, "name"_a, "kind"_a, "target"_a, "file"_a = "",
      "A link `name`: soft (to the path `target`), external (`target` in `file`), hard (to the object at `target`).");
  m.def(
      "copy_object",
      [](const std::filesystem::path& source, const std::string& from, const std::filesystem::path& destination,
         const std::string& to, bool shallow, bool expand_soft, bool expand_external, bool expand_refs,
         bool without_attrs) {
        nb::gil_scoped_release release;
        h5tile::copy_object(source, from, destination, to,
                            {shallow, expand_soft, expand_external, expand_refs, without_attrs});
      },
      "source"_a, "source_name"_a, "destination"_a, "dest_name"_a, "shallow"_a = false, "expand_soft"_a = false,
      "expand_external"_a = false, "expand_refs"_a = false, "without_attrs"_a = false);
  m.def(
      "resize_dataset",
      [](const std::filesystem::path& path, const std::string& name, const h5tile::Shape& shape) {
        nb::gil_scoped_release release;
        h5tile::resize_dataset(path, name, shape);
      },
      "path"_a, "name"_a, "shape"_a);
  m.def(
      "create_virtual_dataset",
      [](const std::filesystem::path& path, const std::string& name, const std::string& dtype,
         const std::string& numpy_type, const std::string& charset, const std::string& named_type,
         const h5tile::Shape& shape, const std::vector<std::optional<std::uint64_t>>& max_shape,
         const nb::bytes& fill_value,
         const std::vector<std::tuple<nb::bytes, std::string, std::string, nb::bytes>>& mappings) {
        h5tile::DatasetCreation creation;
        creation.dtype = h5tile::DType::from_name(dtype);
        creation.numpy_type = numpy_type;
        creation.charset = charset;
        creation.named_type = named_type;
        creation.shape = shape;
        for (const auto& m : max_shape) creation.max_shape.push_back(m.value_or(h5tile::kUnlimitedExtent));
        const auto bytes_of = [](const nb::bytes& b) {
          const auto* begin = static_cast<const std::byte*>(static_cast<const void*>(b.c_str()));
          return std::vector<std::byte>(begin, begin + b.size());
        };
        creation.fill_value = bytes_of(fill_value);
        std::vector<h5tile::VirtualMapping> made;
        for (const auto& [selection, file, dataset, source] : mappings) {
          made.push_back({bytes_of(selection), file, dataset, bytes_of(source)});
        }
        nb::gil_scoped_release release;
        h5tile::create_virtual_dataset(path, name, creation, made);
      },
      "path"_a, "name"_a, "dtype"_a, "numpy_type"_a, "charset"_a, "named_type"_a, "shape"_a, "max_shape"_a,
      "fill_value"_a, "mappings"_a,
      "A virtual dataset (h5tile::create_virtual_dataset); mappings: (selection, file, dataset, source "
      "selection), selections as H5Sencode writes them.");
  m.def(
      "held_for_writing", [](const std::filesystem::path& path) { return h5tile::held_for_writing(path); }, "path"_a,
      "Whether this process holds `path` open for writing (h5tile::held_for_writing).");
  m.def(
      "commit_datatype",
      [](const std::filesystem::path& path, const std::string& name, const std::string& dtype,
         const std::string& numpy_type, const std::string& charset) {
        h5tile::DatasetCreation type;
        type.dtype = h5tile::DType::from_name(dtype);
        type.numpy_type = numpy_type;
        type.charset = charset;
        nb::gil_scoped_release release;
        h5tile::commit_datatype(path, name, type);
      },
      "path"_a, "name"_a, "dtype"_a, "numpy_type"_a = "", "charset"_a = "",
      "A named datatype (h5tile::commit_datatype): `dtype` the core's name, `numpy_type` as create_dataset's.");
  m.def(
      "write_strings",
      [](const std::filesystem::path& path, const std::string& dataset, const std::vector<nb::bytes>& values,
         const h5tile::Shape& shape, const h5tile::Shape& offset, const h5tile::Shape& step) {
        std::vector<std::string> strings;
        strings.reserve(values.size());
        for (const auto& v : values) strings.emplace_back(v.c_str(), v.size());
        nb::gil_scoped_release release;
        h5tile::write_strings(path, dataset, strings, shape, offset, step);
      },
      "path"_a, "dataset"_a, "values"_a, "shape"_a, "offset"_a, "step"_a,
      "Variable-length strings (each one's bytes) written into a part of a dataset (h5tile::write_strings).");
  m.def(
      "create_dataset",
      [](const std::filesystem::path& path, const std::string& name, const std::string& dtype,
         const h5tile::Shape& shape, const std::vector<std::optional<std::uint64_t>>& max_shape,
         const h5tile::Shape& chunk, const std::string& compressor, int level, bool shuffle, bool fletcher32,
         bool compact, const nb::bytes& fill_value, bool track_order, const std::string& numpy_type,
         const std::string& charset, const std::string& fill_time, std::optional<unsigned> scale_offset,
         const std::vector<std::tuple<std::string, std::uint64_t, std::optional<std::uint64_t>>>& external,
         bool null_space, const std::string& named_type, bool track_times) {
        h5tile::DatasetCreation creation;
        creation.named_type = named_type;
        creation.track_times = track_times;
        if (fill_time == "alloc") {
          creation.fill_time = h5tile::FillTime::Alloc;
        } else if (fill_time == "never") {
          creation.fill_time = h5tile::FillTime::Never;
        } else if (fill_time != "ifset") {
          throw h5tile::InvalidArgument("fill_time must be 'ifset', 'alloc' or 'never', not '" + fill_time + "'");
        }
        creation.scale_offset = scale_offset;
        for (const auto& [file, offset, size] : external) {
          creation.external.push_back({file, offset, size.value_or(h5tile::kUnlimitedExtent)});
        }
        creation.null_space = null_space;
        creation.dtype = h5tile::DType::from_name(dtype);
        creation.numpy_type = numpy_type;
        creation.charset = charset;
        creation.shape = shape;
        for (const auto& m : max_shape) creation.max_shape.push_back(m.value_or(h5tile::kUnlimitedExtent));
        creation.chunk = chunk;
        creation.compression = {
            compressor.empty() ? h5tile::Compressor::None : h5tile::compressor_from_name(compressor), level, shuffle,
            fletcher32};
        creation.compact = compact;
        const auto* bytes = static_cast<const std::byte*>(static_cast<const void*>(fill_value.c_str()));
        creation.fill_value.assign(bytes, bytes + fill_value.size());
        creation.track_order = track_order;
        nb::gil_scoped_release release;
        h5tile::create_dataset(path, name, creation);
      },
      "path"_a, "name"_a, "dtype"_a, "shape"_a, "max_shape"_a, "chunk"_a, "compressor"_a = "", "level"_a = -1,
      "shuffle"_a = false, "fletcher32"_a = false, "compact"_a = false, "fill_value"_a = nb::bytes(""),
      "track_order"_a = false, "numpy_type"_a = "", "charset"_a = "", "fill_time"_a = "ifset",
      "scale_offset"_a = nb::none(), "external"_a = nb::list(), "null_space"_a = false, "named_type"_a = "",
      "track_times"_a = false,
      "An empty dataset (h5tile::create_dataset); `max_shape`: None for an unlimited axis, empty for `shape`; "
      "`numpy_type`: a structured type in DatasetInfo::numpy_type's JSON form (`dtype` then V<n>).");
}

}  // namespace h5tile::python
