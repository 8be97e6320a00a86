#include "api/resolve.hpp"

#include <cstdlib>

#include <h5tile/settings.hpp>

namespace h5tile::detail {

unsigned threads_or_setting(unsigned requested) { return requested != 0 ? requested : settings::threads(); }

OpenOptions open_options(const ReadOptions& options) {
  return {.allow_external = options.allow_external_sources,
          .verify_checksums = options.verify_checksums,
          .metadata_only = false,
          .raw_io = settings::raw_io(),
          .threads = threads_or_setting(options.threads),
          .task_size = settings::task_size()};
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
          .task_size = settings::task_size()};
}

bool early_reads_allowed(const OpenOptions& options) {
  const char* prefix = std::getenv("HDF5_VDS_PREFIX");
  return settings::early_reads() && options.raw_io && !options.verify_checksums &&
         (prefix == nullptr || *prefix == '\0');
}

}  // namespace h5tile::detail
