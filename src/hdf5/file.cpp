#include "hdf5/file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/error.hpp>

#include "core/path_status.hpp"
#include "hdf5/links.hpp"
#include "hdf5/remote_driver.hpp"
#include "io/http/url.hpp"
#include "io/remote.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

std::string normalize_dataset_name(const std::string& name) {
  std::string out;
  std::size_t pos = (!name.empty() && name[0] == '/') ? 1 : 0;
  if (pos == name.size()) {
    throw InvalidArgument(fmt::format("dataset name '{}' is empty: give a path such as '/data'", name));
  }
  while (pos <= name.size()) {
    const auto slash = std::min(name.find('/', pos), name.size());
    const auto part = name.substr(pos, slash - pos);
    if (part.empty() || part == "." || part == "..") {
      throw InvalidArgument(fmt::format(
          "dataset name '{}' has an empty, '.' or '..' component: give a path such as '/group/data'", name));
    }
    if (part.find('\0') != std::string::npos) {
      // HDF5 takes names as C strings: it would cut this one at the NUL and find another object.
      throw InvalidArgument(fmt::format("dataset name '{}' holds a NUL character: give a path such as '/group/data'",
                                        std::string_view(name).substr(0, name.find('\0'))));
    }
    out += "/" + part;
    pos = slash + 1;
  }
  return out;
}

std::string where(const fs::path& path, const std::string& dataset) {
  return fmt::format("dataset '{}' in '{}'", dataset, display_name(path.native()));
}

FileHandle reopen_file(hid_t file) {
  const Hdf5Lock lock;
  return FileHandle(check(H5Freopen(file), "H5Freopen"));
}

namespace {

// The URLs kept open by keep_remote_open, by their text, with how many keeps hold each.
struct KeptRemote {
  std::shared_ptr<const FileHandle> file;
  int holders = 0;
};
std::mutex kept_mutex;
std::map<std::string, KeptRemote, std::less<>>& kept_remote() {
  static std::map<std::string, KeptRemote, std::less<>> kept;
  return kept;
}

std::shared_ptr<const FileHandle> kept_open_of(const std::string& url) {
  const std::lock_guard lock(kept_mutex);
  const auto found = kept_remote().find(url);
  return found == kept_remote().end() ? nullptr : found->second.file;
}

FileHandle open_remote_object(const Location& file, const RemoteOptions& remote) {
  // HDF5's metadata cache over the object: the blocks of one open, a few dozen at most.
  return open_remote_file(open_remote(file.text(), remote), remote.block_size, 16 * remote.block_size, remote.parallel);
}

}  // namespace

FileHandle open_file(const Location& file, const RemoteOptions& remote) {
  if (file.remote()) {
    if (const auto kept = kept_open_of(file.text())) return reopen_file(kept->get());
    return open_remote_object(file, remote);
  }
  return open_local_file(file.path());
}

void keep_remote_open(const Location& file, const RemoteOptions& remote) {
  if (!file.remote()) return;
  {
    const std::lock_guard lock(kept_mutex);
    if (const auto found = kept_remote().find(file.text()); found != kept_remote().end()) {
      ++found->second.holders;
      return;
    }
  }
  auto opened = std::make_shared<const FileHandle>(open_remote_object(file, remote));  // no lock held meanwhile
  const std::lock_guard lock(kept_mutex);
  auto& entry = kept_remote()[file.text()];
  if (!entry.file) entry.file = std::move(opened);  // else another thread kept it meanwhile: theirs is used
  ++entry.holders;
}

void release_remote_open(const Location& file) noexcept {
  if (!file.remote()) return;
  std::shared_ptr<const FileHandle> closing;  // closed after the lock is let go (HDF5's lock is taken then)
  const std::lock_guard lock(kept_mutex);
  const auto found = kept_remote().find(file.text());
  if (found == kept_remote().end()) return;
  if (--found->second.holders == 0) {
    closing = std::move(found->second.file);
    kept_remote().erase(found);
  }
}

