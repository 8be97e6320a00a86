#include "hdf5/handle.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

herr_t innermost(unsigned n, const H5E_error2_t* err, void* client) {
  auto* out = static_cast<std::string*>(client);
  if (n == 0 && err->desc != nullptr) {
    *out = err->desc;
    if (err->func_name != nullptr) {
      *out += fmt::format(" (in {})", err->func_name);
    }
  }
  return 0;
}

}  // namespace

Hdf5Lock::Hdf5Lock() : lock_(hdf5_mutex()) {
  // The error stack and its printing are per thread in thread-safe builds: silence the
  // default printer once for every thread that calls HDF5; errors become exceptions.
  thread_local const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

std::string take_hdf5_error() {
  const Hdf5Lock lock;
  std::string reason;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &reason);
  H5Eclear2(H5E_DEFAULT);
  return reason.empty() ? std::string("no reason given by HDF5") : reason;
}

hid_t check(hid_t status, std::string_view what) {
  if (status < 0) {
    throw Hdf5Error(fmt::format("{}: {}", what, take_hdf5_error()));
  }
  return status;
}

}  // namespace h5tile::detail
