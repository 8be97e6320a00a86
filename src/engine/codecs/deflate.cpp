// HDF5's deflate filter (H5Z_FILTER_DEFLATE, ID 1): a zlib stream (RFC 1950), made and inflated
// by the library zlib_stream.hpp names. Client data: [level 0-9].

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"
#include "engine/codecs/zlib_stream.hpp"

namespace h5tile::detail {
namespace {

class Deflate final : public Codec {
 public:
  explicit Deflate(int level) : level_(level) {}

  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const override {
    scratch.resize(chunk_bytes);
    scratch.resize(*decode_to(data, scratch.data(), chunk_bytes));
    data.swap(scratch);
  }

  std::optional<std::size_t> decode_to(const ByteBuffer& data, std::byte* out, std::size_t chunk_bytes) const override {
    std::size_t produced = 0;
    switch (inflate_stream(data.data(), data.size(), out, chunk_bytes, produced)) {
      case InflateResult::Ok: break;
      case InflateResult::NoRoom:
        throw RuntimeError(
            fmt::format("deflate stream of {} bytes inflates to more than a chunk ({} bytes) or is cut short",
                        data.size(), chunk_bytes));
      case InflateResult::Corrupt:
        throw RuntimeError(fmt::format("deflate stream of {} bytes is corrupt", data.size()));
    }
    return produced;
  }

  void encode(ByteBuffer& data, ByteBuffer& scratch) const override {
    (void)encode_from(data.data(), data.size(), scratch);
    data.swap(scratch);
  }

  bool encode_from(const std::byte* in, std::size_t size, ByteBuffer& out) const override {
    out.resize(deflate_bound(size));
    out.resize(deflate_stream(in, size, out.data(), level_));
    return true;
  }

 private:
  int level_;
};

}  // namespace

std::unique_ptr<Codec> make_deflate(const FilterSpec& spec, std::size_t /*elem_size*/) {
  if (spec.params.size() != 1 || spec.params[0] > 9) {
    return nullptr;  // not what H5Pset_deflate writes
  }
  return std::make_unique<Deflate>(static_cast<int>(spec.params[0]));
}

}  // namespace h5tile::detail
