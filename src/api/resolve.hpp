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

}  // namespace h5tile::detail
