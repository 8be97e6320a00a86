// The _h5tile extension: converts types between Python and the C++ API, nothing more.
// Arrays cross as nb::ndarray (DLPack or the buffer protocol, CPU or CUDA) without copies;
// arrays returned own their memory through a capsule; I/O releases the GIL.
#include <memory>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <h5tile/h5tile.hpp>

#include "arrays.hpp"
#include "interrupt.hpp"
#include "objects.hpp"
#include "progress.hpp"
#include "reads.hpp"
#include "settings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using h5tile::python::AnyArray;
using h5tile::python::CallbackError;
using h5tile::python::CancelFlag;
using h5tile::python::cancellable;
using h5tile::python::make_cancel_flag;
using h5tile::python::progress_of;
using h5tile::python::raising_callback_errors;
using h5tile::python::run_interruptibly;
using h5tile::python::to_python;
using h5tile::python::view_of;
using h5tile::python::wait_interruptibly;

nb::dict read_pattern_dict(const h5tile::ReadPatternReport& r) {
  nb::dict d;
  d["pattern"] = r.pattern;
  d["setting"] = r.setting;
  d["detection"] = r.detection;
  d["sampled_pages"] = r.sampled_pages;
  d["cached_pages"] = r.cached_pages;
  d["readers"] = r.readers;
  d["request_bytes"] = r.request_bytes;
  return d;
}

// The exception classes, created at import with the Python bases users expect.
struct Exceptions {
  PyObject* error = nullptr;
  PyObject* invalid = nullptr;
  PyObject* unsupported = nullptr;
  PyObject* dataset_not_found = nullptr;
  PyObject* not_a_dataset = nullptr;
  PyObject* is_a_directory = nullptr;
  PyObject* file_not_found = nullptr;
  PyObject* file_exists = nullptr;
  PyObject* not_hdf5 = nullptr;
  PyObject* probe_failed = nullptr;
  PyObject* virtual_source = nullptr;
  PyObject* hdf5 = nullptr;
  PyObject* io = nullptr;
  PyObject* runtime = nullptr;
  PyObject* cancelled = nullptr;
};
Exceptions exceptions;

PyObject* make_exception(nb::module_& m, const char* name, std::initializer_list<PyObject*> bases, const char* doc,
                         PyObject* dict = nullptr) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(bases.size()));
  Py_ssize_t i = 0;
  for (PyObject* b : bases) {
    Py_INCREF(b);
    PyTuple_SET_ITEM(tuple, i++, b);
  }
  const std::string qualified = std::string("h5tile.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, tuple, dict);
  Py_DECREF(tuple);
  m.attr(name) = nb::borrow(type);
  return type;
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const h5tile::UnsupportedType& e) {
    PyErr_SetString(exceptions.unsupported, e.what());
  } catch (const h5tile::DatasetNotFound& e) {
    PyErr_SetString(exceptions.dataset_not_found, e.what());
  } catch (const h5tile::NotADataset& e) {
    PyErr_SetString(exceptions.not_a_dataset, e.what());
  } catch (const h5tile::IsADirectory& e) {
    PyErr_SetString(exceptions.is_a_directory, e.what());
  } catch (const h5tile::InvalidArgument& e) {
    PyErr_SetString(exceptions.invalid, e.what());
  } catch (const h5tile::FileNotFound& e) {
    PyErr_SetString(exceptions.file_not_found, e.what());
  } catch (const h5tile::FileExists& e) {
    PyErr_SetString(exceptions.file_exists, e.what());
  } catch (const h5tile::ProbeFailed& e) {
    PyErr_SetString(exceptions.probe_failed, e.what());
  } catch (const h5tile::NotHdf5File& e) {
    PyErr_SetString(exceptions.not_hdf5, e.what());
  } catch (const h5tile::VirtualSourceError& e) {
    PyErr_SetString(exceptions.virtual_source, e.what());
  } catch (const h5tile::Hdf5Error& e) {
    PyErr_SetString(exceptions.hdf5, e.what());
  } catch (const h5tile::IoError& e) {
    // As OSError(errno, message): `.errno` is the failed call's, as Python users expect.
    PyObject* args = Py_BuildValue("(is)", e.error_number(), e.what());
    PyErr_SetObject(exceptions.io, args);
    Py_XDECREF(args);
  } catch (const h5tile::Cancelled& e) {
    PyErr_SetString(exceptions.cancelled, e.what());
  } catch (const h5tile::RuntimeError& e) {
    PyErr_SetString(exceptions.runtime, e.what());
  }
}

