#include "layout/chunk_encoding.hpp"

#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "layout/boxes.hpp"

namespace h5tile::detail {

void pack_chunk(const StridedBytes& src, const Box& src_box, const Box& chunk_box, std::size_t elem_size,
                std::byte* out) {
  const auto part = intersect(src_box, chunk_box);
  const auto bytes = chunk_box.count() * elem_size;
  if (!part || part->extent != chunk_box.extent) {
    std::memset(out, 0, bytes);
  }
  if (!part) return;
  const StridedBytes chunk{out, rowmajor_strides(chunk_box.extent, elem_size)};
  copy_box(sub_memory(chunk, chunk_box, *part), sub_memory(src, src_box, *part), part->extent, elem_size);
}

void encode_chunk(const FilterPipeline& pipeline, const StridedBytes& src, const Box& src_box, const Box& chunk_box,
                  std::size_t elem_size, ByteBuffer& out, ByteBuffer& scratch) {
  const auto bytes = chunk_box.count() * elem_size;
  // A whole chunk whose rows lie one after another in `src` (it spans the trailing axes there)
  // is encoded from where it is; any other is packed into a whole chunk first.
  if (const auto part = intersect(src_box, chunk_box); part && *part == chunk_box) {
    const auto in = sub_memory(src, src_box, chunk_box);
    if (is_rowmajor_run(in, chunk_box.extent, elem_size)) {
      pipeline.encode_from(in.ptr, bytes, out, scratch);
      return;
    }
  }
  out.resize(bytes);
  pack_chunk(src, src_box, chunk_box, elem_size, out.data());
  pipeline.encode(out, scratch);
}

FilterPipeline write_pipeline(const std::vector<FilterSpec>& filters, std::size_t elem_size) {
  auto made = FilterPipeline::make(filters, elem_size);
  if (auto* why = std::get_if<std::string>(&made)) {
    throw InvalidArgument(fmt::format("h5tile cannot write {}", *why));
  }
  return std::move(std::get<FilterPipeline>(made));
}

}  // namespace h5tile::detail
