#include "api/resolve.hpp"

#include <cstdlib>

#include <h5tile/settings.hpp>

namespace h5tile::detail {

unsigned threads_or_setting(unsigned requested) { return requested != 0 ? requested : settings::threads(); }

OpenOptions open_options(const ReadOptions& options) {
  OpenOptions opening{.allow_external = options.allow_external_sources,
                      .verify_checksums = options.verify_checksums,
                      .metadata_only = false,
                      .raw_io = settings::raw_io(),
                      .threads = threads_or_setting(options.threads),
                      .task_size = settings::task_size()};
  // A read starts from a tile index with the early_reads and raw_io settings on, no checksums
  // to check before any byte is read, and no HDF5_VDS_PREFIX (HDF5 looks for sources there
  // first).
  const char* prefix = std::getenv("HDF5_VDS_PREFIX");
  opening.early_reads =
      settings::early_reads() && opening.raw_io && !opening.verify_checksums && (prefix == nullptr || *prefix == '\0');
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
          .task_size = settings::task_size()};
}

}  // namespace h5tile::detail
