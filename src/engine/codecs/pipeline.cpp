#include "engine/codecs/pipeline.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

// The filters h5tile decodes itself, by HDF5 filter ID. A new codec: one file and one line here.
struct KnownCodec {
  unsigned id;
  const char* name;
  std::unique_ptr<Codec> (*make)(const FilterSpec&, std::size_t elem_size);
};
constexpr KnownCodec known_codecs[] = {
    {1, "deflate", make_deflate},
    {2, "shuffle", make_shuffle},
    {3, "fletcher32", make_fletcher32},
};

std::string unsupported_name(unsigned id) {
  switch (id) {
    case 4: return "szip";
    case 5: return "nbit";
    case 6: return "scaleoffset";
    default: return fmt::format("filter {}", id);
  }
}

}  // namespace

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
    const KnownCodec* known = nullptr;
    for (const auto& k : known_codecs) {
      if (k.id == spec.id) known = &k;
    }
    if (known == nullptr) {
      return unsupported_name(spec.id);
    }
    auto step = known->make(spec, elem_size);
    if (!step) {
      return fmt::format("{} with client data [{}]", known->name, fmt::join(spec.params, ", "));
    }
    pipeline.steps_.push_back(std::move(step));
    pipeline.names_.emplace_back(known->name);
  }
  return pipeline;
}

void FilterPipeline::decode(ByteBuffer& data, ByteBuffer& scratch, unsigned filter_mask,
                            std::size_t chunk_bytes) const {
  for (std::size_t i = steps_.size(); i-- > 0;) {
    if (i < 32 && (filter_mask >> i & 1U) != 0) {
      continue;  // HDF5 skipped this (optional) filter for this chunk
    }
    try {
      steps_[i]->decode(data, scratch, chunk_bytes);
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("{}: {}", names_[i], e.what()));
    }
  }
  if (data.size() != chunk_bytes) {
    throw RuntimeError(fmt::format("decodes to {} bytes, not the chunk's {}", data.size(), chunk_bytes));
  }
}

void FilterPipeline::encode(ByteBuffer& data, ByteBuffer& scratch) const {
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    try {
      steps_[i]->encode(data, scratch);
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("{}: {}", names_[i], e.what()));
    }
  }
}

}  // namespace h5tile::detail
