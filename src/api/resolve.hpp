#pragma once
// Settings resolved where a call enters the library: each per-call option, else its
// process-wide setting (settings.hpp), turned into the plain values that layout/, engine/ and
// gpu/ take. Nothing below api/ reads a setting for a read or write that passes through here.

#include <h5tile/options.hpp>

#include "layout/open_dataset.hpp"
#include "layout/write_plan.hpp"

namespace h5tile::detail {

// Worker threads: `requested`, else the `threads` setting.
[[nodiscard]] unsigned threads_or_setting(unsigned requested);

// How a read opens its dataset.
[[nodiscard]] OpenOptions open_options(const ReadOptions& options);
// How `describe` opens a dataset: metadata only, any source.
[[nodiscard]] OpenOptions describe_options();
// How consolidate opens its input.
[[nodiscard]] OpenOptions open_options(const ConsolidateOptions& options);

// The settings of a write.
[[nodiscard]] WriteConfig write_config(const WriteOptions& options);

// Whether a read may start from a tile index (layout/virtual/early_open.hpp): the early_reads
// and raw_io settings on, no checksums to check before any byte is read, and no
// HDF5_VDS_PREFIX (HDF5 looks for sources there first).
[[nodiscard]] bool early_reads_allowed(const OpenOptions& options);

}  // namespace h5tile::detail
