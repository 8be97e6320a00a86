#pragma once
// Python progress callables in the _h5tile extension, for its reads (reads.cpp) and writes
// (bindings.cpp): a Python object dropped safely from any thread, the first exception a callable
// raised during one operation, and the callback that calls it.
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include <nanobind/nanobind.h>

#include <h5tile/h5tile.hpp>

namespace h5tile::python {

namespace nb = nanobind;

// A reference to a Python object that may be dropped on any thread (a worker, or the C++
// registry of pending writes at exit): it takes the GIL to drop it, and leaks it once the
// interpreter is finalizing (when no thread may take the GIL any more).
class PyReference {
 public:
  explicit PyReference(nb::object object) : object_(object.release().ptr()) {}
  PyReference(const PyReference&) = delete;
  PyReference& operator=(const PyReference&) = delete;
  ~PyReference() {
#if PY_VERSION_HEX >= 0x030D0000
    const bool finalizing = Py_IsFinalizing() != 0;
#else
    const bool finalizing = _Py_IsFinalizing() != 0;
#endif
    if (Py_IsInitialized() != 0 && !finalizing) {
      nb::gil_scoped_acquire gil;
      Py_DECREF(object_);
    }
  }
  [[nodiscard]] nb::handle get() const noexcept { return object_; }

 private:
  PyObject* object_;
};

// The first exception that a Python progress callable raised during one operation: the
// operation is cancelled, and that exception, not CancelledError, reaches the caller.
class CallbackError {
 public:
  void keep(nb::python_error& error) {
    const std::lock_guard lock(mutex_);
    if (!exception_) {
      exception_ = std::make_unique<PyReference>(nb::borrow(error.value()));
    }
  }
  // With the GIL held: raises the kept exception (as nb::python_error) if there is one, and
  // lets go of it (its traceback will hold the frames of the caller, which may hold what
  // holds this: a cycle through C++ that Python's collector cannot see).
  void raise_if_kept() {
    std::unique_ptr<PyReference> exception;
    {
      const std::lock_guard lock(mutex_);
      exception = std::move(exception_);
    }
    if (exception) {
      PyObject* value = exception->get().ptr();
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(value)), value);
      throw nb::python_error();
    }
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<PyReference> exception_;
};

struct PyProgress {
  h5tile::ProgressCallback callback;
  std::shared_ptr<CallbackError> error = std::make_shared<CallbackError>();
};

// A Python progress callable (done, total) -> bool or None, called with the GIL held; None
// or a true value continues, a false one cancels. An exception in it cancels too, and is kept
// to be raised in place of the Cancelled (raising_callback_errors).
inline PyProgress progress_of(nb::object callable) {
  PyProgress progress;
  if (callable.is_none()) return progress;
  auto reference = std::make_shared<PyReference>(std::move(callable));
  progress.callback = [reference, error = progress.error](std::uint64_t done, std::uint64_t total) {
    nb::gil_scoped_acquire gil;
    try {
      nb::object answer = reference->get()(done, total);
      if (answer.is_none()) return true;
      const int truth = PyObject_IsTrue(answer.ptr());
      if (truth < 0) throw nb::python_error();
      return truth != 0;
    } catch (nb::python_error& e) {
      error->keep(e);
      return false;
    }
  };
  return progress;
}

// Runs `call` (which releases the GIL itself); where it was cancelled because the progress
// callable raised, raises that exception instead.
template <class Call>
auto raising_callback_errors(const std::shared_ptr<CallbackError>& error, Call&& call) {
  try {
    return call();
  } catch (const h5tile::Cancelled&) {
    error->raise_if_kept();
    throw;
  }
}

}  // namespace h5tile::python
