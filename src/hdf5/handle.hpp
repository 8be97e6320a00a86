#pragma once
// Thin RAII over the HDF5 C API: one move-only handle type per kind of hid_t, one lock that
// serialises every HDF5 call, and checking functions that turn failures into exceptions
// carrying HDF5's innermost reason.

#include <sys/types.h>

#include <array>

#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include <hdf5.h>

namespace h5tile::detail {

// HDF5 is not reentrant across threads (Debian's thread-safe build takes one global lock
// anyway); all calls into it hold this lock. Bulk bytes move outside it.
class Hdf5Lock {
 public:
  Hdf5Lock();
  Hdf5Lock(const Hdf5Lock&) = delete;
  Hdf5Lock& operator=(const Hdf5Lock&) = delete;
  ~Hdf5Lock() = default;

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

// fork(2) while holding the HDF5 lock, for a child process that opens files with HDF5 (a
// probe of an untrusted file). No thread of h5tile is then inside HDF5, so the child inherits
// HDF5's state whole: a thread stopped half-way through an HDF5 call would leave its caches and
// its own global lock as they were, and the child, having only the forking thread, could
// deadlock or decode garbage. In the child the lock is made anew (the child's thread has
// another id, so the recursive lock would not know it as its owner). Returns as fork does; the
// child must end with _exit (it must not unwind into callers, nor close the parent's files).
// Not safe where other code in the process calls HDF5 itself, outside this lock.
[[nodiscard]] pid_t fork_outside_hdf5();

template <herr_t (*Close)(hid_t)>
class H5Handle {
 public:
  H5Handle() = default;
  explicit H5Handle(hid_t id) noexcept : id_(id) {}
  H5Handle(H5Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  H5Handle& operator=(H5Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  ~H5Handle() { reset(); }

  [[nodiscard]] hid_t get() const noexcept { return id_; }
  [[nodiscard]] explicit operator bool() const noexcept { return id_ >= 0; }
  // Gives up the handle without closing it (the caller closes it, checked).
  [[nodiscard]] hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }
  void reset() noexcept {
    if (id_ >= 0) {
      const Hdf5Lock lock;
      Close(id_);
      id_ = H5I_INVALID_HID;
    }
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using FileHandle = H5Handle<H5Fclose>;
using DatasetHandle = H5Handle<H5Dclose>;
using GroupHandle = H5Handle<H5Gclose>;
using SpaceHandle = H5Handle<H5Sclose>;
using TypeHandle = H5Handle<H5Tclose>;
using PlistHandle = H5Handle<H5Pclose>;
using AttributeHandle = H5Handle<H5Aclose>;
using ObjectHandle = H5Handle<H5Oclose>;

// HDF5's innermost error description on this thread's stack, then clears the stack.
[[nodiscard]] std::string take_hdf5_error();

// HDF5's failure on this thread, taken from its error stack (which is then cleared).
struct Hdf5Failure {
  std::string reason;    // the innermost description, "(in <function>)"
  int error_number = 0;  // the errno of the system call that failed under HDF5 ("errno = 28"), or 0
  bool locked = false;   // HDF5 could not lock the file (another program holds it open)
  bool version = false;  // a format version this HDF5 does not read (a newer HDF5 wrote it)
};
[[nodiscard]] Hdf5Failure take_hdf5_failure();

// Throws the exception that fits `failure`, "<what>: <reason>": IoError with its errno where a
// system call failed under HDF5 (a full disk, a file locked by another program), NotHdf5File
// for a format newer than this HDF5 reads; otherwise returns, for the caller's own type.
void throw_if_classified(std::string_view what, const Hdf5Failure& failure);

// Throws, for HDF5's failure on this thread, what throw_if_classified chooses, else
// `Fallback("<what>: <reason>")`.
template <class Fallback>
[[noreturn]] void throw_hdf5_failure(std::string_view what) {
  const auto failure = take_hdf5_failure();
  throw_if_classified(what, failure);
  throw Fallback(std::string(what) + ": " + failure.reason);
}

// How many HDF5 objects (files, datasets, groups, types, attributes) are open in this process's
// HDF5 (the one h5tile links): 0 between h5tile's calls.
[[nodiscard]] std::int64_t open_object_count();

// H5PLset_loading_state(0), under the HDF5 lock (h5tile::disable_hdf5_plugins).
void disable_plugin_loading();

// Throws as throw_hdf5_failure<Hdf5Error>(what) when `status` is negative; returns it otherwise.
hid_t check(hid_t status, std::string_view what);

// The version of the HDF5 library linked (major, minor, release).
[[nodiscard]] std::array<unsigned, 3> library_version();
inline herr_t check(herr_t status, std::string_view what) {
  return static_cast<herr_t>(check(static_cast<hid_t>(status), what));
}

}  // namespace h5tile::detail
