#pragma once
// Files this process holds open for writing (hold_for_writing, include/h5tile/objects.hpp): the
// changes made in place (write_into, attributes, structure) go through that one read-write open
// of the file instead of opening it each time, and are flushed at flush_writes and at the last
// release, as h5py's File in a write mode holds its file. HDF5 shares that open's metadata cache
// with every other open of the file in this process, so that reads see the changes at once.

#include <filesystem>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// A change of the existing local file `path` in place, after the writes of `path` this process
// started and with no dataset of it kept open by a reader: the file open read-write (a new ID
// of the held open where this process holds `path`, opened again where the path now names
// another file; else an open of its own), and its datasets.
class FileChange {
 public:
  explicit FileChange(const std::filesystem::path& path);
  [[nodiscard]] hid_t file() const noexcept { return file_.get(); }
  [[nodiscard]] bool held() const noexcept { return held_; }
  // HDF5's descriptor of the file (hdf5_descriptor), looked up once per held file; -1 where the
  // file is not held (then look it up) or not HDF5's sec2 driver's.
  [[nodiscard]] int descriptor() const noexcept { return descriptor_; }
  // Dataset `name` (normalised): where the file is held, kept open from its first use to the last
  // release or a change of structure, so that HDF5's chunk cache keeps its chunks between small
  // writes as h5py's open Dataset does; else opened for this change. Both with external links
  // followed only where reads follow them.
  [[nodiscard]] DatasetHandle dataset(const std::string& name);
  // Closes the datasets kept open in the held file (each flushes its chunk cache; `name` empty:
  // every one): before a change of structure (a name may lead elsewhere after it), and before
  // `name`'s bytes are written other than through HDF5.
  void forget_datasets(const std::string& name = {});
  // The change is done: its metadata flushed to the kernel, unless the file is held (then at
  // flush_writes or the last release).
  void finish();
  // A change of the data or shape of `dataset` alone is done: as finish(), and where the file is
  // held the dataset's own metadata (its chunk index, its shape) flushed to the kernel now, so that
  // a process killed after the call returns leaves the file with it (docs/RELIABILITY.md).
  void finish(hid_t dataset);

 private:
  std::filesystem::path path_;
  std::filesystem::path key_;  // write_key(path_)
  FileHandle file_;
  int descriptor_ = -1;
  bool held_ = false;
};

// Flushes the held open of `path`, if any: before anything reads the file's bytes other than
// through HDF5 (to_file's append copies the file).
void flush_held(const std::filesystem::path& path);

}  // namespace h5tile::detail
