// `h5tile consolidate` (virtual dataset -> one file) and `h5tile split` (one file -> tiles + VDS).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/h5tile.hpp>

#include "common.hpp"

namespace h5tile::cli {
namespace {

struct ConsolidateCli {
  std::string input;
  std::string output;
  unsigned threads = 0;
  bool no_sync = false;
  bool force = false;
  bool append = false;
  bool no_probe = false;
  std::string layout = "contiguous";
  std::vector<std::uint64_t> chunk;
  CompressionCli compression;
};
ConsolidateCli consolidate_options;

struct SplitCli {
  std::string input;
  std::string output;
  unsigned tiles = 0;
  bool no_sync = false;
  bool force = false;
  std::vector<std::uint64_t> chunk;
  CompressionCli compression;
};
SplitCli split_options;
const CLI::App* split_command = nullptr;
const CLI::App* consolidate_command = nullptr;

// About `target` bytes per chunk, in shapes that divide the data evenly: along the first axis
// that must be cut, as many equal chunks as needed (2000 rows of 2400 bytes and 4 MiB give two
// chunks of 1000 rows, not 1747 + 253 rows), the axes after it whole. An axis whose single
// slice is over `target` is cut to 1 and the next axis is cut in turn.
Shape even_chunk(const Shape& shape, std::uint64_t item_size, std::uint64_t target) {
  Shape chunk = shape;
  for (auto& c : chunk) c = std::max<std::uint64_t>(1, c);
  for (std::size_t a = 0; a < chunk.size(); ++a) {
    std::uint64_t slice = item_size;  // bytes of one index along axis a, the axes after it whole
    for (std::size_t b = a + 1; b < chunk.size(); ++b) slice *= chunk[b];
    if (slice * chunk[a] <= target) break;
    const auto per_chunk = target / slice;  // slices that fit in one chunk (0: not even one)
    if (per_chunk == 0) {
      chunk[a] = 1;
      continue;
    }
    const auto count = (chunk[a] + per_chunk - 1) / per_chunk;  // chunks along axis a
    chunk[a] = (chunk[a] + count - 1) / count;
    break;
  }
  return chunk;
}

int run_consolidate() {
  const auto in = parse_target(consolidate_options.input);
  if (in.dataset.empty()) {
    throw CLI::ValidationError("IN", "give the dataset to consolidate as IN:/DATASET");
  }
  check_compression_options(*consolidate_command, consolidate_options.compression);
  Shape chunk(consolidate_options.chunk.begin(), consolidate_options.chunk.end());
  const auto compression = consolidate_options.compression.value();
  if (consolidate_options.layout == "contiguous" && compression.any()) {
    throw CLI::ValidationError("--compression", "compressed chunks need --layout chunked");
  }
  if (consolidate_options.layout == "chunked" && chunk.empty()) {
    const auto info = describe(in.file, in.dataset);
    chunk = even_chunk(info.shape, info.dtype.size(), std::uint64_t{4} << 20);
  }
  if (consolidate_options.layout == "contiguous" && !chunk.empty()) {
    throw CLI::ValidationError("--chunks", "a chunk shape needs --layout chunked");
  }
  const Mode mode = consolidate_options.append  ? Mode::Append
                    : consolidate_options.force ? Mode::Overwrite
                                                : Mode::Exclusive;
  ProgressBar bar("consolidate");
  try {
    consolidate(in.file, in.dataset, consolidate_options.output,
                {.layout = Layout::Contiguous,
                 .mode = mode,
                 .threads = consolidate_options.threads,
                 .sync = !consolidate_options.no_sync,
                 .progress = bar.callback(),
                 .chunk = chunk,
                 .compression = compression,
                 .probe = !consolidate_options.no_probe});
  } catch (const FileExists&) {
    throw FileExists(fmt::format("'{}' exists: give --force to replace it, or --append to add {} to it",
                                 consolidate_options.output, in.dataset));
  }
  bar.finish();
  print_line(stdout, "{}:{} -> {}:{} ({}{})", redacted_path(in.file), in.dataset,
             redacted_path(consolidate_options.output), in.dataset,
             chunk.empty() ? std::string("contiguous") : "chunked [" + fmt::format("{}", fmt::join(chunk, ", ")) + "]",
             compression.any() ? " " + to_string(compression) : std::string());
  return kOk;
}

int run_split() {
  const auto in = parse_target(split_options.input);
  if (in.dataset.empty()) {
    throw CLI::ValidationError("IN", "give the dataset to split as IN:/DATASET");
  }
  check_compression_options(*split_command, split_options.compression, {"--chunks"});
  Array data = [&] {
    ProgressBar bar("read");
    return from_file(in.file, in.dataset, {.progress = bar.callback()});
  }();
  ProgressBar bar("write");
  try {
    to_file(data.view(), split_options.output, in.dataset,
            {.layout = Layout::Virtual,
             .mode = split_options.force ? Mode::Overwrite : Mode::Exclusive,
             .ranks = split_options.tiles,
             .sync = !split_options.no_sync,
             .chunk = Shape(split_options.chunk.begin(), split_options.chunk.end()),
             .compression = split_options.compression.value(),
             .progress = bar.callback()})
        .wait();
  } catch (const FileExists&) {
    throw FileExists(fmt::format("'{}' exists: give --force to replace it", split_options.output));
  }
  bar.finish();
  print_line(stdout, "{}:{} -> {}:{} ({} tiles, {})", redacted_path(in.file), in.dataset, split_options.output,
             in.dataset, describe(split_options.output, in.dataset).virtual_sources, human_bytes(data.nbytes()));
  return kOk;
}

}  // namespace

void add_consolidate(CLI::App& app) {
  auto* cmd = app.add_subcommand("consolidate",
                                 "Copy a dataset (a virtual dataset and its tiles, or any other) into one "
                                 "self-contained file, in parallel");
  cmd->add_option("IN", consolidate_options.input, "FILE:/DATASET to read")->required();
  cmd->add_option("OUT", consolidate_options.output,
                  "file to write, or an s3:// object (uploaded in parts, visible only once complete); an existing "
                  "one only with --force or --append (changed only when complete; an object cannot be appended to)")
      ->required();
  cmd->add_option("--layout", consolidate_options.layout, "layout written")
      ->check(CLI::IsMember({"contiguous", "chunked"}))
      ->capture_default_str();
  cmd->add_option("--chunks,--chunk", consolidate_options.chunk,
                  "chunk shape for --layout chunked (default: chunks of up to 4 MiB that divide the data evenly)")
      ->delimiter(',');
  auto* force = cmd->add_flag("--force", consolidate_options.force, "replace OUT if it exists");
  cmd->add_flag("--append", consolidate_options.append,
                "add the dataset to OUT if it exists (keeping its other datasets; one of the same name is replaced)")
      ->excludes(force);
  add_compression_options(*cmd, consolidate_options.compression);
  cmd->add_option("--threads", consolidate_options.threads, "worker threads (0: all cores)");
  cmd->add_flag("--no-sync", consolidate_options.no_sync, "skip fsync before the output appears");
  cmd->add_flag("--no-probe", consolidate_options.no_probe,
                "trust IN: open it (and read what HDF5 decodes itself) in this process only; by default its "
                "metadata is opened, and chunks that HDF5 decodes (H5TILE_RAW_IO=0, filters h5tile does not "
                "decode) are read, in a child process first, so that HDF5 crashing on a damaged file is an error");
  cmd->footer(
      "Examples:\n"
      "  h5tile consolidate run.h5:/fields/u u.h5      one file for the next tool in the pipeline\n"
      "  h5tile consolidate run.h5:/u u.h5 --layout chunked --chunk 256,1024\n"
      "  h5tile consolidate run.h5:/v u.h5 --append    add /v to u.h5\n"
      "  h5tile consolidate run.h5:/u u.h5 --layout chunked --compression gzip --shuffle\n"
      "  h5tile consolidate run.h5:/u s3://bucket/u.h5 --layout chunked --compression zstd   publish to S3\n"
      "An existing OUT is left alone (exit code 1) unless --force or --append is given.\n"
      "Memory stays at a few 64 MiB blocks per thread, whatever the dataset's size.");
  cmd->callback([] { selected_command() = run_consolidate; });
  consolidate_command = cmd;

  auto* split = app.add_subcommand("split",
                                   "Write a dataset as tiles plus a virtual dataset (the inverse of "
                                   "consolidate); holds the dataset in memory");
  split->add_option("IN", split_options.input, "FILE:/DATASET to read")->required();
  split->add_option("OUT", split_options.output, "file to write; tiles go to OUT.tiles/")->required();
  split->add_option("--tiles", split_options.tiles, "number of tiles along the first axis (0: one per core)");
  split
      ->add_option("--chunks,--chunk", split_options.chunk,
                   "with --compression: the chunk shape of the tile files (default: up to 1 MiB)")
      ->delimiter(',');
  add_compression_options(*split, split_options.compression);
  split->add_flag("--no-sync", split_options.no_sync, "skip fsync before the output appears");
  split->add_flag("--force", split_options.force, "replace OUT if it exists (default: leave it, exit code 1)");
  split->footer(
      "Examples:\n"
      "  h5tile split u.h5:/fields/u tiled.h5 --tiles 16\n"
      "  h5tile split u.h5:/u tiled.h5 --compression gzip --level 6 --shuffle   tiles of compressed chunks");
  split->callback([] { selected_command() = run_split; });
  split_command = split;
}

}  // namespace h5tile::cli
