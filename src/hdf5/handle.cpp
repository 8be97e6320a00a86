#include "hdf5/handle.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/remote_driver.hpp"

namespace h5tile::detail {
namespace {

std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

// Set as the process exits, before HDF5 closes itself (registered after HDF5's own atexit
// handler, so run before it): a thread that ends after that must not call HDF5 again.
std::atomic<bool>& hdf5_closing() {
  static std::atomic<bool> closing{false};
  return closing;
}

// Walked upward (innermost first): the innermost description, and the innermost errno that
// a driver reports in its text ("..., errno = 28, error message = 'No space left on device'").
herr_t innermost(unsigned n, const H5E_error2_t* err, void* client) {
  auto* out = static_cast<Hdf5Failure*>(client);
  if (err->desc == nullptr) {
    return 0;
  }
  const std::string_view desc(err->desc);
  if (n == 0) {
    out->reason = err->desc;
    if (err->func_name != nullptr) {
      out->reason += fmt::format(" (in {})", err->func_name);
    }
    out->version = desc.find("version") != std::string_view::npos;
  }
  if (out->error_number == 0) {
    constexpr std::string_view kErrno = "errno = ";
    if (const auto at = desc.find(kErrno); at != std::string_view::npos) {
      const auto digits = desc.substr(at + kErrno.size());
      int value = 0;
      if (std::from_chars(digits.data(), digits.data() + digits.size(), value).ec == std::errc{} && value > 0) {
        out->error_number = value;
        // By HDF5's error class, not the text: the text holds the file's name, which may say "lock".
        out->locked = err->min_num == H5E_CANTLOCKFILE;
      }
    }
  }
  return 0;
}

std::string hdf5_version() {
  const auto v = library_version();
  return fmt::format("{}.{}.{}", v[0], v[1], v[2]);
}

}  // namespace

std::array<unsigned, 3> library_version() {
  std::array<unsigned, 3> v{};
  H5get_libversion(&v[0], &v[1], &v[2]);
  return v;
}

Hdf5Lock::Hdf5Lock() : lock_(hdf5_mutex()) {
  // The error stack and its printing are per thread in thread-safe builds: silence the
  // default printer once for every thread that calls HDF5; errors become exceptions.
  thread_local const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
  // HDF5 pushes errors during some calls that succeed (creating or closing a dataset whose
  // filter h5tile applies itself: "required filter 32015 is not registered"); the next call on
  // the thread clears them. A thread that ends with such entries (a rank's thread after a failed
  // write) leaves them for good, and HDF5 1.10 then cannot close its error classes at exit: it
  // prints "HDF5: infinite loop closing library". So each thread's stack is cleared as it ends.
  struct ClearedAtThreadExit {
    ClearedAtThreadExit() = default;
    ClearedAtThreadExit(const ClearedAtThreadExit&) = delete;
    ClearedAtThreadExit& operator=(const ClearedAtThreadExit&) = delete;
    ~ClearedAtThreadExit() {
      if (!hdf5_closing()) {
        const std::lock_guard lock(hdf5_mutex());
        H5Eclear2(H5E_DEFAULT);
      }
    }
  };
  static const bool registered = [] {
    H5open();  // HDF5 registers its atexit handler first, so this one runs before it
    std::atexit([] { hdf5_closing() = true; });
    return true;
  }();
  (void)registered;
  thread_local const ClearedAtThreadExit cleared;
  (void)cleared;
}

pid_t fork_outside_hdf5() {
  auto& mutex = hdf5_mutex();
  mutex.lock();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Its storage reused for a new, unlocked mutex ([basic.life]: the old one's destructor has
    // no effect that anything depends on).
    ::new (&mutex) std::recursive_mutex();
    return 0;
  }
  const int err = errno;
  mutex.unlock();
  errno = err;
  return pid;
}

Hdf5Failure take_hdf5_failure() {
  const Hdf5Lock lock;
  Hdf5Failure failure;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &failure);
  H5Eclear2(H5E_DEFAULT);
  if (failure.reason.empty()) {
    failure.reason = "no reason given by HDF5";
  }
  return failure;
}

std::string take_hdf5_error() { return take_hdf5_failure().reason; }

void throw_if_classified(std::string_view what, const Hdf5Failure& failure) {
  if (auto remote = take_driver_failure()) {
    std::rethrow_exception(remote);  // the remote object's own error (404, a changed object, ...), URL named
  }
  if (failure.locked) {
    throw IoError(fmt::format("{}: the file is locked by another program that has it open ({}); HDF5 locks files "
                              "while they are open (HDF5_USE_FILE_LOCKING=FALSE turns that off)",
                              what, failure.reason),
                  failure.error_number);
  }
  if (failure.error_number != 0) {
    throw IoError(fmt::format("{}: {} ({})", what, std::strerror(failure.error_number), failure.reason),
                  failure.error_number);
  }
  if (failure.version) {
#if H5_VERS_MAJOR < 2
    // What users meet most: h5py's wheels carry HDF5 2.0, whose libver "latest" ("v200") writes
    // chunked datasets with a layout message that 1.x cannot read.
    constexpr const char* kWhich =
        "; HDF5 2.0 writes such files (h5py's wheels with libver='latest' or 'v200'): build h5tile against HDF5 2.0 "
        "(-DHDF5_ROOT=<its prefix>; README, 'HDF5 versions'), or write with libver up to 'v114'";
#else
    constexpr const char* kWhich = "";
#endif
    throw NotHdf5File(fmt::format("{}: written in a format that needs a newer HDF5 than this h5tile's {} ({}){}", what,
                                  hdf5_version(), failure.reason, kWhich));
  }
}

std::int64_t open_object_count() {
  const Hdf5Lock lock;
  return static_cast<std::int64_t>(H5Fget_obj_count(static_cast<hid_t>(H5F_OBJ_ALL), H5F_OBJ_ALL));
}

void disable_plugin_loading() {
  const Hdf5Lock lock;
  check(H5PLset_loading_state(0), "cannot stop HDF5 from loading filter plugins");
}

hid_t check(hid_t status, std::string_view what) {
  if (status < 0) {
    throw_hdf5_failure<Hdf5Error>(what);
  }
  return status;
}

}  // namespace h5tile::detail
