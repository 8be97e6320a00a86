#pragma once
/// @file
/// The exceptions h5tile throws. Every one derives from the tag base h5tile::Error and from
/// exactly one standard exception: argument errors from std::invalid_argument, everything
/// else from std::runtime_error. So `catch (const h5tile::Error&)`,
/// `catch (const std::invalid_argument&)` and `catch (const std::exception&)` all work.

#include <stdexcept>
#include <string>
#include <string_view>

namespace h5tile {

/// `text` without the secrets a URL may carry: in every `scheme://` it holds, the user
/// information (`user:password@`) is removed, and the query string and fragment (`?...`, `#...`,
/// where presigned URLs carry their signatures) up to the next space or quote; in every scheme,
/// `s3://` included (whose keys may hold '?' and '#': messages show such a key up to them). Every
/// h5tile exception's message goes through it (so does every message of the Python module and the
/// command): a message never shows a credential.
/// Thread-safe; never throws but std::bad_alloc.
[[nodiscard]] std::string without_secrets(std::string_view text);

/// Tag base of every h5tile exception (not itself a std::exception, so that each concrete
/// type has exactly one std::exception base).
class Error {
 public:
  Error() = default;
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
  virtual ~Error() = default;
  /// The message, naming the file, the dataset and the values involved.
  [[nodiscard]] virtual const char* what() const noexcept = 0;
};

/// A bad argument: wrong shape, bad chunk size, a tile that does not fit. (Python: ValueError.)
class InvalidArgument : public std::invalid_argument, public Error {
 public:
  explicit InvalidArgument(const std::string& message) : std::invalid_argument(without_secrets(message)) {}
  explicit InvalidArgument(const char* message) : std::invalid_argument(without_secrets(message)) {}
  [[nodiscard]] const char* what() const noexcept override { return std::invalid_argument::what(); }
};

/// The dtype of an array or of a dataset is not one h5tile supports. (Python: TypeError.)
class UnsupportedType : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// The dataset name does not exist in the file. (Python: h5tile.DatasetNotFoundError, a ValueError
/// and a KeyError.)
class DatasetNotFound : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// The name exists but is a group (or another non-dataset object); the message lists the
/// datasets in the group.
class NotADataset : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// A path that is a directory: a write's target, or a file to read. (Python:
/// h5tile.IsADirectoryPathError, a ValueError and an IsADirectoryError.)
class IsADirectory : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// A failure at run time: I/O, HDF5, a missing file. (Python: h5tile.OperationError, a RuntimeError.)
class RuntimeError : public std::runtime_error, public Error {
 public:
  explicit RuntimeError(const std::string& message) : std::runtime_error(without_secrets(message)) {}
  explicit RuntimeError(const char* message) : std::runtime_error(without_secrets(message)) {}
  [[nodiscard]] const char* what() const noexcept override { return std::runtime_error::what(); }
};

/// The file does not exist. (Python: h5tile.NoSuchFileError, a FileNotFoundError.)
class FileNotFound : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

/// `to_file` with `Mode::Exclusive` and the file exists. (Python: h5tile.FileAlreadyExistsError, a FileExistsError.)
class FileExists : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

/// The file exists but is not an HDF5 file, or its metadata cannot be read. (Python:
/// h5tile.NotHdf5FileError, a RuntimeError and an OSError.)
class NotHdf5File : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

/// HDF5 crashed (a signal) or did not finish within the time limit while a child process
/// opened the file's metadata before this process would (settings::probe): the file is damaged
/// in a way that HDF5 cannot handle, or its storage hangs. This process did not open it.
/// (Python: h5tile.ProbeFailedError, a NotHdf5FileError.)
class ProbeFailed : public NotHdf5File {
 public:
  using NotHdf5File::NotHdf5File;
};

/// A source file of a virtual dataset is missing, unreadable, or does not match its mapping.
class VirtualSourceError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

/// An HDF5 library call failed; the message carries HDF5's innermost reason.
class Hdf5Error : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

/// The operation was cancelled by its progress callback.
class Cancelled : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

/// A system call (open, pread, pwrite, rename, ...) failed; the message carries strerror.
class IoError : public RuntimeError {
 public:
  IoError(const std::string& message, int error_number) : RuntimeError(message), error_number_(error_number) {}
  /// The errno of the failed call.
  [[nodiscard]] int error_number() const noexcept { return error_number_; }

 private:
  int error_number_;
};

}  // namespace h5tile
