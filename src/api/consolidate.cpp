// consolidate: any dataset (a virtual one and its tiles included) into one contiguous dataset, or
// one chunked dataset (filtered or not), streamed in blocks read (and compressed) and written in
// parallel.
#include <fcntl.h>

#include <cerrno>
#include <optional>

#include <fmt/format.h>

#include <h5tile/error.hpp>
#include <h5tile/io.hpp>
#include <h5tile/settings.hpp>

#include "api/dataset_reader.hpp"
#include "api/pending_writes.hpp"
#include "api/probe.hpp"
#include "api/resolve.hpp"
#include "api/write_checks.hpp"
#include "engine/codecs/compression.hpp"
#include "engine/progress.hpp"
#include "engine/raw_transfer.hpp"
#include "engine/thread_pool.hpp"
#include "hdf5/dataset_io.hpp"
#include "hdf5/file.hpp"
#include "io/posix/posix_file.hpp"
#include "layout/chunk_encoding.hpp"
#include "layout/commit.hpp"
#include "layout/file_writer.hpp"
#include "layout/open_dataset.hpp"
#include "layout/write_plan.hpp"

namespace h5tile {
namespace fs = std::filesystem;
using namespace detail;  // NOLINT(google-build-using-namespace): implementation file

namespace {

// Blocks of this size are read and written by each thread.
constexpr std::size_t kBlockBytes = 64 << 20;

// Reads the dataset chunk by chunk (in parallel) and writes each chunk whole, padded at the
// edges, and encoded with `pipeline` (if any) on the thread that read it.
void write_chunks(const OpenDataset& source, const DatasetHandle& dataset, const ConsolidateOptions& options,
                  const FilterPipeline* pipeline) {
  const auto& info = source.info();
  const auto es = info.dtype.size();
  const auto& chunk = options.chunk;
  Shape grid;
  for (std::size_t a = 0; a < chunk.size(); ++a) {
    grid.push_back(info.shape[a] / chunk[a] + (info.shape[a] % chunk[a] != 0 ? 1 : 0));
  }
  const auto chunks = element_count(grid);  // at most the elements (checked below)
  Progress progress(options.progress, byte_count(info.shape, es));
  parallel_for(chunks, threads_or_setting(options.threads), [&](std::size_t index) {
    progress.check();
    Box box = Box::whole(info.shape);
    auto rest = static_cast<std::uint64_t>(index);
    for (std::size_t a = chunk.size(); a-- > 0;) {
      box.offset[a] = (rest % grid[a]) * chunk[a];
      rest /= grid[a];
      box.extent[a] = std::min(chunk[a], info.shape[a] - box.offset[a]);
    }
    const auto part = source.read(box, 1);
    const StridedBytes memory{const_cast<std::byte*>(part.data()), rowmajor_strides(box.extent, es)};
    thread_local ByteBuffer data;
    thread_local ByteBuffer scratch;
    const Box whole_chunk{box.offset, chunk};
    if (pipeline != nullptr) {
      encode_chunk(*pipeline, memory, box, whole_chunk, es, data, scratch);
    } else {
      data.resize(whole_chunk.count() * es);
      pack_chunk(memory, box, whole_chunk, es, data.data());
    }
    write_chunk(dataset.get(), box.offset, data.data(), data.size());
    progress.add(part.nbytes());
  });
}

}  // namespace

void consolidate(const fs::path& in, const std::string& dataset, const fs::path& out,
                 const ConsolidateOptions& options) {
  if (options.layout != Layout::Contiguous) {
    throw InvalidArgument(
        "consolidate writes one self-contained file: use Layout::Contiguous (with `chunk` for chunks)");
  }
  // An s3:// output is uploaded as one object (a URL of another scheme is refused first).
  const bool object = is_object_target(out);
  const auto name = checked_dataset_name(dataset, out, object);
  settle_before_open(in);
  pending_writes().wait_for(out);
  std::error_code ec;
  if (object) {
    check_object_target(out, options.chunk.empty() ? Layout::Contiguous : Layout::Chunked, options.mode, name);
    if (Location::of(in).text() == Location::of(out, Location::Use::Write).text()) {
      throw InvalidArgument(fmt::format("consolidate: the output '{}' is the input object",
                                        Location::of(out, Location::Use::Write).shown()));
    }
  } else {
    if (fs::exists(out, ec) && fs::equivalent(in, out, ec)) {
      throw InvalidArgument(fmt::format("consolidate: the output '{}' is the input file", out.string()));
    }
    check_target(out, options.mode, name);
  }
  const auto input = Location::of(in);
  auto opening = open_options(options);
  fit_to_path(opening, input, options.threads);
  probe_if_wanted(options.probe, where(in, name), [&] { open_as_a_read_does(input, name, opening); });
  if (probe_wanted(options.probe)) {
    // What HDF5 decodes itself it may crash on: read in a child first (ProbeFailed if it crashed).
    (void)read_isolated_where_hdf5_decodes(input, name, opening, settings::kMaxProbeTimeout);
  }
  const OpenDataset source(input, name, opening);
  const auto& info = source.info();
  try {
    (void)byte_count(info.shape, info.dtype.size());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("consolidate: {} cannot be copied: {}", where(in, name), e.what()));
  }
  const bool chunked = !options.chunk.empty();
  if (options.compression.any() && !chunked) {
    throw InvalidArgument(
        fmt::format("consolidate: compression ({}) needs a chunk shape: a contiguous dataset "
                    "cannot be filtered",
                    to_string(options.compression)));
  }
  check_compression(options.compression);
  if (chunked) {
    bool ok = options.chunk.size() == info.shape.size();
    for (const auto c : options.chunk) ok = ok && c > 0;
    if (!ok) {
      throw InvalidArgument(
          fmt::format("consolidate: chunk {} must have one positive length for each of the {} axes "
                      "of {}",
                      to_string(options.chunk), info.shape.size(), where(in, name)));
    }
  }
  const auto target = object ? out : fs::absolute(out).lexically_normal();
  if (!object) create_parent_folders(target);
  if (!object && !chunked && !untiled(info.shape)) {
    // A contiguous copy writes every byte, fill values included: one that cannot fit where it goes
    // (a sparse dataset of 2^63 bytes in a small file) fails at once, not after hours of writing.
    const auto bytes = byte_count(info.shape, info.dtype.size());
    std::error_code no_space;
    const auto space = fs::space(target.parent_path(), no_space);
    if (!no_space && bytes > space.available) {
      throw IoError(fmt::format("consolidate: a contiguous copy of {} needs {} bytes, but '{}' has {} bytes free",
                                where(in, name), bytes, target.parent_path().string(), space.available),
                    ENOSPC);
    }
  }
  auto config = write_config(options);
  if (object) configure_object_write(config, info.shape, options.chunk, info.dtype.size());
  WriteCommit commit(target, name, config, false);
  try {
    std::uint64_t offset = 0;
    const bool whole = untiled(info.shape);  // 0-d or empty: through HDF5 in one call
    {
      auto file = commit.start_main_file();
      if (whole) {
        const auto all = source.read(Box::whole(info.shape), 1);
        create_dataset_with(file.get(), name, info.dtype, info.shape, all.data());
      } else if (chunked) {
        const auto es = info.dtype.size();
        const auto filters = options.compression.any()
                                 ? write_filters(options.compression, es, byte_count(options.chunk, es))
                                 : std::vector<FilterSpec>{};
        std::optional<FilterPipeline> pipeline;
        if (!filters.empty()) pipeline.emplace(write_pipeline(filters, info.dtype.size()));
        write_chunks(source,
                     create_chunked_dataset(file.get(), name, info.dtype, info.shape, options.chunk, false, filters),
                     options, pipeline ? &*pipeline : nullptr);
      } else {
        offset = create_raw_dataset(file.get(), name, info.dtype, info.shape);
      }
      file.close();
    }
    if (!whole && !chunked) {
      const auto es = info.dtype.size();
      const auto dst = commit.open_sink();
      const RawDataset raw{.base = offset, .shape = info.shape, .elem_size = es, .sink = dst.get()};
      const auto blocks = split_rowmajor(Box::whole(info.shape), es, kBlockBytes);
      Progress progress(options.progress, byte_count(info.shape, es));
      parallel_for(blocks.size(), threads_or_setting(options.threads), [&](std::size_t i) {
        progress.check();
        const auto block = source.read(blocks[i], 1);
        write_raw(raw, blocks[i],
                  StridedBytes{const_cast<std::byte*>(block.data()), rowmajor_strides(block.shape(), es)});
        progress.add(block.nbytes());
      });
    }
    commit.publish();
    if (!object) release_kept(out);  // the replaced file, held open by readers, is let go now
  } catch (...) {
    commit.abandon();
    throw;
  }
}

}  // namespace h5tile
