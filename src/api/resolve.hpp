#pragma once
// Settings resolved where a call enters the library: each per-call option, else its
// process-wide setting (settings.hpp), and HDF5's own environment variables where h5tile does
// what HDF5 would, turned into the plain values that layout/, engine/ and gpu/ take (as KvikIO
// resolves its defaults in its public functions). Nothing below api/ reads a setting or the
// environment.

#include <string>

#include <h5tile/options.hpp>

#include "layout/open_dataset.hpp"
#include "layout/write_plan.hpp"

namespace h5tile::detail {

// Worker threads: `requested`, else the `threads` setting.
[[nodiscard]] unsigned threads_or_setting(unsigned requested);
// The cold_reads, cold_readers and cold_request_size settings, as the layout takes them.
[[nodiscard]] ColdReads cold_reads();
// The gds setting, as the GPU layer takes it.
[[nodiscard]] gpu::GdsMode gds_mode();
// The gpu_decode setting, as the GPU layer takes it.
[[nodiscard]] gpu::DecodeMode gpu_decode_mode();
// The staging_bytes, task_size and threads settings, as the GPU layer takes them.
[[nodiscard]] gpu::Staging staging();
// HDF5_VDS_PREFIX ("" where unset): where HDF5 looks for virtual sources first.
[[nodiscard]] std::string vds_prefix();
// HDF5_EXT_PREFIX ("" where unset): where HDF5 looks for external links' targets first.
[[nodiscard]] std::string ext_prefix();

// The remote_* settings, CURL_CA_BUNDLE and the AWS_* variables (s3:// URLs), for reads of a URL.
[[nodiscard]] RemoteOptions remote_options();
// How a read opens its dataset.
[[nodiscard]] OpenOptions open_options(const ReadOptions& options);
// `opening` fitted to `file`: for a remote one (whose tile index names objects beside it), unless the caller chose a
// thread count (`requested_threads` > 0), as many workers as connections (the workers wait on the network, not the
// CPU). Starts the report of the call's remote reads (last_remote_io) where `file` is remote, unless `starts_call`
// is false (an open inside a call that started its report already).
void fit_to_path(OpenOptions& opening, const Location& file, unsigned requested_threads, bool starts_call = true);
// Starts the report of a public call's remote reads (last_remote_io) where `file` is remote: each
// call that reads a URL, so that the report describes the last one, not the calls so far.
void start_call_report(const Location& file);
// How `describe` opens a dataset: metadata only, any source.
[[nodiscard]] OpenOptions describe_options();
// How consolidate opens its input.
[[nodiscard]] OpenOptions open_options(const ConsolidateOptions& options);

// The settings of a write.
[[nodiscard]] WriteConfig write_config(const WriteOptions& options);
// The settings of consolidate's write (its own thread count: `options.threads`, else the setting).
[[nodiscard]] WriteConfig write_config(const ConsolidateOptions& options);

}  // namespace h5tile::detail
