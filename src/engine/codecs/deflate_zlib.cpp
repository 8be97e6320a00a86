// HDF5's deflate filter (H5Z_FILTER_DEFLATE, ID 1) inflated with zlib: built where libdeflate
// is not found (CMakeLists.txt picks one of deflate.cpp and this file). Client data: [level 0-9].

#include <zlib.h>

#include <limits>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {
namespace {

class Deflate final : public Codec {
 public:
  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t chunk_bytes) const override {
    if (data.size() > std::numeric_limits<uLong>::max() || chunk_bytes > std::numeric_limits<uLongf>::max()) {
      throw RuntimeError("chunk too large for zlib");
    }
    scratch.resize(chunk_bytes);
    auto produced = static_cast<uLongf>(chunk_bytes);
    const int result = ::uncompress(reinterpret_cast<Bytef*>(scratch.data()), &produced,
                                    reinterpret_cast<const Bytef*>(data.data()), static_cast<uLong>(data.size()));
    if (result == Z_BUF_ERROR) {
      throw RuntimeError(
          fmt::format("deflate stream of {} bytes inflates to more than a chunk ({} bytes) or is cut short",
                      data.size(), chunk_bytes));
    }
    if (result != Z_OK) {
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
