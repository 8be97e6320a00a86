#pragma once
// The datasets that DatasetReaders keep open (include/h5tile/io.hpp), as the rest of the library
// sees them. HDF5 opening a file whose inode it already holds open shares that open's metadata
// cache: where the file was rewritten in place since, the new open would read the old metadata.
// So every call that opens a file first lets go of the kept datasets whose files changed, and a
// write of a path lets that path's go (HDF5 also refuses to open for writing a file that it holds
// open read-only).

#include <filesystem>

namespace h5tile::detail {

// Closes what every DatasetReader of `path` keeps open (waiting for their reads in progress);
// their next reads open the file again.
void release_kept(const std::filesystem::path& path);

// Closes what every DatasetReader keeps open where a file of it has changed since it was opened
// (or it was opened by another process: a parent before fork()), waiting for their reads.
void release_changed_kept();

// What a call does before it opens `path`: waits for the pending writes of `path`
// (pending_writes.hpp), then release_changed_kept().
void settle_before_open(const std::filesystem::path& path);

}  // namespace h5tile::detail
