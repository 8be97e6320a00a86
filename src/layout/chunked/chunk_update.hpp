#pragma once
// A part of an existing chunked dataset written in place, chunk by chunk on the workers: the
// elements at offset + i * step (a box where every step is 1). A chunk the part covers whole is
// packed from the caller's memory and encoded; any other chunk holding an element of the part
// is read as stored (or made of the fill value where it was never written), decoded, merged with
// the box's part and encoded again. HDF5 moves the stored chunks (H5Dread_chunk, H5Dwrite_chunk,
// which allocates and indexes them); the filters run outside its lock. Chunks go in rounds of a
// bounded number, written in chunk order, so memory stays bounded and the file does not depend on
// which worker finished first.

#include <cstddef>
#include <string>
#include <vector>

#include <h5tile/array.hpp>

#include "engine/codecs/pipeline.hpp"
#include "hdf5/handle.hpp"

namespace h5tile::detail {

// A chunked dataset open for writing, whose chunks hold exactly the bytes of memory once the
// filters of `pipeline` (nullptr: none) are undone.
struct ChunkedTarget {
  hid_t dataset = -1;
  Shape shape;
  Shape chunk;
  std::size_t elem_size = 0;
  const FilterPipeline* pipeline = nullptr;
  std::vector<std::byte> fill;  // one element of the fill value, as stored
  std::string where;            // names the dataset in errors
};

// The elements at `offset` + i * `step` for i < `count` along each axis.
struct StridedPart {
  Shape offset;
  Shape step;
  Shape count;
};

// Writes `data` (row-major, `part.count` elements) into `part` of `target` (which it fits) with
// `threads` workers. Throws RuntimeError (a damaged stored chunk, naming it) or what HDF5
// reports; chunks written before the error stay written, each whole.
void write_chunks_in_place(const ChunkedTarget& target, const std::byte* data, const StridedPart& part,
                           unsigned threads);

}  // namespace h5tile::detail
