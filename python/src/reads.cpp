// The reads in the _h5tile extension: from_file, read_into, read_box and describe, and the readers
// kept between reads by h5tile.File's datasets (_Reader) and h5tile.dask's blocks (_Batched).
// Datasets of variable-length strings come back as h5py gives them (read_or_strings); Ctrl-C
// cancels a read in progress (interrupt.hpp).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <h5tile/h5tile.hpp>

#include "arrays.hpp"
#include "interrupt.hpp"
#include "progress.hpp"
#include "reads.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace h5tile::python {

namespace {

// from_file and read_box of a dataset of variable-length strings, which the core's reads of fixed-
// size elements refuse with UnsupportedType: as h5py's ds[...] gives them, a NumPy object array
// of bytes, read with read_strings. Rethrows the core's error for any other dataset. Interruptible
// (Ctrl-C cancels through `options.progress`, which must answer `cancel`).
// A box of at most kInlineReadElements elements of a local file is read on the calling thread
// (with the GIL released): it ends well within the second a user waits after Ctrl-C, and a thread
// started per read would cost a small read (h5tile.File's rows) a large part of its time. A URL's
// reads may wait on a slow link: those stay interruptible whatever their size.
inline constexpr std::uint64_t kInlineReadElements = std::uint64_t{1} << 18;

template <class Read>
nb::object read_or_strings(const std::filesystem::path& path, const std::string& dataset,
                           const std::optional<h5tile::Box>& box, const h5tile::ReadOptions& options,
                           const CancelFlag& cancel, Read&& read) {
  std::optional<h5tile::Array> array;
  std::vector<std::string> strings;
  h5tile::Shape shape;
  const bool small = box && box->count() <= kInlineReadElements && path.native().find("://") == std::string::npos;
  run_interruptibly(cancel, small, [&] {
    try {
      array.emplace(read());
    } catch (const h5tile::UnsupportedType&) {
      const auto info = h5tile::describe(path, dataset, false);
      if (info.dtype.kind() != h5tile::DTypeKind::VarString) throw;
      strings = h5tile::read_strings(path, dataset, box, options);
      shape = box ? box->extent : info.shape;
    }
  });
  if (array) return to_python(std::move(*array));
  const nb::module_ numpy = nb::module_::import_("numpy");
  nb::list items;
  for (const auto& s : strings) items.append(nb::bytes(s.data(), s.size()));
  nb::object flat = numpy.attr("empty")(strings.size(), "dtype"_a = "object");
  flat[nb::slice(nb::none(), nb::none(), nb::none())] = items;
  return flat.attr("reshape")(nb::tuple(nb::cast(shape)));
}

// h5tile.File's datasets and h5tile.dask's blocks: a DatasetReader (the dataset kept open between
// reads, checked before each) and what read_or_strings needs for a dataset of strings.
// Ctrl-C cancels its reads in progress (through `cancel`, cleared when a read starts).
struct PyReader {
  std::filesystem::path path;
  std::string dataset;
  CancelFlag cancel = make_cancel_flag();
  h5tile::ReadOptions options;
  h5tile::DatasetReader reader;

  PyReader(const std::filesystem::path& p, const std::string& d, int device, unsigned threads, bool allow_external,
           bool verify_checksums, std::optional<bool> probe)
      : path(p),
        dataset(d),
        options{.threads = threads,
                .device = device,
                .progress = cancellable(cancel, {}),
                .allow_external_sources = allow_external,
                .verify_checksums = verify_checksums,
                .probe = probe},
        reader(p, d, options) {}
};

class PyBatched {
 public:
  PyBatched(const std::filesystem::path& path, const std::string& dataset, h5tile::Shape chunk, int device,
            unsigned threads, std::optional<bool> probe, bool allow_external_sources, bool verify_checksums)
      : reader_(path, dataset, std::move(chunk),
                {.threads = threads,
                 .device = device,
                 .progress = cancellable(cancel_, {}),
                 .allow_external_sources = allow_external_sources,
                 .verify_checksums = verify_checksums,
                 .probe = probe}) {}
  // The next block; Ctrl-C cancels the block being read (the iteration then ends) and raises.
  nb::object next() {
    std::optional<h5tile::Block> block;
    run_interruptibly(cancel_, [&] { block = reader_.next(); });
    if (!block) throw nb::stop_iteration();
    nb::tuple offset = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(block->offset.size())));
    for (std::size_t i = 0; i < block->offset.size(); ++i) {
      PyTuple_SET_ITEM(offset.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromUnsignedLongLong(block->offset[i]));
    }
    return nb::make_tuple(to_python(std::move(block->data)), offset);
  }
  [[nodiscard]] std::uint64_t count() const { return reader_.block_count(); }

 private:
  CancelFlag cancel_ = make_cancel_flag();  // before reader_, whose progress callback holds it
  h5tile::BatchedReader reader_;
};

