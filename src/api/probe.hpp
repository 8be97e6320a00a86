#pragma once
// Untrusted files (settings::probe): what an operation is about to open with HDF5 is opened
// first in a child process, with a time limit, so that HDF5 crashing or hanging on a damaged
// file ends the child, and the caller gets ProbeFailed instead.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "layout/open_dataset.hpp"

namespace h5tile::detail {

// Whether a call probes: its own option where given, else settings::probe().
[[nodiscard]] bool probe_wanted(std::optional<bool> option);

// Runs `open` (the HDF5 opening that the caller is about to do itself, on one thread) in a child
// process within settings::probe_timeout() seconds; throws ProbeFailed naming `what` (the file,
// or "dataset '/x' in 'f.h5'") where HDF5 crashed or did not finish there. An ordinary error in
// the child is not thrown here: the caller, opening the same file, meets it with its own type.
void probe(const std::string& what, const std::function<void()>& open);

// probe() where probe_wanted(option).
void probe_if_wanted(std::optional<bool> option, const std::string& what, const std::function<void()>& open);

// What a read opens with HDF5 before it reads (the work of its probe), on one thread: the
// dataset and what `options` make OpenDataset open (a virtual dataset's mapping, tile index and
// the sources it opens with HDF5), the tile index alone where early reads are allowed, and the
// chunk index of every chunked source.
void open_as_a_read_does(const Location& file, const std::string& dataset, OpenOptions options);

// For files not trusted yet: where reading `dataset` runs HDF5's own decoders on stored bytes
// (OpenDataset::hdf5_decodes: raw_io off, a filter h5tile does not decode), every byte is first
// read in a child process on one thread, so that HDF5 crashing on a damaged chunk (HDF5 1.10 and
// a fletcher32 chunk shorter than its checksum) ends the child, not the caller. Returns true
// where the child read every byte without an error; false where HDF5 decodes nothing (nothing was
// read) or the child met an ordinary error (the caller meets it when it reads). Throws
// ProbeFailed naming the dataset and the signal where HDF5 crashed there, or where the read did
// not end within `limit` seconds.
[[nodiscard]] bool read_isolated_where_hdf5_decodes(const Location& file, const std::string& dataset,
                                                    OpenOptions options, double limit);

}  // namespace h5tile::detail