FileHandle open_local_file(const fs::path& path, bool writable) {
  const auto status = status_of(path, "cannot open");  // a link loop is an IoError (ELOOP), not "missing"
  if (!fs::exists(status)) {
    throw FileNotFound(fmt::format("file '{}' does not exist", path.string()));
  }
  if (fs::is_directory(status)) {
    throw IsADirectory(fmt::format("'{}' is a directory, not an HDF5 file", path.string()));
  }
  // HDF5 opens by path with a blocking open(2): a FIFO would wait forever for a writer, a
  // device would be read as a file. Only regular files are opened (links to them are).
  if (!fs::is_regular_file(status)) {
    throw NotHdf5File(
        fmt::format("'{}' is {}, not a regular file: h5tile opens only regular files", path.string(), kind_of(status)));
  }
  if (::access(path.c_str(), writable ? (R_OK | W_OK) : R_OK) != 0) {
    const int err = errno;
    throw IoError(fmt::format("cannot open '{}': {}", path.string(), std::strerror(err)), err);
  }
  const Hdf5Lock lock;
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 < 0) {
    throw_hdf5_failure<NotHdf5File>(fmt::format("cannot read '{}'", path.string()));
  }
  if (is_hdf5 == 0) {
    throw NotHdf5File(fmt::format("'{}' is not an HDF5 file (no HDF5 signature found)", path.string()));
  }
  const hid_t id = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {
    throw_hdf5_failure<NotHdf5File>(fmt::format("cannot open HDF5 file '{}'", path.string()));
  }
  return FileHandle(id);
}

WritableFile::WritableFile(FileHandle file, fs::path path) noexcept
    : file_(std::move(file)), path_(std::move(path)), exceptions_(std::uncaught_exceptions()) {}

WritableFile::~WritableFile() {
  if (!file_) {
    return;
  }
  if (std::uncaught_exceptions() > exceptions_) {
    const Hdf5Lock lock;
    const hid_t fapl = H5Fget_access_plist(file_.get());
    void* handle = nullptr;
    if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(file_.get(), fapl, &handle) >= 0 &&
        handle != nullptr) {
      // Abandoned: what HDF5 still writes when closing it goes to an anonymous file in memory
      // (its metadata may not fit the disk even once the file is emptied), so that the close
      // succeeds. Where that is not possible, emptying the file frees the space it holds.
      const int fd = *static_cast<const int*>(handle);
      const int nowhere = ::memfd_create("h5tile-abandoned", MFD_CLOEXEC);
      if (nowhere < 0 || ::dup3(nowhere, fd, O_CLOEXEC) < 0) {
        (void)::ftruncate(fd, 0);
      }
      if (nowhere >= 0) {
        ::close(nowhere);
      }
    }
    if (fapl >= 0) {
      H5Pclose(fapl);
    }
    H5Eclear2(H5E_DEFAULT);
  }
  const Hdf5Lock lock;
  file_.reset();
  H5Eclear2(H5E_DEFAULT);  // what closing it pushed (a failed flush; a filter HDF5 does not know)
}

void WritableFile::close() {
  const Hdf5Lock lock;
  // Every byte the file will hold is reserved before HDF5 writes its metadata: a full disk is
  // then an error here, before HDF5 has failed a flush. (A failed flush leaves HDF5 1.10.8's
  // metadata cache unable to flush ever again, so the file could never be closed.)
  haddr_t end = 0;
  const hid_t fapl = check(H5Fget_access_plist(file_.get()), "H5Fget_access_plist");
  void* handle = nullptr;
  const bool sec2 = H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(file_.get(), fapl, &handle) >= 0;
  H5Pclose(fapl);
  if (sec2 && handle != nullptr && H5Fget_eoa(file_.get(), &end) >= 0 && end > 0) {
    // fallocate(2), not posix_fallocate: where a file system cannot reserve (EOPNOTSUPP), glibc's
    // emulation would write every block once more.
    const int err = ::fallocate(*static_cast<const int*>(handle), 0, 0, static_cast<off_t>(end)) == 0 ? 0 : errno;
    if (err != 0 && err != EOPNOTSUPP && err != ENOSYS && err != EINVAL) {
      throw IoError(fmt::format("cannot reserve {} bytes for '{}': {}", end, path_.string(), std::strerror(err)), err);
    }
  }
  H5Eclear2(H5E_DEFAULT);
  check(H5Fflush(file_.get(), H5F_SCOPE_LOCAL), fmt::format("cannot write the metadata of '{}'", path_.string()));
  if (H5Fclose(file_.release()) < 0) {
    throw_hdf5_failure<Hdf5Error>(fmt::format("cannot close '{}'", path_.string()));
  }
  H5Eclear2(H5E_DEFAULT);  // what a close that succeeded pushed (a filter HDF5 does not know)
}

