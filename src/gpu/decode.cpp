// The GPU decoder's plan: which filters it undoes, and how a stored chunk splits into the pieces
// nvCOMP decodes (gpu/decode.hpp). Pure logic, the same with and without CUDA.
#include "gpu/decode.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "core/filter_ids.hpp"

namespace h5tile::detail::gpu {
namespace {

std::uint64_t read_be(const std::byte* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v << 8 | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

// A zlib stream (RFC 1950): a 2-byte header (deflate, no preset dictionary), the raw deflate
// stream, a 4-byte Adler-32. The header is checked as zlib's inflate checks it (the check bits,
// method 8, a window of at most 32 KiB, no preset dictionary); nvCOMP inflates the raw deflate and
// the Adler-32 is checked after it (cuda/adler32.cu).
void split_zlib(const std::byte* data, std::size_t size, std::size_t chunk_bytes, std::vector<StoredPiece>& pieces) {
  if (size < kZlibHeaderBytes + 4 + 1) {
    throw RuntimeError(fmt::format("deflate stream of {} bytes is shorter than a zlib stream", size));
  }
  const auto cmf = std::to_integer<unsigned>(data[0]);
  const auto flg = std::to_integer<unsigned>(data[1]);
  if ((cmf & 0x0fU) != 8 || (cmf >> 4) > 7 || (cmf * 256 + flg) % 31 != 0) {
    throw RuntimeError(fmt::format("deflate stream of {} bytes is corrupt (not a zlib header)", size));
  }
  if ((flg & 0x20U) != 0) {
    throw RuntimeError(fmt::format("deflate stream of {} bytes asks for a preset dictionary", size));
  }
  pieces.push_back({kZlibHeaderBytes, size - kZlibHeaderBytes - 4, 0, chunk_bytes, false});
}

// hdf5plugin's lz4 framing (engine/codecs/lz4.cpp): the decoded size (8 bytes, big-endian), the
// block size (4 bytes), then per block its stored size (4 bytes) and its bytes, raw where the
// stored size is the block's.
void split_lz4(const std::byte* data, std::size_t size, std::size_t chunk_bytes, std::vector<StoredPiece>& pieces) {
  const auto corrupt = [&](const std::string& why) {
    return RuntimeError(fmt::format("lz4 chunk of {} bytes is corrupt: {}", size, why));
  };
  if (size < 12) throw corrupt("shorter than its header");
  const auto total = read_be(data, 8);
  auto block = read_be(data + 8, 4);
  if (total != chunk_bytes) {
    throw RuntimeError(
        fmt::format("lz4 chunk of {} bytes holds {} bytes, not the chunk's {}", size, total, chunk_bytes));
  }
  if (block == 0 && total > 0) throw corrupt("a block size of 0");
  block = std::min(block, total);
  std::uint64_t in = 12;
  for (std::uint64_t out = 0; out < total; out += block) {
    const auto n = std::min(block, total - out);
    if (size - in < 4) throw corrupt("cut short");
    const auto stored = read_be(data + in, 4);
    in += 4;
    if (stored > size - in) throw corrupt("cut short");
    pieces.push_back({in, stored, out, n, stored == n});
    in += stored;
  }
}

}  // namespace

const char* codec_name(GpuCodec codec) noexcept {
  switch (codec) {
    case GpuCodec::Deflate: return "deflate";
    case GpuCodec::Zstd: return "zstd";
    case GpuCodec::Lz4: return "lz4";
  }
  return "?";
}

std::variant<GpuFilters, std::string> gpu_filters(const std::vector<FilterSpec>& filters, std::size_t elem_size,
                                                  bool kernels, DecodeMode mode) {
  GpuFilters plan;
  bool codec = false;
  bool shuffled = false;
  for (const auto& f : filters) {
    const auto name = filter_name(f.id);
    if (plan.fletcher32) return fmt::format("{} after fletcher32 is not decoded on the GPU", name);
    switch (f.id) {
      case kFilterShuffle: {
        if (codec || shuffled) return fmt::format("{} after another filter is not undone on the GPU", name);
        // As make_shuffle reads it: the element size HDF5 stored (set_local), else the dataset's.
        if (f.params.size() > 1 || (f.params.size() == 1 && f.params[0] == 0)) {
          return fmt::format("shuffle with client data of {} values is not undone on the GPU", f.params.size());
        }
        const std::size_t bytes = f.params.empty() ? elem_size : f.params[0];
        if (bytes > 1 && !kernels) return "shuffle (h5tile was built without its GPU kernels)";
        plan.shuffle_bytes = bytes > 1 ? bytes : 0;  // 1-byte elements: HDF5 leaves them as they are
        shuffled = true;
        break;
      }
      case kFilterDeflate:
      case kFilterZstd:
      case kFilterLz4: {
        if (codec) return "two compression filters are not decoded on the GPU";
        if (f.id == kFilterDeflate && (f.params.size() != 1 || f.params[0] > 9)) {
          return "deflate with client data other than a level is not decoded on the GPU";
        }
        if (f.id != kFilterDeflate && f.params.size() > 1) {
          return fmt::format("{} with client data of {} values is not decoded on the GPU", name, f.params.size());
        }
        plan.codec = f.id == kFilterDeflate ? GpuCodec::Deflate : f.id == kFilterZstd ? GpuCodec::Zstd : GpuCodec::Lz4;
        codec = true;
        break;
      }
      case kFilterFletcher32: {
        // Last, after the compressor (as h5py and h5tile write it): the checksum of the stored bytes.
        if (!codec) {
          const bool compressed_after = std::any_of(filters.begin(), filters.end(), [](const FilterSpec& g) {
            return g.id != kFilterShuffle && g.id != kFilterFletcher32;
          });
          return compressed_after ? "fletcher32 before a compression filter is checked on the CPU"
                                  : "fletcher32 with no compression filter is checked on the CPU";
        }
        if (!f.params.empty()) {
          return fmt::format("fletcher32 with client data of {} values is not checked on the GPU", f.params.size());
        }
        if (!kernels) return "fletcher32 (h5tile was built without its GPU kernels, which check it)";
        plan.fletcher32 = true;
        break;
      }
      default: return fmt::format("{} is not decoded on the GPU", name);
    }
  }
  if (!codec) return "no compression filter (shuffle alone is undone on the CPU)";
  if (plan.codec == GpuCodec::Deflate && !kernels) {
    return "deflate is not decoded on the GPU: h5tile was built without its GPU kernels "
           "(H5TILE_WITH_CUDA_KERNELS=OFF), "
           "which check deflate's Adler-32";
  }
  (void)mode;  // auto and on take the same codecs; auto then measures (gpu/decoder_choice.hpp)
  return plan;
}

std::uint32_t zlib_trailer(const std::byte* data, std::size_t size) noexcept {
  return static_cast<std::uint32_t>(read_be(data + size - 4, 4));
}

std::uint32_t fletcher32_trailer(const std::byte* data, std::size_t size) noexcept {
  const auto* p = data + size - 4;
  return static_cast<std::uint32_t>(std::to_integer<std::uint32_t>(p[0]) | std::to_integer<std::uint32_t>(p[1]) << 8 |
                                    std::to_integer<std::uint32_t>(p[2]) << 16 |
                                    std::to_integer<std::uint32_t>(p[3]) << 24);
}

std::size_t codec_bytes(const GpuFilters& filters, std::uint64_t stored_bytes) {
  if (!filters.fletcher32) return stored_bytes;
  if (stored_bytes < 4) {
    // As the fletcher32 codec says it, after the filter's name (engine/codecs/pipeline.cpp).
    throw RuntimeError(fmt::format("fletcher32: {} bytes are too few to hold a Fletcher-32 checksum", stored_bytes));
  }
  return stored_bytes - 4;
}

std::string adler32_mismatch(std::uint32_t trailer, std::uint32_t decoded, std::uint64_t stored_bytes) {
  if (trailer == decoded) return "";
  return fmt::format(
      "deflate stream of {} bytes is corrupt: it ends with Adler-32 {:#010x}, the bytes decoded on the "
      "GPU have {:#010x}",
      stored_bytes, trailer, decoded);
}

void split_stored_chunk(GpuCodec codec, const std::byte* data, std::size_t size, std::size_t chunk_bytes,
                        std::vector<StoredPiece>& pieces) {
  switch (codec) {
    case GpuCodec::Deflate: split_zlib(data, size, chunk_bytes, pieces); return;
    case GpuCodec::Zstd: pieces.push_back({0, size, 0, chunk_bytes, false}); return;
    case GpuCodec::Lz4: split_lz4(data, size, chunk_bytes, pieces); return;
  }
}

}  // namespace h5tile::detail::gpu
