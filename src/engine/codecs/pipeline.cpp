#include "engine/codecs/pipeline.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"
#include "engine/codecs/codec_table.hpp"

namespace h5tile::detail {
namespace {

// Why h5tile does not decode filter `id`: "szip", "zstd (h5tile was built without its library)",
// "filter 40000 (unknown to h5tile)".
std::string unsupported_name(unsigned id) {
  const CodecRow* row = codec_row(id);
  return row != nullptr && !row->library.empty() ? filter_name(id) + " (h5tile was built without its library)"
                                                 : filter_name(id);
}

}  // namespace

bool codec_built(unsigned id) noexcept {
  const CodecRow* row = codec_row(id);
  return row != nullptr && row->make != nullptr;
}

void ByteBuffer::resize(std::size_t n) {
  if (n > capacity_) {
    auto grown = std::make_unique_for_overwrite<std::byte[]>(n);
    if (size_ > 0) std::copy_n(data_.get(), size_, grown.get());
    data_ = std::move(grown);
    capacity_ = n;
  }
  size_ = n;
}

void ByteBuffer::swap(ByteBuffer& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  std::swap(capacity_, other.capacity_);
}

std::variant<FilterPipeline, std::string> FilterPipeline::make(const std::vector<FilterSpec>& filters,
                                                               std::size_t elem_size) {
  FilterPipeline pipeline;
  for (const auto& spec : filters) {
    const CodecRow* row = codec_row(spec.id);
    if (row == nullptr || row->make == nullptr) {
      return unsupported_name(spec.id);
    }
    auto step = row->make(spec, elem_size);
    if (!step) {
      return fmt::format("{} with client data [{}]", filter_name(spec.id), fmt::join(spec.params, ", "));
    }
    pipeline.steps_.push_back(std::move(step));
    pipeline.names_.push_back(filter_name(spec.id));
  }
  pipeline.filters_ = filters;
  return pipeline;
}

void FilterPipeline::decode(ByteBuffer& data, ByteBuffer& scratch, unsigned filter_mask,
                            std::size_t chunk_bytes) const {
  undo(data, scratch, filter_mask, chunk_bytes, {});
}

void FilterPipeline::decode_into(ByteBuffer& data, ByteBuffer& scratch, unsigned filter_mask, std::size_t chunk_bytes,
                                 std::byte* out) const {
  undo(data, scratch, filter_mask, chunk_bytes, {.whole = out});
}

void FilterPipeline::decode_into(ByteBuffer& data, ByteBuffer& scratch, unsigned filter_mask, std::size_t chunk_bytes,
                                 const ChunkRuns& runs) const {
  undo(data, scratch, filter_mask, chunk_bytes, {.runs = &runs});
}

void FilterPipeline::undo(ByteBuffer& data, ByteBuffer& scratch, unsigned filter_mask, std::size_t chunk_bytes,
                          const Destination& to) const {
  const auto skipped = [&](std::size_t i) { return i < 32 && (filter_mask >> i & 1U) != 0; };
  std::size_t last = 0;  // the filter undone last (the first HDF5 applied to this chunk)
  while (last < steps_.size() && skipped(last)) ++last;
  const auto wrong_size = [&](std::size_t size) {
    return RuntimeError(fmt::format("decodes to {} bytes, not the chunk's {}", size, chunk_bytes));
  };
  // What undoing filter i may produce: the chunk, and the 4-byte checksum of each fletcher32
  // that HDF5 applied before it (fletcher32 ahead of a compressor: the compressor holds them).
  const auto bound = [&](std::size_t i) {
    std::size_t bytes = chunk_bytes;
    for (std::size_t j = 0; j < i; ++j) {
      if (!skipped(j) && filters_[j].id == kFilterFletcher32) bytes += 4;
    }
    return bytes;
  };
  for (std::size_t i = steps_.size(); i-- > 0;) {
    if (skipped(i)) {
      continue;  // HDF5 skipped this (optional) filter for this chunk
    }
    std::optional<std::size_t> produced;  // into `to`
    try {
      if (i == last && to.whole != nullptr) {
        produced = steps_[i]->decode_to(data, to.whole, chunk_bytes);
      } else if (i == last && to.runs != nullptr && steps_[i]->decode_to_runs(data, *to.runs, chunk_bytes)) {
        produced = chunk_bytes;  // decode_to_runs takes only a whole chunk
      }
      if (!produced) steps_[i]->decode(data, scratch, bound(i));
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("{}: {}", names_[i], e.what()));
    }
    if (produced) {
      if (*produced != chunk_bytes) throw wrong_size(*produced);
      return;
    }
  }
  if (data.size() != chunk_bytes) {
    throw wrong_size(data.size());
  }
  // The last filter works in place (or none ran): the chunk is copied where it goes.
  if (to.whole != nullptr && chunk_bytes > 0) {
    std::memcpy(to.whole, data.data(), chunk_bytes);
  }
  if (to.runs != nullptr) {
    const auto run_bytes = to.runs->length * to.runs->element_size;
    for (const auto& run : to.runs->runs) {
      if (run_bytes > 0) std::memcpy(run.out, data.data() + run.first * to.runs->element_size, run_bytes);
    }
  }
}

void FilterPipeline::encode(ByteBuffer& data, ByteBuffer& scratch) const { apply(nullptr, 0, data, scratch); }

void FilterPipeline::encode_from(const std::byte* in, std::size_t size, ByteBuffer& data, ByteBuffer& scratch) const {
  apply(in, size, data, scratch);
}

void FilterPipeline::apply(const std::byte* in, std::size_t size, ByteBuffer& data, ByteBuffer& scratch) const {
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    try {
      if (in != nullptr && i == 0 && steps_[0]->encode_from(in, size, data)) {
        continue;
      }
      if (in != nullptr && i == 0) {  // the first filter works in place: on a copy
        data.resize(size);
        if (size > 0) std::memcpy(data.data(), in, size);
      }
      steps_[i]->encode(data, scratch);
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("{}: {}", names_[i], e.what()));
    }
  }
  if (in != nullptr && steps_.empty()) {
    data.resize(size);
    if (size > 0) std::memcpy(data.data(), in, size);
  }
}

}  // namespace h5tile::detail