// describe()'s answer as the Python package reads it.
nb::dict info_dict(const h5tile::DatasetInfo& info) {
  nb::dict d;
  d["dtype"] = info.dtype.name();
  d["shape"] = nb::tuple(nb::cast(info.shape));
  nb::list max_shape;  // None on an unlimited axis, as h5py's maxshape
  for (const auto n : info.max_shape) {
    max_shape.append(n == h5tile::kUnlimitedExtent ? nb::none() : nb::object(nb::int_(n)));
  }
  d["max_shape"] = nb::tuple(max_shape);
  d["layout"] = info.layout;
  d["chunk"] = info.chunk.empty() ? nb::none() : nb::object(nb::tuple(nb::cast(info.chunk)));
  d["filters"] = info.filters;
  d["charset"] = info.charset.empty() ? nb::none() : nb::object(nb::str(info.charset.c_str()));
  d["filter_values"] = info.filter_values;
  d["decoder"] = info.decoder.empty() ? nb::none() : nb::object(nb::str(info.decoder.c_str()));
  d["decoder_reason"] = info.decoder_reason.empty() ? nb::none() : nb::object(nb::str(info.decoder_reason.c_str()));
  d["virtual_sources"] = info.virtual_sources;
  d["numpy_type"] = info.numpy_type.empty() ? nb::none() : nb::object(nb::str(info.numpy_type.c_str()));
  d["null_space"] = info.null_space;
  d["fill_value"] = nb::bytes(reinterpret_cast<const char*>(info.fill_value.data()), info.fill_value.size());
  return d;
}

}  // namespace