// A write in progress, with the exception its progress callable may raise and the flag that
// cancels it (Ctrl-C during wait()).
struct PyWriteHandle {
  h5tile::WriteHandle handle;
  std::shared_ptr<CallbackError> error;
  CancelFlag cancel;

  // Waits until the write has ended; Ctrl-C cancels it (and waits for it to stop) and raises.
  void wait_interruptibly() const {
    ::h5tile::python::wait_interruptibly([&](auto slice) { return handle.wait_for(slice); },
                                         [&] { cancel->store(true); });
  }
};

h5tile::Layout layout_of(const std::string& s) { return h5tile::layout_from_name(s); }

h5tile::Compression compression_of(const std::string& compressor, int level, bool shuffle, bool fletcher32) {
  return {h5tile::compressor_from_name(compressor), level, shuffle, fletcher32};
}

h5tile::Mode mode_of(const std::string& s) {
  if (s == "w") return h5tile::Mode::Overwrite;
  if (s == "a") return h5tile::Mode::Append;
  if (s == "x" || s == "w-") return h5tile::Mode::Exclusive;
  throw h5tile::InvalidArgument(
      "mode must be 'w' (overwrite), 'a' (add or replace the dataset) or 'x' (fail if the "
      "file exists), not '" +
      s + "'");
}

// A Communicator over a Python object with mpi4py's interface (Get_rank, Get_size,
// allgather, bcast): h5tile needs no MPI of its own for it. An object whose ranks are threads of
// this process (h5tile.legate's point tasks) says so with `threads_of_one_process = True`.
class PyCommunicator final : public h5tile::Communicator {
 public:
  explicit PyCommunicator(nb::object comm) : comm_(std::move(comm)) {
    rank_ = nb::cast<int>(comm_.attr("Get_rank")());
    size_ = nb::cast<int>(comm_.attr("Get_size")());
    one_process_ = nb::hasattr(comm_, "threads_of_one_process") && nb::cast<bool>(comm_.attr("threads_of_one_process"));
  }
  [[nodiscard]] bool threads_of_one_process() const noexcept override { return one_process_; }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] std::vector<std::string> all_gather(const std::string& data) override {
    nb::gil_scoped_acquire gil;
    nb::list all = nb::cast<nb::list>(comm_.attr("allgather")(nb::bytes(data.data(), data.size())));
    std::vector<std::string> out;
    for (auto item : all) {
      const auto b = nb::cast<nb::bytes>(item);
      out.emplace_back(b.c_str(), b.size());
    }
    return out;
  }
  // Through the object's gather (mpi4py's: the root's list, None elsewhere) where it has one.
  [[nodiscard]] std::vector<std::string> gather(const std::string& data, int root) override {
    {
      nb::gil_scoped_acquire gil;
      if (nb::hasattr(comm_, "gather")) {
        const nb::object got = comm_.attr("gather")(nb::bytes(data.data(), data.size()), "root"_a = root);
        std::vector<std::string> out;
        if (rank_ == root) {
          for (auto item : nb::cast<nb::list>(got)) {
            const auto b = nb::cast<nb::bytes>(item);
            out.emplace_back(b.c_str(), b.size());
          }
        }
        return out;
      }
    }
    return h5tile::Communicator::gather(data, root);
  }
  [[nodiscard]] std::string broadcast(const std::string& data, int root) override {
    nb::gil_scoped_acquire gil;
    const auto b = nb::cast<nb::bytes>(comm_.attr("bcast")(nb::bytes(data.data(), data.size()), "root"_a = root));
    return {b.c_str(), b.size()};
  }

 private:
  nb::object comm_;
  int rank_ = 0;
  int size_ = 1;
  bool one_process_ = false;
};

}  // namespace