std::optional<OpenedFile> file_holding(hid_t object) {
  const Hdf5Lock lock;
  const FileHandle file(check(H5Iget_file_id(object), "H5Iget_file_id"));
  const PlistHandle fapl(check(H5Fget_access_plist(file.get()), "H5Fget_access_plist"));
  if (H5Pget_driver(fapl.get()) != H5FD_SEC2) {
    return std::nullopt;  // the handle is not an int descriptor
  }
  void* handle = nullptr;
  check(H5Fget_vfd_handle(file.get(), fapl.get(), &handle), "H5Fget_vfd_handle");
  auto name = file_name_of(object);
  const int fd = ::fcntl(*static_cast<const int*>(handle), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    throw IoError(fmt::format("cannot duplicate HDF5's descriptor of '{}': {}", name, std::strerror(err)), err);
  }
  return OpenedFile{fd, std::move(name)};
}

std::string file_name_of(hid_t object) {
  const Hdf5Lock lock;
  const FileHandle file(check(H5Iget_file_id(object), "H5Iget_file_id"));
  const ssize_t length = H5Fget_name(file.get(), nullptr, 0);
  check(static_cast<hid_t>(length), "H5Fget_name");
  std::string name(static_cast<std::size_t>(length) + 1, '\0');
  check(static_cast<hid_t>(H5Fget_name(file.get(), name.data(), name.size())), "H5Fget_name");
  name.resize(static_cast<std::size_t>(length));
  return name;
}

std::vector<std::string> datasets_in(hid_t group) {
  const Hdf5Lock lock;
  // For messages only: no external link is followed (its target file is not opened).
  const GuardedLinks no_links({});
  std::pair<std::vector<std::string>, hid_t> found{{}, no_links.lapl()};
  auto collect = [](hid_t g, const char* name, const H5L_info_t*, void* out) -> herr_t {
    auto& [names, lapl] = *static_cast<std::pair<std::vector<std::string>, hid_t>*>(out);
    const hid_t obj = H5Oopen(g, name, lapl);
    if (obj >= 0) {
      if (H5Iget_type(obj) == H5I_DATASET) {
        names.emplace_back(name);
      }
      H5Oclose(obj);
    } else {
      H5Eclear2(H5E_DEFAULT);  // a dangling link, or an external one: not listed
    }
    return 0;
  };
  hsize_t idx = 0;
  auto& names = found.first;
  if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &idx, collect, &found) < 0) {
    H5Eclear2(H5E_DEFAULT);
  }
  return names;
}

namespace {

#if H5_VERSION_GE(1, 12, 0)
using ObjectInfo = H5O_info2_t;  // the 1.12 API: objects by token, not address
#else
using ObjectInfo = H5O_info_t;
#endif

// Calls `visit(path, type)` for every object reachable from the root of `file` (basic object
// information only: the full one decodes every header message of every object, which costs
// time and exposes more of HDF5's decoders to a damaged file).
template <class Visit>
void visit_objects(hid_t file, Visit visit) {
  const Hdf5Lock lock;
  auto callback = [](hid_t, const char* name, const ObjectInfo* info, void* out) -> herr_t {
    if (std::string_view(name) != ".") {  // the root itself
      (*static_cast<Visit*>(out))(std::string("/") + name, info->type);
    }
    return 0;
  };
#if H5_VERSION_GE(1, 12, 0)
  check(H5Ovisit3(file, H5_INDEX_NAME, H5_ITER_INC, callback, &visit, H5O_INFO_BASIC), "H5Ovisit");
#else
  check(H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, callback, &visit, H5O_INFO_BASIC), "H5Ovisit");
#endif
}

}  // namespace