void bind_reads(nb::module_& m) {
  m.def(
      "from_file",
      [](const std::filesystem::path& path, const std::string& dataset, int device, unsigned threads,
         nb::object progress, bool allow_external, bool verify_checksums, std::optional<bool> probe) {
        auto callback = progress_of(std::move(progress));
        nb::object result;
        const auto cancel = make_cancel_flag();
        raising_callback_errors(callback.error, [&] {
          const h5tile::ReadOptions options{.threads = threads,
                                            .device = device,
                                            .progress = cancellable(cancel, std::move(callback.callback)),
                                            .allow_external_sources = allow_external,
                                            .verify_checksums = verify_checksums,
                                            .probe = probe};
          result = read_or_strings(path, dataset, std::nullopt, options, cancel,
                                   [&] { return h5tile::from_file(path, dataset, options); });
        });
        return result;
      },
      "path"_a, "dataset"_a, "device"_a, "threads"_a, "progress"_a = nb::none(), "allow_external_sources"_a = false,
      "verify_checksums"_a = false, "probe"_a = nb::none());

  m.def(
      "read_into",
      [](nb::ndarray<> out, const std::filesystem::path& path, const std::string& dataset, const std::string& sized,
         const h5tile::Shape& offset, unsigned threads, nb::object progress, bool allow_external, bool verify_checksums,
         std::optional<bool> probe) {
        const auto v = view_of(out, sized);
        auto callback = progress_of(std::move(progress));
        const auto cancel = make_cancel_flag();
        raising_callback_errors(callback.error, [&] {
          run_interruptibly(cancel, [&] {
            h5tile::read_into(path, dataset, v, offset,
                              {.threads = threads,
                               .progress = cancellable(cancel, std::move(callback.callback)),
                               .allow_external_sources = allow_external,
                               .verify_checksums = verify_checksums,
                               .probe = probe});
          });
        });
      },
      "out"_a, "path"_a, "dataset"_a, "sized_dtype"_a, "offset"_a, "threads"_a, "progress"_a = nb::none(),
      "allow_external_sources"_a = false, "verify_checksums"_a = false, "probe"_a = nb::none());

  m.def(
      "read_box",
      [](const std::filesystem::path& path, const std::string& dataset, const h5tile::Shape& offset,
         const h5tile::Shape& extent, int device, unsigned threads, bool allow_external, bool verify_checksums,
         std::optional<bool> probe) {
        const auto cancel = make_cancel_flag();
        const h5tile::ReadOptions options{.threads = threads,
                                          .device = device,
                                          .progress = cancellable(cancel, {}),
                                          .allow_external_sources = allow_external,
                                          .verify_checksums = verify_checksums,
                                          .probe = probe};
        const h5tile::Box box{offset, extent};
        return read_or_strings(path, dataset, box, options, cancel,
                               [&] { return h5tile::read_box(path, dataset, box, options); });
      },
      "path"_a, "dataset"_a, "offset"_a, "extent"_a, "device"_a, "threads"_a, "allow_external_sources"_a = false,
      "verify_checksums"_a = false, "probe"_a = nb::none());

  m.def(
      "describe",
      [](const std::filesystem::path& path, const std::string& dataset, std::optional<bool> probe) {
        h5tile::DatasetInfo info;
        {
          nb::gil_scoped_release release;
          info = h5tile::describe(path, dataset, probe);
        }
        return info_dict(info);
      },
      "path"_a, "dataset"_a, "probe"_a = nb::none());
  m.def(
      "describe_each",
      [](const std::filesystem::path& path, const std::vector<std::string>& datasets, std::optional<bool> probe) {
        std::vector<h5tile::DatasetInfo> infos;
        {
          nb::gil_scoped_release release;
          infos = h5tile::describe_each(path, datasets, probe, /*stored_bytes=*/false);  // not in info_dict
        }
        nb::list out;
        for (const auto& info : infos) out.append(info_dict(info));
        return out;
      },
      "path"_a, "datasets"_a, "probe"_a = nb::none(),
      "describe() of each dataset, in order, from one open of the file (its size on disk not computed: "
      "describe() has none either).");

  nb::class_<PyBatched>(m, "_Batched")
      .def(nb::init<const std::filesystem::path&, const std::string&, h5tile::Shape, int, unsigned, std::optional<bool>,
                    bool, bool>(),
           "path"_a, "dataset"_a, "chunk_size"_a, "device"_a, "threads"_a, "probe"_a = nb::none(),
           "allow_external_sources"_a = false, "verify_checksums"_a = false)
      .def("__iter__", [](nb::handle self) { return self; })
      .def("__next__", &PyBatched::next)
      .def("__len__", &PyBatched::count);

  nb::class_<PyReader>(m, "_Reader")
      .def(nb::init<const std::filesystem::path&, const std::string&, int, unsigned, bool, bool, std::optional<bool>>(),
           "path"_a, "dataset"_a, "device"_a, "threads"_a, "allow_external_sources"_a = false,
           "verify_checksums"_a = false, "probe"_a = nb::none())
      .def(
          "read_box",
          [](const PyReader& r, const h5tile::Shape& offset, const h5tile::Shape& extent) {
            const h5tile::Box box{offset, extent};
            r.cancel->store(false);
            return read_or_strings(r.path, r.dataset, box, r.options, r.cancel, [&] { return r.reader.read_box(box); });
          },
          "offset"_a, "extent"_a)
      .def(
          "read_into",
          [](const PyReader& r, nb::ndarray<> out, const std::string& sized, const h5tile::Shape& offset) {
            const auto v = view_of(out, sized);
            nb::gil_scoped_release release;
            r.reader.read_into(v, offset);
          },
          "out"_a, "sized_dtype"_a, "offset"_a)
      .def(
          "expect",
          [](PyReader& r, const h5tile::Shape& shape, const std::string& dtype) {
            nb::gil_scoped_release release;
            r.reader.expect(shape, h5tile::DType::from_name(dtype));
          },
          "shape"_a, "dtype"_a, "The shape and dtype name (describe()'s) that every open must find, the first one too.")
      .def(
          "close",
          [](PyReader& r) {
            nb::gil_scoped_release release;
            r.reader.close();
          },
          "Lets the open file go (the next read opens it again).")
      .def_prop_ro("is_open", [](const PyReader& r) { return r.reader.is_open(); })
      .def_prop_ro("cached_chunks", [](const PyReader& r) { return r.reader.cached_chunks(); })
      .def_prop_ro("opens", [](const PyReader& r) { return r.reader.opens(); });
}

}  // namespace h5tile::python
