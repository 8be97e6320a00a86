#pragma once
// What the layouts that write a dataset take: the plan every rank agreed on (api/ builds and
// checks it), the options and defaults of the write resolved once where the call entered the
// library, and
// what writing a tile file yields for the commit.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <h5tile/array.hpp>
#include <h5tile/options.hpp>

#include "engine/codecs/codec.hpp"
#include "gpu/backend.hpp"
#include "io/posix/posix_file.hpp"
#include "io/remote_options.hpp"

namespace h5tile::detail {

// 0-d or empty: nothing to tile, so the dataset is stored whole in the main file, whatever the
// layout.
[[nodiscard]] inline bool untiled(const Shape& shape) { return shape.empty() || element_count(shape) == 0; }

// What every rank knows about a write once the descriptions are exchanged.
struct WritePlan {
  std::filesystem::path target;
  std::string dataset;
  Shape shape;
  DType dtype{DTypeKind::UInt8};
  std::vector<Box> boxes;           // every tile, in rank order
  std::vector<std::size_t> first;   // index in boxes of each rank's first tile
  Shape chunk;                      // layout Chunked: the chunk shape (Virtual with filters: the tiles')
  std::vector<FilterSpec> filters;  // the chunks' filters, in the order applied (empty: none)
  std::string scalar;               // the element of a 0-d array (it travels with the plan)
  [[nodiscard]] bool untiled() const { return detail::untiled(shape); }
};

// The options and process-wide defaults of one write (to_file, write_tiles, consolidate), as
// plain values.
struct WriteConfig {
  Layout layout = Layout::Virtual;
  Mode mode = Mode::Overwrite;
  bool sync = true;
  bool keep_previous = true;
  unsigned threads = 1;                    // per rank, for moving bytes
  std::uint64_t task_size = 0;             // bytes per pwrite task
  std::uint64_t alignment = 4096;          // of raw data in the files written
  gpu::Staging staging{};                  // writes from device memory
  DirectIo direct_reads = DirectIo::Auto;  // reading back a tile, copying the old file (Append)
  std::string vds_prefix{};                // HDF5_VDS_PREFIX ("" where unset), for the clean-up
  RemoteOptions remote{};                  // a target that is an object (s3://): how to reach it
  std::uint64_t object_bytes = 0;          // such a target: about the most bytes it will hold (sizes its parts)
  bool processes = false;                  // ... written by ranks in several processes, each sending its own parts
};

// What a tile file holds: where its raw bytes start, the file's size, their checksum, and the
// file's identity (what lies outside the bytes, engine/checksum.hpp).
struct WrittenTile {
  std::uint64_t offset = 0;
  std::uint64_t file_size = 0;
  std::uint64_t checksum = 0;
  std::uint64_t identity = 0;
};

}  // namespace h5tile::detail
