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
  std::string layout = "contiguous";
  std::vector<std::uint64_t> chunk;
};
ConsolidateCli consolidate_options;

struct SplitCli {
  std::string input;
  std::string output;
  unsigned tiles = 0;
  bool no_sync = false;
};
SplitCli split_options;

int run_consolidate() {
  const auto in = parse_target(consolidate_options.input);
  if (in.dataset.empty()) {
    throw CLI::ValidationError("IN", "give the dataset to consolidate as IN:/DATASET");
  }
  Shape chunk(consolidate_options.chunk.begin(), consolidate_options.chunk.end());
  if (consolidate_options.layout == "chunked" && chunk.empty()) {
    // Default: whole rows of the other axes, about 4 MiB per chunk.
    const auto info = describe(in.file, in.dataset);
    chunk = info.shape;
    if (!chunk.empty()) {
      const auto row = std::max<std::uint64_t>(
          1, element_count(info.shape) / std::max<std::uint64_t>(1, info.shape[0]) * info.dtype.size());
      chunk[0] = std::clamp<std::uint64_t>((4U << 20) / row, 1, std::max<std::uint64_t>(1, info.shape[0]));
    }
  }
  if (consolidate_options.layout == "contiguous" && !chunk.empty()) {
    throw CLI::ValidationError("--chunk", "a chunk shape needs --layout chunked");
  }
  ProgressBar bar("consolidate");
  consolidate(in.file, in.dataset, consolidate_options.output,
              {.layout = Layout::Contiguous,
               .threads = consolidate_options.threads,
               .sync = !consolidate_options.no_sync,
               .progress = bar.callback(),
               .chunk = chunk});
  fmt::print("{}:{} -> {}:{} ({})\n", in.file, in.dataset, consolidate_options.output, in.dataset,
             chunk.empty() ? std::string("contiguous") : "chunked [" + fmt::format("{}", fmt::join(chunk, ", ")) + "]");
  return kOk;
}

int run_split() {
  const auto in = parse_target(split_options.input);
  if (in.dataset.empty()) {
    throw CLI::ValidationError("IN", "give the dataset to split as IN:/DATASET");
  }
  Array data = [&] {
    ProgressBar bar("read");
    return from_file(in.file, in.dataset, {.progress = bar.callback()});
  }();
  ProgressBar bar("write");
  to_file(data.view(), split_options.output, in.dataset,
          {.layout = Layout::Virtual,
           .ranks = split_options.tiles,
           .sync = !split_options.no_sync,
           .progress = bar.callback()})
      .wait();
  fmt::print("{}:{} -> {}:{} ({} tiles, {})\n", in.file, in.dataset, split_options.output, in.dataset,
             describe(split_options.output, in.dataset).virtual_sources, human_bytes(data.nbytes()));
  return kOk;
}

}  // namespace

void add_consolidate(CLI::App& app) {
  auto* cmd = app.add_subcommand("consolidate",
                                 "Copy a dataset (a virtual dataset and its tiles, or any other) into one "
                                 "self-contained file, in parallel");
  cmd->add_option("IN", consolidate_options.input, "FILE:/DATASET to read")->required();
  cmd->add_option("OUT", consolidate_options.output, "file to write (replaced only when complete)")->required();
  cmd->add_option("--layout", consolidate_options.layout, "layout written")
      ->check(CLI::IsMember({"contiguous", "chunked"}))
      ->capture_default_str();
  cmd->add_option("--chunk", consolidate_options.chunk, "chunk shape for --layout chunked (default: ~4 MiB of rows)")
      ->delimiter(',');
  cmd->add_option("--threads", consolidate_options.threads, "worker threads (0: all cores)");
  cmd->add_flag("--no-sync", consolidate_options.no_sync, "skip fsync before the output appears");
  cmd->footer(
      "Examples:\n"
      "  h5tile consolidate run.h5:/fields/u u.h5      one file for the next tool in the pipeline\n"
      "  h5tile consolidate run.h5:/u u.h5 --layout chunked --chunk 256,1024\n"
      "Memory stays at a few 64 MiB blocks per thread, whatever the dataset's size.");
  cmd->callback([] { selected_command() = run_consolidate; });

  auto* split = app.add_subcommand("split",
                                   "Write a dataset as tiles plus a virtual dataset (the inverse of "
                                   "consolidate); holds the dataset in memory");
  split->add_option("IN", split_options.input, "FILE:/DATASET to read")->required();
  split->add_option("OUT", split_options.output, "file to write; tiles go to OUT.tiles/")->required();
  split->add_option("--tiles", split_options.tiles, "number of tiles along the first axis (0: one per core)");
  split->add_flag("--no-sync", split_options.no_sync, "skip fsync before the output appears");
  split->footer("Examples:\n  h5tile split u.h5:/fields/u tiled.h5 --tiles 16");
  split->callback([] { selected_command() = run_split; });
}

}  // namespace h5tile::cli
