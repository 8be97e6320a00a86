#pragma once
// Layout Chunked with filters (compression), written: one self-contained file with one filtered
// chunked dataset. Every chunk lies in one tile, so each rank compresses its own chunks, on its
// worker threads. HDF5 must allocate a filtered chunk (it knows its size only once compressed).
// A write of one rank (to_file's) keeps the file open with HDF5: its workers compress the chunks
// while a task writes them (H5Dwrite_chunk) in chunk order, at most twice the workers' count of
// chunks behind, so the file does not depend on which worker finished first. Ranks of a write of
// several go in rounds of a bounded number of chunks each:
//   1. every rank compresses its next chunks and all ranks exchange their sizes;
//   2. rank 0 opens the file with HDF5, writes its own chunks and, for every other rank's, as
//      many zero bytes as that chunk has (H5Dwrite_chunk: HDF5 allocates it and indexes it), reads
//      back where HDF5 put each one and closes the file;
//   3. every other rank pwrites its compressed chunks over the zeros, at those addresses.
// HDF5 never has the file open while ranks pwrite, and each pwrite covers exactly the bytes HDF5
// allocated to that chunk for that size (checked), so the file is as HDF5 would have written it.

#include <memory>

#include "layout/layout_writer.hpp"

namespace h5tile::detail {

[[nodiscard]] std::unique_ptr<LayoutWriter> make_filtered_chunked_writer(const WritePlan& plan,
                                                                         const WriteConfig& config);

}  // namespace h5tile::detail
