#pragma once
// Decoding compressed chunks on the GPU: a read into device memory sends only the stored
// (compressed) bytes across PCIe, and nvCOMP, loaded at run time (dlopen, like cuFile), inflates
// them there in batches; a kernel undoes HDF5's shuffle; the decoded chunks are copied into the
// destination, clipped as the CPU path clips them. What the GPU decodes: HDF5's deflate (zlib
// streams), hdf5plugin's zstd (one frame per chunk) and lz4 (its block framing), each with or
// without shuffle before it and with or without fletcher32 after it (as h5py and h5tile write it:
// its checksum, over the stored bytes, is checked on the GPU before they are decoded). Everything
// else (blosc, szip, fletcher32 with no compressor or before one, ...) is decoded on the CPU.
//
// The plan (which filters, the framing of a stored chunk) is pure logic, built with and without
// CUDA (gpu/decode.cpp); the device work is in src/cuda/gpu_decode.cpp.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <h5tile/array.hpp>

#include "engine/codecs/codec.hpp"
#include "engine/codecs/pipeline.hpp"
#include "engine/progress.hpp"
#include "gpu/backend.hpp"
#include "io/byte_source.hpp"

namespace h5tile::detail::gpu {

// Auto: whichever of the GPU and the CPU measured faster on the first chunks of the first read of
// a codec on a device (gpu/decoder_choice.hpp); On: every codec nvCOMP has on the GPU, or an error
// naming why not; Off: on the CPU. api/resolve.cpp resolves it from H5TILE_GPU_DECODE. Deflate's
// Adler-32 and fletcher32's checksum are checked by either decoder; zstd and lz4 chunks carry no
// checksum of their own.
enum class DecodeMode : unsigned char { Auto, On, Off };

// The nvCOMP decompressor of a dataset's compression filter.
enum class GpuCodec : unsigned char { Deflate, Zstd, Lz4 };
[[nodiscard]] const char* codec_name(GpuCodec codec) noexcept;

// How the GPU undoes a dataset's filters: where fletcher32 was applied last, the check of its
// checksum (the stored chunk's last 4 bytes, over the bytes before them); the codec's
// decompressor; then, where the dataset was shuffled before it was compressed, the unshuffle kernel.
struct GpuFilters {
  GpuCodec codec = GpuCodec::Deflate;
  std::size_t shuffle_bytes = 0;  // the element size HDF5 shuffled by; 0: not shuffled
  bool fletcher32 = false;        // the stored chunks end with a Fletcher-32 checksum
  friend bool operator==(const GpuFilters&, const GpuFilters&) = default;
};

// The GPU's plan for `filters` (a chunked dataset's pipeline in creation order, of `elem_size`-byte
// elements) under `mode` (Auto or On), or why the GPU does not decode them ("fletcher32 before a
// compression filter is not checked on the GPU", ...). `kernels`: whether this build has the GPU
// kernels (gpu::kernels_built()): without them neither shuffle is undone nor deflate's Adler-32 or
// fletcher32's checksum checked on the GPU.
[[nodiscard]] std::variant<GpuFilters, std::string> gpu_filters(const std::vector<FilterSpec>& filters,
                                                                std::size_t elem_size, bool kernels, DecodeMode mode);

// One part of a stored chunk that nvCOMP decodes on its own: `size` bytes at `offset` of the
// stored chunk decode to `decoded` bytes at `out_offset` of the chunk; `raw`: stored as it is (an
// lz4 block that did not compress), copied rather than decoded.
struct StoredPiece {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t out_offset = 0;
  std::uint64_t decoded = 0;
  bool raw = false;
  friend bool operator==(const StoredPiece&, const StoredPiece&) = default;
};

// Appends to `pieces` the parts of a stored chunk (`size` bytes at `data`) that decodes to
// `chunk_bytes`: for deflate, the raw deflate stream between the zlib header and its Adler-32
// (a preset dictionary is refused: HDF5 never writes one); for zstd, the frame; for lz4, each
// block of hdf5plugin's framing. Throws RuntimeError, saying why, for a chunk that is not what
// the filter writes or does not hold exactly `chunk_bytes`.
void split_stored_chunk(GpuCodec codec, const std::byte* data, std::size_t size, std::size_t chunk_bytes,
                        std::vector<StoredPiece>& pieces);

// Where the bytes that deflate's piece of a stored chunk starts: after the 2-byte zlib header.
inline constexpr std::size_t kZlibHeaderBytes = 2;

// The Adler-32 of the decoded bytes that a zlib stream of `size` bytes at `data` ends with (its
// last 4 bytes, big-endian), which nvCOMP does not check. split_stored_chunk has checked `size`.
[[nodiscard]] std::uint32_t zlib_trailer(const std::byte* data, std::size_t size) noexcept;

// Why a chunk whose zlib stream of `stored_bytes` ends with Adler-32 `trailer` but whose bytes
// decoded on the GPU have Adler-32 `decoded` cannot be decoded, or "" where the two agree.
[[nodiscard]] std::string adler32_mismatch(std::uint32_t trailer, std::uint32_t decoded, std::uint64_t stored_bytes);

// The Fletcher-32 checksum that a stored chunk of `size` bytes (at least 4) at `data` ends with
// (little-endian), over the bytes before it.
[[nodiscard]] std::uint32_t fletcher32_trailer(const std::byte* data, std::size_t size) noexcept;

// The bytes of a stored chunk of `stored_bytes` that the codec decodes: all but fletcher32's
// checksum. Throws RuntimeError, as the CPU codec words it, for a chunk too short to hold one.
[[nodiscard]] std::size_t codec_bytes(const GpuFilters& filters, std::uint64_t stored_bytes);

// One chunk of a device read decoded on the GPU: where it is stored, the part of it read (in
// chunk coordinates) and where that part goes in the destination.
struct DeviceChunk {
  std::uint64_t file_offset = 0;
  std::uint64_t stored_bytes = 0;
  Shape origin;  // the chunk's first element in the dataset (for messages)
  Box part;
  Shape dst_offset;
};

struct DecodeRequest {
  const ByteSource* file = nullptr;
  GpuFilters filters;
  Shape chunk;
  std::size_t elem_size = 0;
  std::vector<DeviceChunk> chunks;
  std::string where;  // "dataset '/x' in 'f.h5'", for messages
  // The CPU's decoder of the same chunks: it decodes again a chunk that the GPU could not decode
  // or whose Adler-32 disagrees (null: such a chunk fails the read).
  std::shared_ptr<const FilterPipeline> cpu = nullptr;
};

// Whether this build has the GPU kernels (unshuffle, Adler-32 and Fletcher-32: src/cuda/*.cu).
[[nodiscard]] bool kernels_built() noexcept;

// Why the GPU cannot decode `filters` here, or "": no CUDA device, no nvCOMP at `library` ("": dlopen's
// search for libnvcomp.so.6), another nvCOMP major version, a codec it lacks. Loads nvCOMP once
// per library path.
[[nodiscard]] std::string decode_obstacle(const GpuFilters& filters, const std::string& library);

// Reads and decodes `request`'s chunks into `out` (row-major device memory of `out_shape` on
// `device`) in as few batches as the device window allows (32 x `staging.bytes`, at most a quarter
// of the device's free memory; two batches in flight): the stored bytes are read with `threads`
// threads into a ring of four pinned buffers (each a quarter of `staging.bytes` or one chunk,
// whichever is more) and copied to the device while the workers read on; a batch is decoded there
// with nvCOMP `library` in one call, unshuffled and put in place (a chunk that is whole and one run
// in the destination straight there, the others clipped as the CPU path clips them); a deflate
// chunk's Adler-32 is checked against its stream's trailer; where the dataset has fletcher32, every
// chunk's stored bytes are summed on the GPU (one launch per batch) and a chunk whose checksum
// disagrees fails the read as the CPU path fails it ("... cannot be decoded: fletcher32:
// Fletcher-32 checksum mismatch (stored ..., computed ...)"), not decoded again on the CPU. A chunk
// that nvCOMP fails on, or whose Adler-32 disagrees, is decoded again by `request.cpu` (which finds
// the end of a zlib stream that has bytes after it, as HDF5 does) and its part copied into place.
// `progress` (if given) counts the bytes placed; last_device_io()'s decode_phases says where the
// time went. Throws RuntimeError naming the chunk, the dataset and the reason (the CPU decoder's;
// nvCOMP's or the Adler-32's without one) for a chunk that does not decode.
void decode_to_device(int device, const DecodeRequest& request, std::byte* out, const Shape& out_shape,
                      const std::string& library, unsigned threads, const Staging& staging, Progress* progress);

// Records who decoded the current device read ("nvcomp", "cpu", both) and why the GPU did not.
void note_decoder(const std::string& decoder, const std::string& reason);

}  // namespace h5tile::detail::gpu