NB_MODULE(_h5tile, m) {
  m.doc() = "h5tile's C++ core (use the h5tile package, not this module)";
  // The HDF5 this module calls loads no filter plugins: a plugin (from HDF5_PLUGIN_PATH, which
  // netCDF4-python and others set on import) is built against another HDF5 (the copy in its
  // wheel), whose functions its callbacks call with this HDF5's identifiers: every write of a
  // filter it names then failed "error during user callback". h5tile encodes and decodes its
  // filters itself and names the ones it cannot read. Where the module links HDF5's shared
  // library, that library serves h5tile alone in a Python process (h5py and netCDF4 bring their
  // own copies).
  h5tile::disable_hdf5_plugins();
  nb::module_ builtins = nb::module_::import_("builtins");
  auto base = [&](const char* n) { return builtins.attr(n).ptr(); };
  exceptions.error = make_exception(m, "Error", {base("Exception")}, "Base class of every h5tile error.");
  exceptions.invalid =
      make_exception(m, "InvalidArgumentError", {exceptions.error, base("ValueError")}, "A bad argument.");
  // Python-only: the package's own checks raise it for an argument of the wrong type (a
  // TypeError, as Python's own functions raise; and an InvalidArgumentError, as h5tile raised
  // for such arguments before).
  (void)make_exception(m, "ArgumentTypeError", {exceptions.invalid, base("TypeError")},
                       "An argument of the wrong type (a TypeError, and an InvalidArgumentError).");
  exceptions.unsupported = make_exception(m, "UnsupportedTypeError", {exceptions.error, base("TypeError")},
                                          "A dtype or HDF5 type h5tile does not support.");
  // Also a KeyError, as h5py raises for a missing name; printed as the other errors are (a
  // KeyError's own str() would quote the message).
  nb::dict plain_str;
  plain_str["__str__"] = nb::borrow(base("BaseException")).attr("__str__");
  exceptions.dataset_not_found =
      make_exception(m, "DatasetNotFoundError", {exceptions.invalid, base("KeyError")},
                     "The dataset, group or attribute does not exist (a KeyError too).", plain_str.ptr());
  exceptions.not_a_dataset =
      make_exception(m, "NotADatasetError", {exceptions.invalid}, "The name is a group, not a dataset.");
  exceptions.is_a_directory =
      make_exception(m, "IsADirectoryPathError", {exceptions.invalid, base("IsADirectoryError")},
                     "The path is a directory (an IsADirectoryError too).");
  // Names of their own (not FileNotFoundError...): `from h5tile import *` must not shadow the built-ins.
  exceptions.file_not_found = make_exception(m, "NoSuchFileError", {exceptions.error, base("FileNotFoundError")},
                                             "The file does not exist (a FileNotFoundError).");
  exceptions.file_exists = make_exception(m, "FileAlreadyExistsError", {exceptions.error, base("FileExistsError")},
                                          "The file exists (mode 'x'; a FileExistsError).");
  exceptions.runtime = make_exception(m, "OperationError", {exceptions.error, base("RuntimeError")},
                                      "An operation failed at run time (a RuntimeError).");
  exceptions.not_hdf5 = make_exception(m, "NotHdf5FileError", {exceptions.runtime, base("OSError")},
                                       "The file is not HDF5 (an OSError too, as h5py raises).");
  exceptions.probe_failed = make_exception(
      m, "ProbeFailedError", {exceptions.not_hdf5},
      "HDF5 crashed or did not finish opening the file's metadata in a child process (probe=True): a damaged file.");
  exceptions.virtual_source = make_exception(m, "VirtualSourceError", {exceptions.runtime},
                                             "A source of a virtual dataset is missing or does not match.");
  exceptions.hdf5 = make_exception(m, "Hdf5Error", {exceptions.runtime}, "An HDF5 library call failed.");
  exceptions.io = make_exception(m, "IoError", {exceptions.error, base("OSError")}, "A system call failed.");
  exceptions.cancelled =
      make_exception(m, "CancelledError", {exceptions.runtime}, "The progress callback cancelled the operation.");
  m.def(
      "consolidate",
      [](const std::filesystem::path& in, const std::string& dataset, const std::filesystem::path& out,
         unsigned threads, bool sync, bool keep_previous, const h5tile::Shape& chunk, const std::string& compression,
         int level, bool shuffle, bool fletcher32, nb::object progress, std::optional<bool> probe,
         const std::string& mode) {
        auto callback = progress_of(std::move(progress));
        const auto filters = compression_of(compression, level, shuffle, fletcher32);
        const auto write_mode = mode_of(mode);
        const auto cancel = make_cancel_flag();
        raising_callback_errors(callback.error, [&] {
          run_interruptibly(cancel, [&] {
            h5tile::consolidate(in, dataset, out,
                                {.mode = write_mode,
                                 .threads = threads,
                                 .sync = sync,
                                 .keep_previous = keep_previous,
                                 .progress = cancellable(cancel, std::move(callback.callback)),
                                 .chunk = chunk,
                                 .compression = filters,
                                 .probe = probe});
          });
        });
      },
      "path_in"_a, "dataset"_a, "path_out"_a, "threads"_a, "sync"_a, "keep_previous"_a, "chunk"_a, "compression"_a,
      "level"_a, "shuffle"_a, "fletcher32"_a, "progress"_a = nb::none(), "probe"_a = nb::none(), "mode"_a = "x");
  nb::register_exception_translator(translate);

  nb::class_<PyWriteHandle>(m, "_WriteHandle")
      .def("wait",
           [](const PyWriteHandle& h) {
             h.wait_interruptibly();
             raising_callback_errors(h.error, [&] {
               nb::gil_scoped_release release;
               h.handle.wait();
             });
           })
      .def("done", [](const PyWriteHandle& h) { return h.handle.done(); });

  // Waits until every write of `handles` has ended, without raising their errors; Ctrl-C cancels
  // them all (and waits for them to stop) and raises.
  m.def(
      "wait_all",
      [](const std::vector<const PyWriteHandle*>& handles) {
        wait_interruptibly(
            [&](auto slice) {
              for (const auto* h : handles) {
                if (!h->handle.wait_for(slice)) return false;
              }
              return true;
            },
            [&] {
              for (const auto* h : handles) h->cancel->store(true);
            });
      },
      "handles"_a);

  m.def(
      "to_file",
      [](const AnyArray& array, const std::filesystem::path& path, const std::string& dataset, const std::string& sized,
         const std::string& layout, const std::string& mode, unsigned ranks, bool sync, bool keep_previous,
         const h5tile::Shape& chunk, const std::string& compression, int level, bool shuffle, bool fletcher32,
         nb::object progress) {
        const auto v = view_of(array, sized);
        const auto filters = compression_of(compression, level, shuffle, fletcher32);
        auto callback = progress_of(std::move(progress));
        auto error = callback.error;
        auto cancel = make_cancel_flag();
        nb::gil_scoped_release release;
        return PyWriteHandle{h5tile::to_file(v, path, dataset,
                                             {.layout = layout_of(layout),
                                              .mode = mode_of(mode),
                                              .ranks = ranks,
                                              .sync = sync,
                                              .keep_previous = keep_previous,
                                              .chunk = chunk,
                                              .compression = filters,
                                              .progress = cancellable(cancel, std::move(callback.callback))}),
                             std::move(error), cancel};
      },
      "array"_a, "path"_a, "dataset"_a, "sized_dtype"_a, "layout"_a, "mode"_a, "ranks"_a, "sync"_a, "keep_previous"_a,
      "chunk"_a, "compression"_a, "level"_a, "shuffle"_a, "fletcher32"_a, "progress"_a = nb::none());

  m.def(
      "write_tile",
      [](nb::object comm, const AnyArray& array, const std::filesystem::path& path, const std::string& dataset,
         const std::string& sized, const h5tile::Shape& global_shape, const h5tile::Shape& offset,
         const std::string& layout, const std::string& mode, bool sync, bool keep_previous, const h5tile::Shape& chunk,
         const std::string& compression, int level, bool shuffle, bool fletcher32) {
        PyCommunicator c(std::move(comm));
        const auto v = view_of(array, sized);
        const h5tile::Tile tile{h5tile::Box{offset, v.shape}, v};
        const auto filters = compression_of(compression, level, shuffle, fletcher32);
        nb::gil_scoped_release release;
        h5tile::write_tiles(c, global_shape, {&tile, 1}, path, dataset,
                            {.layout = layout_of(layout),
                             .mode = mode_of(mode),
                             .sync = sync,
                             .keep_previous = keep_previous,
                             .chunk = chunk,
                             .compression = filters});
      },
      "comm"_a, "array"_a, "path"_a, "dataset"_a, "sized_dtype"_a, "global_shape"_a, "offset"_a, "layout"_a, "mode"_a,
      "sync"_a, "keep_previous"_a, "chunk"_a, "compression"_a, "level"_a, "shuffle"_a, "fletcher32"_a);

  m.def(
      "read_tile",
      [](nb::object comm, const std::filesystem::path& path, const std::string& dataset, int device, unsigned threads,
         std::optional<bool> probe) {
        PyCommunicator c(std::move(comm));
        std::optional<h5tile::ReadTile> tile;
        {
          nb::gil_scoped_release release;
          tile.emplace(h5tile::read_tile(c, path, dataset, {.threads = threads, .device = device, .probe = probe}));
        }
        nb::tuple offset = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(tile->box.offset.size())));
        for (std::size_t i = 0; i < tile->box.offset.size(); ++i) {
          PyTuple_SET_ITEM(offset.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromUnsignedLongLong(tile->box.offset[i]));
        }
        return nb::make_tuple(to_python(std::move(tile->data)), offset);
      },
      "comm"_a, "path"_a, "dataset"_a, "device"_a, "threads"_a, "probe"_a = nb::none());

  m.def("check_dataset_name", &h5tile::check_dataset_name, "dataset"_a);
  m.def(
      "without_secrets", [](const std::string& text) { return h5tile::without_secrets(text); }, "text"_a);
  m.def("is_remote", &h5tile::is_remote, "path"_a, "writing"_a = false,
        "Whether h5tile reads `path` as a URL rather than a local path (the core's Location); "
        "InvalidArgumentError naming the scheme for a URL of a scheme h5tile does not serve.");

  m.def("fence", [] {
    nb::gil_scoped_release release;
    h5tile::fence();
  });

  // from_file, read_into, read_box, describe and the readers (reads.cpp), here to keep their place
  // in the generated stub.
  h5tile::python::bind_reads(m);

  m.attr("__version__") = H5TILE_VERSION_STRING;
  h5tile::python::bind_objects(m);
  m.def("open_hdf5_objects", &h5tile::open_hdf5_objects,
        "How many HDF5 objects the HDF5 inside this module has open (0 between h5tile's calls): for leak checks.");
  m.def(
      "hdf5_linkage", [] { return std::string(H5TILE_PYTHON_HDF5_LINKAGE); },
      "\"static\": HDF5 is inside this module with its symbols hidden, so that another HDF5 in the process "
      "(Legate's, which cuPyNumeric puts in the global symbol scope) cannot take its calls; \"shared\": it "
      "links HDF5's shared library (where no usable static one was found when it was built).");
  h5tile::python::bind_settings(m);
  m.def("cuda_device_count", &h5tile::cuda_device_count);
  m.def("compressors", [] {
    std::vector<std::string> names;
    for (const auto c : h5tile::built_compressors()) names.emplace_back(h5tile::compressor_name(c));
    return names;
  });
  m.def(
      "known_compressors",
      [] {
        std::vector<std::string> names;
        for (const auto& c : h5tile::known_compressors()) names.emplace_back(c.name);
        return names;
      },
      "Every compressor h5tile writes, built or not (the codec table's), in the order compressors() lists them.");
  m.def("last_remote_io", [] {
    const auto r = h5tile::last_remote_io();
    nb::dict d;
    d["requests"] = r.requests;
    d["bytes"] = r.bytes;
    d["retries"] = r.retries;
    d["critical_path"] = r.critical_path;
    return d;
  });
  nb::class_<h5tile::KeptOpen>(m, "_KeptOpen",
                               "h5tile::KeptOpen: while this object lives, the calls that open its URL share one open "
                               "(nothing for a local path).")
      .def(nb::init<const std::filesystem::path&>(), "path"_a, nb::call_guard<nb::gil_scoped_release>());
  m.def("set_s3_settings", &h5tile::set_s3_settings, "prefix"_a, "settings"_a,
        "h5tile::set_s3_settings: AWS variables for the s3:// URLs under `prefix`, laid over the "
        "environment's (an empty value unsets one; an empty dict forgets the prefix).");
  m.def("last_read_pattern", [] { return read_pattern_dict(h5tile::last_read_pattern()); });
  m.def("last_device_io", [] {
    const auto r = h5tile::last_device_io();
    nb::dict d;
    d["path"] = r.path;
    d["gds_reason"] = r.gds_reason;
    d["decoder"] = r.decoder;
    d["decoder_reason"] = r.decoder_reason;
    d["staging_pinned_bytes"] = r.staging_pinned_bytes;
    const auto& ph = r.decode_phases;
    nb::dict phases;
    phases["read"] = ph.read;
    phases["h2d"] = ph.h2d;
    phases["decode"] = ph.decode;
    phases["check"] = ph.check;
    phases["unshuffle"] = ph.unshuffle;
    phases["scatter"] = ph.scatter;
    phases["wait"] = ph.wait;
    phases["wall"] = ph.wall;
    phases["setup"] = ph.setup;
    phases["batches"] = ph.batches;
    phases["chunks"] = ph.chunks;
    phases["stored_bytes"] = ph.stored_bytes;
    d["decode_phases"] = phases;
    const auto& c = r.decoder_choice;
    nb::dict choice;
    choice["how"] = c.how;
    choice["codec"] = c.codec;
    choice["gpu_rate"] = c.gpu_rate;
    choice["cpu_rate"] = c.cpu_rate;
    choice["sample_chunks"] = c.sample_chunks;
    choice["sample_bytes"] = c.sample_bytes;
    choice["cpu_sample_bytes"] = c.cpu_sample_bytes;
    choice["gpu_failure"] = c.gpu_failure;
    d["decoder_choice"] = choice;
    d["read_pattern"] = read_pattern_dict(r.read_pattern);
    d["seconds"] = r.seconds;
    d["plan_seconds"] = r.plan_seconds;
    return d;
  });
}
