// HDF5's Fletcher-32 filter (H5Z_FILTER_FLETCHER32, ID 3): a 4-byte checksum appended to the
// chunk, little-endian. No client data.

#include <utility>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "core/fletcher32_sums.hpp"
#include "engine/codecs/codec.hpp"

namespace h5tile::detail {
namespace {

class Fletcher32 final : public Codec {
 public:
  void decode(ByteBuffer& data, ByteBuffer& /*scratch*/, std::size_t /*chunk_bytes*/) const override {
    if (data.size() < 4) {
      throw RuntimeError(fmt::format("{} bytes are too few to hold a Fletcher-32 checksum", data.size()));
    }
    const std::size_t n = data.size() - 4;
    const auto* tail = reinterpret_cast<const unsigned char*>(data.data() + n);
    const std::uint32_t stored = std::uint32_t{tail[0]} | std::uint32_t{tail[1]} << 8 | std::uint32_t{tail[2]} << 16 |
                                 std::uint32_t{tail[3]} << 24;
    if (auto mismatch = fletcher32_mismatch(stored, fletcher32(data.data(), n)); !mismatch.empty()) {
      throw RuntimeError(std::move(mismatch));
    }
    data.resize(n);
  }

  void encode(ByteBuffer& data, ByteBuffer& /*scratch*/) const override {
    const std::uint32_t sum = fletcher32(data.data(), data.size());
    const std::size_t n = data.size();
    data.resize(n + 4);
    for (std::size_t i = 0; i < 4; ++i) data.data()[n + i] = static_cast<std::byte>(sum >> (8 * i));  // little-endian
  }
};

}  // namespace

std::uint32_t fletcher32(const std::byte* data, std::size_t size) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  std::size_t words = size / 2;
  std::uint32_t sum1 = 0;
  std::uint32_t sum2 = 0;
  while (words > 0) {
    // 360 words keep both sums below 2^32 before they are folded.
    std::size_t block = words > 360 ? 360 : words;
    words -= block;
    do {
      sum1 += (std::uint32_t{p[0]} << 8) | std::uint32_t{p[1]};
      p += 2;
      sum2 += sum1;
    } while (--block > 0);
    sum1 = (sum1 & 0xffffU) + (sum1 >> 16);
    sum2 = (sum2 & 0xffffU) + (sum2 >> 16);
  }
  if (size % 2 != 0) {
    sum1 += std::uint32_t{p[0]} << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffffU) + (sum1 >> 16);
    sum2 = (sum2 & 0xffffU) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffffU) + (sum1 >> 16);
  sum2 = (sum2 & 0xffffU) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}

std::string fletcher32_mismatch(std::uint32_t stored, std::uint32_t computed) {
  if (fletcher32_matches(stored, computed)) return "";
  return fmt::format("Fletcher-32 checksum mismatch (stored {:#010x}, computed {:#010x})", stored, computed);
}

std::unique_ptr<Codec> make_fletcher32(const FilterSpec& spec, std::size_t /*elem_size*/) {
  if (!spec.params.empty()) {
    return nullptr;
  }
  return std::make_unique<Fletcher32>();
}

}  // namespace h5tile::detail