std::vector<std::string> dataset_paths(hid_t file) {
  std::vector<std::string> paths;
  visit_objects(file, [&](std::string path, H5O_type_t type) {
    if (type == H5O_TYPE_DATASET) paths.push_back(std::move(path));
  });
  return paths;
}

std::vector<ObjectEntry> object_paths(hid_t file) {
  std::vector<ObjectEntry> entries;
  visit_objects(file, [&](std::string path, H5O_type_t type) {
    if (type == H5O_TYPE_GROUP) entries.push_back({std::move(path), ObjectKind::Group});
    if (type == H5O_TYPE_DATASET) entries.push_back({std::move(path), ObjectKind::Dataset});
    if (type == H5O_TYPE_NAMED_DATATYPE) entries.push_back({std::move(path), ObjectKind::Datatype});
  });
  return entries;
}

namespace {

std::string list_for_message(const std::vector<std::string>& names) {
  constexpr std::size_t kMax = 20;
  if (names.empty()) {
    return "no datasets";
  }
  std::vector<std::string> shown(names.begin(),
                                 names.begin() + static_cast<std::ptrdiff_t>(std::min(kMax, names.size())));
  auto text = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > kMax) {
    text += fmt::format(" and {} more", names.size() - kMax);
  }
  return text;
}

}  // namespace

void flush_file(hid_t file, const fs::path& path) {
  const Hdf5Lock lock;
  check(H5Fflush(file, H5F_SCOPE_GLOBAL), fmt::format("cannot write the metadata of '{}'", path.string()));
}

long identifiers_open_on(hid_t file) {
  const Hdf5Lock lock;
  const ssize_t count = H5Fget_obj_count(file, H5F_OBJ_ALL);
  check(count < 0 ? -1 : 0, "cannot count the objects open in a file");
  return static_cast<long>(count);
}

DatasetHandle open_dataset(hid_t file, const std::string& name, const fs::path& path, const GuardedLinks& links) {
  const Hdf5Lock lock;
  const hid_t lapl = links.lapl();
  // Walk the path so that the message names the first missing part.
  std::string prefix;
  std::size_t pos = 1;
  while (pos <= name.size()) {
    const auto slash = std::min(name.find('/', pos), name.size());
    const auto parent = prefix.empty() ? std::string("/") : prefix;
    prefix = name.substr(0, slash);
    const htri_t exists = H5Lexists(file, prefix.c_str(), lapl);
    if (exists <= 0) {
      links.rethrow_refusal();
      H5Eclear2(H5E_DEFAULT);
      std::string datasets = "it is not a group";
      const hid_t g = H5Oopen(file, parent.c_str(), lapl);
      if (g >= 0) {
        if (H5Iget_type(g) == H5I_GROUP) {
          datasets = fmt::format("datasets in '{}': {}", parent, list_for_message(datasets_in(g)));
        }
        H5Oclose(g);
      }
      H5Eclear2(H5E_DEFAULT);
      throw DatasetNotFound(fmt::format("{} does not exist: '{}' has no member '{}' ({})", where(path, name), parent,
                                        name.substr(pos, slash - pos), datasets));
    }
    pos = slash + 1;
  }
  const hid_t obj = H5Oopen(file, name.c_str(), lapl);
  if (obj < 0) {
    links.rethrow_refusal();
    throw_hdf5_failure<DatasetNotFound>(fmt::format("cannot open {}", where(path, name)));
  }
  const auto type = H5Iget_type(obj);
  if (type == H5I_DATASET) {
    return DatasetHandle(obj);
  }
  std::string message;
  if (type == H5I_GROUP) {
    message = fmt::format("'{}' in '{}' is a group, not a dataset; it holds {}", name, display_name(path.native()),
                          list_for_message(datasets_in(obj)));
  } else {
    message = fmt::format("'{}' in '{}' is a named datatype, not a dataset", name, display_name(path.native()));
  }
  H5Oclose(obj);
  throw NotADataset(message);
}

