#include "api/resolve.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

#include <h5tile/settings.hpp>

#include "engine/thread_pool.hpp"
#include "io/http/aws_profile.hpp"
#include "io/http/url.hpp"
#include "io/remote_io.hpp"

namespace h5tile::detail {
namespace {

std::string environment(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr ? value : "";
}

// What s3:// URLs resolve with (io/http/s3_dialect.hpp), as the AWS SDKs and CLI read them.
constexpr std::array kAwsVariables = {"AWS_ACCESS_KEY_ID",   "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                      "AWS_REGION",          "AWS_DEFAULT_REGION",    "AWS_ENDPOINT_URL",
                                      "AWS_ENDPOINT_URL_S3", "AWS_NO_SIGN_REQUEST",   "AWS_CA_BUNDLE"};

}  // namespace

unsigned threads_or_setting(unsigned requested) { return requested != 0 ? requested : settings::threads(); }

ColdReads cold_reads() {
  ColdReads cold{.readers = settings::cold_readers(), .request_bytes = settings::cold_request_size()};
  switch (settings::cold_reads()) {
    case settings::ColdReads::Parallel: cold.pattern = ColdReads::Pattern::Parallel; break;
    case settings::ColdReads::Stream: cold.pattern = ColdReads::Pattern::Stream; break;
    case settings::ColdReads::Auto: cold.pattern = ColdReads::Pattern::Auto; break;
  }
  return cold;
}

gpu::GdsMode gds_mode() {
  switch (settings::gds()) {
    case settings::Gds::On: return gpu::GdsMode::On;
    case settings::Gds::Off: return gpu::GdsMode::Off;
    case settings::Gds::Auto: break;
  }
  return gpu::GdsMode::Auto;
}

gpu::DecodeMode gpu_decode_mode() {
  switch (settings::gpu_decode()) {
    case settings::GpuDecode::On: return gpu::DecodeMode::On;
    case settings::GpuDecode::Off: return gpu::DecodeMode::Off;
    case settings::GpuDecode::Auto: break;
  }
  return gpu::DecodeMode::Auto;
}

gpu::Staging staging() {
  return gpu::staging_for(settings::staging_bytes(), settings::task_size(), settings::threads());
}

std::string vds_prefix() { return environment("HDF5_VDS_PREFIX"); }

std::string ext_prefix() { return environment("HDF5_EXT_PREFIX"); }

RemoteOptions remote_options() {
  RemoteOptions options{.connections = settings::remote_connections(),
                        .block_size = settings::remote_block_size(),
                        .timeout_s = settings::remote_timeout(),
                        .retries = settings::remote_retries(),
                        .ca_bundle = environment("CURL_CA_BUNDLE")};
  options.parallel = [connections = std::max(1U, options.connections)](std::size_t count,
                                                                       const std::function<void(std::size_t)>& body) {
    parallel_for(count, connections, body);
  };
  for (const char* name : kAwsVariables) {
    if (auto value = environment(name); !value.empty()) options.aws.emplace(name, std::move(value));
  }
  for (const auto name : s3::kProfileVariables) {  // read where an s3:// URL is opened without keys
    if (auto value = environment(std::string(name).c_str()); !value.empty())
      options.aws.emplace(name, std::move(value));
  }
  return options;
}

void start_call_report(const Location& file) {
  if (file.remote()) start_remote_io_report();
}

void fit_to_path(OpenOptions& opening, const Location& file, unsigned requested_threads, bool starts_call) {
  if (!file.remote()) return;
  if (starts_call) start_remote_io_report();
  if (requested_threads == 0) opening.threads = std::max(opening.threads, opening.remote.connections);
}

OpenOptions open_options(const ReadOptions& options) {
  OpenOptions opening{.allow_external = options.allow_external_sources,
                      .verify_checksums = options.verify_checksums,
                      .metadata_only = false,
                      .raw_io = settings::raw_io(),
                      .threads = threads_or_setting(options.threads),
                      .task_size = settings::task_size(),
                      .direct_reads = settings::direct_io(),
                      .cold_reads = cold_reads(),
                      .gds = gds_mode(),
                      .staging = staging(),
                      .gpu_decode = gpu_decode_mode(),
                      .nvcomp_library = settings::nvcomp_library(),
                      .vds_prefix = vds_prefix(),
                      .extfile_prefix = environment("HDF5_EXTFILE_PREFIX"),
                      .ext_prefix = ext_prefix(),
                      .remote = remote_options()};
  // A read starts from a tile index with the early_reads and raw_io settings on, no checksums
  // to check before any byte is read, and no HDF5_VDS_PREFIX (HDF5 looks for sources there
  // first).
  opening.early_reads =
      settings::early_reads() && opening.raw_io && !opening.verify_checksums && opening.vds_prefix.empty();
  return opening;
}

OpenOptions describe_options() {
  OpenOptions options = open_options(ReadOptions{.allow_external_sources = true});
  options.metadata_only = true;
  return options;
}

OpenOptions open_options(const ConsolidateOptions& options) {
  return open_options(
      ReadOptions{.threads = options.threads, .allow_external_sources = options.allow_external_sources});
}

WriteConfig write_config(const WriteOptions& options) {
  return {.layout = options.layout,
          .mode = options.mode,
          .sync = options.sync,
          .keep_previous = options.keep_previous,
          .threads = settings::threads(),
          .task_size = settings::task_size(),
          .alignment = settings::alignment(),
          .staging = staging(),
          .direct_reads = settings::direct_io(),
          .vds_prefix = vds_prefix()};
}

WriteConfig write_config(const ConsolidateOptions& options) {
  auto config = write_config(WriteOptions{
      .layout = options.layout, .mode = options.mode, .sync = options.sync, .keep_previous = options.keep_previous});
  config.threads = threads_or_setting(options.threads);
  return config;
}

}  // namespace h5tile::detail
