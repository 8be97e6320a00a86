// HDF5's deflate filter (H5Z_FILTER_DEFLATE, ID 1): a zlib stream (RFC 1950), inflated by the
// library zlib_stream.hpp names. Client data: [level 0-9].

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"
#include "engine/codecs/zlib_stream.hpp"

namespace h5tile::detail {
namespace {

class Deflate final : public Codec {
 public:
  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const override {
    scratch.resize(chunk_bytes);
    std::size_t produced = 0;
    switch (inflate_zlib(data.data(), data.size(), scratch.data(), scratch.size(), produced)) {
      case InflateResult::Ok: break;
      case InflateResult::NoRoom:
        throw RuntimeError(
            fmt::format("deflate stream of {} bytes inflates to more than a chunk ({} bytes) or is cut short",
                        data.size(), chunk_bytes));
      case InflateResult::Corrupt:
        throw RuntimeError(fmt::format("deflate stream of {} bytes is corrupt", data.size()));
    }
    scratch.resize(produced);
    data.swap(scratch);
  }
};

}  // namespace

std::unique_ptr<Codec> make_deflate(const FilterSpec& spec, std::size_t /*elem_size*/) {
  if (spec.params.size() != 1 || spec.params[0] > 9) {
    return nullptr;  // not what H5Pset_deflate writes
  }
  return std::make_unique<Deflate>();
}

}  // namespace h5tile::detail
