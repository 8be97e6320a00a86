#pragma once
// Opening files and datasets with errors that say what is wrong and where.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/array.hpp>
#include <h5tile/dataset_info.hpp>
#include <h5tile/object_types.hpp>

#include "hdf5/handle.hpp"
#include "io/location.hpp"
#include "io/remote_options.hpp"

namespace h5tile::detail {

// "/a/b" for "a/b" or "/a/b"; throws InvalidArgument for "", "/", "a//b", "a/", "." parts.
[[nodiscard]] std::string normalize_dataset_name(const std::string& name);

// "dataset '/x' in 'f.h5'", the prefix of most messages.
[[nodiscard]] std::string where(const std::filesystem::path& path, const std::string& dataset);

// A file that h5tile is writing (a new main file, a tile file), whose metadata HDF5 keeps in
// memory (write_access). close() completes it: reserves every byte HDF5 has allocated in it
// (fallocate: a full disk is an IoError there, before HDF5 has tried and failed a flush, which
// would leave its cache unable to flush again), flushes HDF5's metadata and closes it (checked).
// Destroyed by an exception before close() (the write failed and the file is abandoned), it
// first points HDF5's descriptor at an anonymous file in memory, so that the flush HDF5 makes
// when closing it cannot fail: HDF5 1.10 frees a file whose close failed but keeps its ID, and
// its clean-up at exit then closes the freed file again (a segfault at exit).
class WritableFile {
 public:
  WritableFile(FileHandle file, std::filesystem::path path) noexcept;
  WritableFile(WritableFile&& other) noexcept = default;
  WritableFile& operator=(WritableFile&&) = delete;
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;
  ~WritableFile();

  [[nodiscard]] hid_t get() const noexcept { return file_.get(); }
  // Flushes and closes; throws (IoError with ENOSPC for a full disk, Hdf5Error) on failure.
  void close();

 private:
  FileHandle file_;
  std::filesystem::path path_;
  int exceptions_ = 0;  // std::uncaught_exceptions() when it was opened
};

// Opens an existing regular local file read-only (or read-write): anything else (a FIFO, a
// device, a socket) is refused before HDF5 opens it. Throws FileNotFound, IsADirectory,
// NotHdf5File, IoError.
[[nodiscard]] FileHandle open_local_file(const std::filesystem::path& path, bool writable = false);
// Opens `file` read-only: a local one as open_local_file does, a URL through h5tile's remote
// driver (hdf5/remote_driver.hpp) as `remote` says (throwing what open_remote throws).
[[nodiscard]] FileHandle open_file(const Location& file, const RemoteOptions& remote = {});
// Another ID for the open file `file`, sharing what HDF5 holds of it (H5Freopen): a remote file is
// not fetched again.
[[nodiscard]] FileHandle reopen_file(hid_t file);

// Keeps the URL `file` open until as many release_remote_open as keep_remote_open calls: meanwhile
// open_file of it gives another ID of that open (reopen_file), so that the calls of a sequence
// (a File's listing, descriptions, attributes and first reads) fetch the object once and see one
// version of it. Nothing for a local path. Throws what open_file throws (nothing kept then).
void keep_remote_open(const Location& file, const RemoteOptions& remote);
void release_remote_open(const Location& file) noexcept;

// Writes HDF5's cached metadata of the file open for writing as `file` (`path`, for messages).
void flush_file(hid_t file, const std::filesystem::path& path);

// How many identifiers of this library are open on the file `file` belongs to (its own
// included): one where `file` is the only one.
[[nodiscard]] long identifiers_open_on(hid_t file);

class GuardedLinks;

// Opens dataset `name` (normalised), following external links on its path only where `links`
// lets it (what its check throws is thrown, before HDF5 opens the target). Throws
// DatasetNotFound or NotADataset (listing the datasets of the group it names).
[[nodiscard]] DatasetHandle open_dataset(hid_t file, const std::string& name, const std::filesystem::path& path,
                                         const GuardedLinks& links);

// Opens the dataset `name` at `location` (H5Dopen2), for a name known to be a dataset's;
// throws Hdf5Error where HDF5 cannot open it.
[[nodiscard]] DatasetHandle open_dataset_at(hid_t location, const std::string& name);

// Another handle of the open dataset `dataset` (H5Iinc_ref): each closes its own.
[[nodiscard]] DatasetHandle share_dataset(hid_t dataset);

// Whether a write may put dataset `name` (normalised) into `file`, replacing what is there:
// throws NotADataset where `name` is a group or a named datatype (append mode replaces only
// datasets), or where a part of its path is not a group ("'/data' is a dataset").
void check_replaceable(hid_t file, const std::string& name, const std::filesystem::path& path);

// The file HDF5 opened for `object` (which may differ from the file it was opened through: an
// external link, a virtual source): a new descriptor of it (the caller closes it) and the name
// HDF5 gives it, or nullopt when it is not held by a POSIX descriptor (a driver other than sec2).
struct OpenedFile {
  int fd = -1;
  std::string name;
};
[[nodiscard]] std::optional<OpenedFile> file_holding(hid_t object);

// The name of the file HDF5 opened for `object`, as HDF5 opened it (an external link's target
// for an object reached through one).
[[nodiscard]] std::string file_name_of(hid_t object);

// Names of the datasets directly in `group`.
[[nodiscard]] std::vector<std::string> datasets_in(hid_t group);

// The path ("/a/b") of every dataset reachable from the root of `file`, in HDF5's visiting
// order (by name, each object once). Basic object information only (the object's type): the
// full one decodes every header message of every object, which costs time and exposes more of
// HDF5's decoders to a damaged file. Throws Hdf5Error where HDF5 cannot visit them.
[[nodiscard]] std::vector<std::string> dataset_paths(hid_t file);

// The path and kind of every group, dataset and named datatype reachable from the root of
// `file` (the root itself excluded), in HDF5's visiting order, as dataset_paths visits them.
[[nodiscard]] std::vector<ObjectEntry> object_paths(hid_t file);

// hsize_t (unsigned long long) copies of a shape for HDF5, and back.
[[nodiscard]] std::vector<hsize_t> hsizes(const Shape& shape);

// The dataspace's shape (empty for a scalar).
[[nodiscard]] Shape shape_of(hid_t space);
// The largest extent of each axis of `space` (kUnlimitedExtent where unbounded).
[[nodiscard]] Shape max_shape_of(hid_t space);

// A simple dataspace of `shape` (scalar when empty).
[[nodiscard]] SpaceHandle make_space(const Shape& shape);

// Selects `box` in `space` (nothing to do for a scalar).
void select_box(hid_t space, const Box& box);

}  // namespace h5tile::detail
