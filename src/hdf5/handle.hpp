#pragma once
// Thin RAII over the HDF5 C API: one move-only handle type per kind of hid_t, one lock that
// serialises every HDF5 call, and checking functions that turn failures into exceptions
// carrying HDF5's innermost reason.

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

// HDF5's innermost error description on this thread's stack, then clears the stack.
[[nodiscard]] std::string take_hdf5_error();

// Throws Hdf5Error("<what>: <HDF5's reason>") when `status` is negative; returns it otherwise.
hid_t check(hid_t status, std::string_view what);
inline herr_t check(herr_t status, std::string_view what) {
  return static_cast<herr_t>(check(static_cast<hid_t>(status), what));
}

}  // namespace h5tile::detail
