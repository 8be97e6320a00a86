// HDF5's shuffle filter (H5Z_FILTER_SHUFFLE, ID 2): a byte transpose. Client data: [element size].

#include <cstring>

#include "engine/codecs/codec.hpp"

namespace h5tile::detail {
namespace {

// memcpy that accepts empty ranges (whose pointers may be null: memcpy itself does not).
void copy_bytes(std::byte* out, const std::byte* in, std::size_t size) {
  if (size != 0) std::memcpy(out, in, size);
}

// Fixed element sizes let the compiler unroll the inner loop and vectorise the outer one.
template <std::size_t E>
void unshuffle_fixed(const std::byte* in, std::byte* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < E; ++k) out[i * E + k] = in[k * n + i];
  }
}

template <std::size_t E>
void shuffle_fixed(const std::byte* in, std::byte* out, std::size_t n) {
  for (std::size_t k = 0; k < E; ++k) {
    for (std::size_t i = 0; i < n; ++i) out[k * n + i] = in[i * E + k];
  }
}

class Shuffle final : public Codec {
 public:
  explicit Shuffle(std::size_t elem_size) : elem_size_(elem_size) {}
  void decode(ByteBuffer& data, ByteBuffer& scratch, std::size_t /*chunk_bytes*/) const override {
    if (elem_size_ <= 1 || data.size() < 2 * elem_size_) {
      return;  // HDF5 leaves such buffers as they are
    }
    scratch.resize(data.size());
    unshuffle(data.data(), scratch.data(), data.size(), elem_size_);
    data.swap(scratch);
  }

  void encode(ByteBuffer& data, ByteBuffer& scratch) const override {
    if (elem_size_ <= 1 || data.size() < 2 * elem_size_) {
      return;  // as HDF5 leaves them
    }
    scratch.resize(data.size());
    shuffle(data.data(), scratch.data(), data.size(), elem_size_);
    data.swap(scratch);
  }

 private:
  std::size_t elem_size_;
};

}  // namespace

void unshuffle(const std::byte* in, std::byte* out, std::size_t size, std::size_t elem_size) {
  const std::size_t n = elem_size == 0 ? 0 : size / elem_size;
  if (elem_size <= 1 || n <= 1) {
    copy_bytes(out, in, size);
    return;
  }
  switch (elem_size) {
    case 2: unshuffle_fixed<2>(in, out, n); break;
    case 4: unshuffle_fixed<4>(in, out, n); break;
    case 8: unshuffle_fixed<8>(in, out, n); break;
    case 16: unshuffle_fixed<16>(in, out, n); break;
    default:
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t k = 0; k < elem_size; ++k) out[i * elem_size + k] = in[k * n + i];
      }
  }
  copy_bytes(out + n * elem_size, in + n * elem_size, size - n * elem_size);  // the tail
}

void shuffle(const std::byte* in, std::byte* out, std::size_t size, std::size_t elem_size) {
  const std::size_t n = elem_size == 0 ? 0 : size / elem_size;
  if (elem_size <= 1 || n <= 1) {
    copy_bytes(out, in, size);
    return;
  }
  switch (elem_size) {
    case 2: shuffle_fixed<2>(in, out, n); break;
    case 4: shuffle_fixed<4>(in, out, n); break;
    case 8: shuffle_fixed<8>(in, out, n); break;
    case 16: shuffle_fixed<16>(in, out, n); break;
    default:
      for (std::size_t k = 0; k < elem_size; ++k) {
        for (std::size_t i = 0; i < n; ++i) out[k * n + i] = in[i * elem_size + k];
      }
  }
  copy_bytes(out + n * elem_size, in + n * elem_size, size - n * elem_size);  // the tail
}

std::unique_ptr<Codec> make_shuffle(const FilterSpec& spec, std::size_t elem_size) {
  // HDF5 stores the element size it shuffled by (set_local); without it, the dataset's.
  if (spec.params.size() > 1 || (spec.params.size() == 1 && spec.params[0] == 0)) {
    return nullptr;
  }
  return std::make_unique<Shuffle>(spec.params.empty() ? elem_size : spec.params[0]);
}

}  // namespace h5tile::detail
