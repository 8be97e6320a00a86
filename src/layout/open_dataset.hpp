#pragma once
// The reader: a dataset opened for reading (layout/opened_dataset.hpp, made by the opener:
// layout/opener.hpp) and the reads of it: their plan, to host memory, to device memory
// (device_read.cpp) and the shape of a cold read (shape_read.cpp).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <h5tile/dataset_info.hpp>

#include "engine/progress.hpp"
#include "gpu/decode.hpp"
#include "io/location.hpp"
#include "io/posix/cold_reads.hpp"
#include "layout/opened_dataset.hpp"

namespace h5tile::detail {

// One unit of a parallel read.
struct ReadTask {
  std::size_t source = 0;
  Box src;
  Box dst;  // relative to the region read
};

// A dataset open for reading: what the opener found, owned, and the reads of it. Moves, never
// copies; its reads may run on many threads at once.
class OpenDataset {
 public:
  // Opens `dataset` in the file at `location` (open_to_read: its errors).
  // `file`, where valid, is that file already open (a remote file is then not opened again).
  OpenDataset(const Location& location, const std::string& dataset, const OpenOptions& options,
              FileHandle file = FileHandle());
  explicit OpenDataset(OpenedDataset opened) noexcept : opened_(std::move(opened)) {}

  // What the opener found.
  [[nodiscard]] const OpenedDataset& opened() const noexcept { return opened_; }
  [[nodiscard]] const DatasetInfo& info() const noexcept { return opened_.info; }
  [[nodiscard]] const std::string& name() const noexcept { return opened_.name; }
  [[nodiscard]] const Location& location() const noexcept { return opened_.location; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return opened_.location.path(); }

  // The tasks that read `region`, each at most about `task_bytes` and aligned to the layout
  // (a chunked source is read in whole rows of chunks unless `bounded`, where no task
  // exceeds `task_bytes`).
  [[nodiscard]] std::vector<ReadTask> plan(const Box& region, std::size_t task_bytes, bool bounded = false) const;
  // Reads `region` into a new array with `threads` threads, in host memory (device < 0) or
  // in the memory of CUDA device `device`.
  // `progress`, if given, counts the bytes read and may cancel.
  [[nodiscard]] Array read(const Box& region, unsigned threads, int device = -1, Progress* progress = nullptr) const;
  // Reads `region` into `out`, row-major memory of region.extent elements in host memory
  // (device < 0) or in the memory of CUDA device `device`.
  void read_into(const Box& region, std::byte* out, int device, unsigned threads, Progress* progress = nullptr) const;
  // Reads `region` of a dataset of variable-length strings through HDF5 (row-major). Throws
  // UnsupportedType for any other dtype.
  [[nodiscard]] std::vector<std::string> read_strings(const Box& region) const;
  // Throws UnsupportedType naming the dataset where its elements are variable-length strings,
  // which the reads of fixed-size elements (`read`, `read_into`) cannot hold.
  void require_fixed_size() const;
  // Walks the whole chunk index of every chunked source opened with HDF5, as reads that look
  // chunks up will (for a probe of the metadata that a read touches: api/probe.hpp).
  void walk_chunk_indexes() const;
  // Whether a read runs HDF5's own decoders on stored bytes: a source that HDF5 reads (raw_io off,
  // a filter h5tile does not decode) and that is filtered (or virtual). HDF5 1.10 crashes on some
  // damaged chunks (a fletcher32 chunk shorter than its checksum), which h5tile's decoders refuse.
  [[nodiscard]] bool hdf5_decodes() const;
  // The mappings (a virtual dataset's tiles; one whole-dataset mapping otherwise).
  [[nodiscard]] const std::vector<Mapping>& mappings() const noexcept { return opened_.mappings; }
  // The local files that this dataset keeps open and reads through (the file itself, and the
  // sources of a virtual dataset opened with HDF5; not the tiles read by their tile table, which
  // each read checks), so that a holder can tell by their stat whether any has changed; nullopt
  // where a file it reads is not known here (a URL, a dataset reached through an external link
  // or kept in external storage, a virtual dataset whose sources HDF5 finds as it reads).
  [[nodiscard]] std::optional<std::vector<std::filesystem::path>> kept_files() const;
  // Whether this is a URL's dataset every remote object of which (the file, and the sources of
  // a virtual dataset) is pinned to the version it opened (ByteSource::pinned): a read of it
  // then comes wholly from those versions, or fails with IoError ESTALE.
  [[nodiscard]] bool pinned_remote() const;
  // Lets go of the metadata blocks that opening a remote file kept (drop_cached_blocks), the
  // file's and each virtual source's: for a dataset kept open, whose reads need little of them.
  void drop_remote_blocks() const;
  // The byte source of the remote file itself (through h5tile's HDF5 driver), or nullptr for a
  // local file.
  [[nodiscard]] std::shared_ptr<const ByteSource> remote_file() const;

 private:
  void check_fits(const Box& region) const;  // InvalidArgument naming the dataset
  void fill(std::byte* out, std::uint64_t count) const;
  void read_to_device(const Box& region, std::byte* out, int device, unsigned threads, Progress* progress) const;
  // How a read of `region` by `threads` in `tasks` (planned at the warm task size) is shaped:
  // unchanged (parallel), or, where the cold_reads option says so (auto: after a sample of the
  // page cache finds the region cold), a stream of few readers of large requests (tasks planned
  // again). Records the report of last_read_pattern (layout/shape_read.cpp).
  struct ReadShape {
    unsigned threads = 1;
    std::vector<ReadTask> tasks;
    bool stream = false;
  };
  [[nodiscard]] ReadShape shape_read(const Box& region, unsigned threads, std::vector<ReadTask> tasks) const;
  // The file offsets of the first byte of some of `tasks` (at most kColdSamples, spread evenly)
  // added to `sample`; returns "", or, where a source they touch is not a local file read
  // buffered by pread of its stored bytes (compressed, remote, through HDF5, O_DIRECT), why the
  // read stays parallel (nothing sampled).
  [[nodiscard]] std::string sample_tasks(const std::vector<ReadTask>& tasks, PageSample& sample) const;
  // For read_to_device: the chunks of `region` that source `s` supplies through `maps` (the
  // indices of its mappings that the region touches), to decode on the GPU, or why the GPU does
  // not decode them ("" and nullopt: the source is not compressed). Under auto, where `device`
  // has chosen the CPU for the codec already, the chunks are not listed.
  [[nodiscard]] std::optional<gpu::DecodeRequest> gpu_decoding(std::size_t s, const std::vector<std::size_t>& maps,
                                                               const Box& region, int device,
                                                               std::string& why_not) const;

  void check_checksums(const Box& region, unsigned threads) const;

  OpenedDataset opened_;
};

}  // namespace h5tile::detail