DatasetHandle open_dataset_at(hid_t location, const std::string& name) {
  const Hdf5Lock lock;
  return DatasetHandle(check(H5Dopen2(location, name.c_str(), H5P_DEFAULT), "H5Dopen2"));
}

DatasetHandle share_dataset(hid_t dataset) {
  const Hdf5Lock lock;
  check(H5Iinc_ref(dataset), "H5Iinc_ref");
  return DatasetHandle(dataset);
}

void check_replaceable(hid_t file, const std::string& name, const fs::path& path) {
  const Hdf5Lock lock;
  std::size_t pos = 1;
  while (pos <= name.size()) {
    const auto slash = std::min(name.find('/', pos), name.size());
    const auto prefix = name.substr(0, slash);
    pos = slash + 1;
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return;  // missing from here on: the write creates it
    }
    const hid_t obj = H5Oopen(file, prefix.c_str(), H5P_DEFAULT);
    if (obj < 0) {
      H5Eclear2(H5E_DEFAULT);
      return;  // a dangling link: replaced (at the end) or reported by HDF5 (on the way)
    }
    const auto type = H5Iget_type(obj);
    const bool last = slash == name.size();
    std::string message;
    if (!last && type != H5I_GROUP) {
      message = fmt::format("cannot write '{}' in '{}': '{}' is {}, not a group", name, path.string(), prefix,
                            type == H5I_DATASET ? "a dataset" : "a named datatype");
    } else if (last && type == H5I_GROUP) {
      message = fmt::format(
          "cannot write '{}' in '{}' in append mode: '{}' is a group holding {}; append replaces a "
          "dataset, never a group (remove the group first, or write another name)",
          name, path.string(), name, list_for_message(datasets_in(obj)));
    } else if (last && type != H5I_DATASET) {
      message = fmt::format("cannot write '{}' in '{}' in append mode: '{}' is a named datatype, not a dataset", name,
                            path.string(), name);
    }
    H5Oclose(obj);
    if (!message.empty()) {
      throw NotADataset(message);
    }
  }
}

std::vector<hsize_t> hsizes(const Shape& shape) { return {shape.begin(), shape.end()}; }

Shape shape_of(hid_t space) {
  const Hdf5Lock lock;
  const int rank = check(H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) {
    check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "H5Sget_simple_extent_dims");
  }
  return {dims.begin(), dims.end()};
}

Shape max_shape_of(hid_t space) {
  const Hdf5Lock lock;
  const int rank = check(H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  std::vector<hsize_t> max_dims(dims.size());
  if (rank > 0) {
    check(H5Sget_simple_extent_dims(space, dims.data(), max_dims.data()), "H5Sget_simple_extent_dims");
  }
  Shape out(max_dims.size());
  std::transform(max_dims.begin(), max_dims.end(), out.begin(),
                 [](hsize_t n) { return n == H5S_UNLIMITED ? kUnlimitedExtent : std::uint64_t{n}; });
  return out;
}

SpaceHandle make_space(const Shape& shape) {
  const Hdf5Lock lock;
  if (shape.empty()) {
    return SpaceHandle(check(H5Screate(H5S_SCALAR), "H5Screate(scalar)"));
  }
  const auto dims = hsizes(shape);
  return SpaceHandle(check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple"));
}

void select_box(hid_t space, const Box& box) {
  if (box.rank() == 0) {
    return;
  }
  const Hdf5Lock lock;
  if (box.count() == 0) {
    check(H5Sselect_none(space), "H5Sselect_none");
    return;
  }
  const auto start = hsizes(box.offset);
  const auto count = hsizes(box.extent);
  check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
        "H5Sselect_hyperslab");
}

}  // namespace h5tile::detail
