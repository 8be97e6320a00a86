#pragma once
// nvCOMP's batched decompressors, loaded at run time with dlopen (as cuFile is: cuda/cufile.cpp)
// so that h5tile builds and runs without it. The few types used are declared here with the layout
// of nvCOMP 6's C headers (nvcomp/shared_types.h, deflate.h, zstd.h, lz4.h); nvCOMP 3 to 5 had
// other signatures, so another major version is refused.

#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include "gpu/decode.hpp"

namespace h5tile::detail::gpu {

namespace nvcomp_abi {
using Status = int;  // nvcompStatus_t; 0: nvcompSuccess
// nvcompBatched{Deflate,Zstd,LZ4}DecompressOpts_t: 64 bytes of 4-byte fields, all zero by default
// (NVCOMP_DECOMPRESS_BACKEND_DEFAULT, no sorting, NVCOMP_TYPE_CHAR, NVCOMP_BITSHUFFLE_NONE).
// Passed by value; the three share this size and alignment, so one zeroed type serves them all.
struct DecompressOpts {
  int backend = 0;
  int fields[3] = {};      // NOLINT(*-avoid-c-arrays): the C layout
  char reserved[48] = {};  // NOLINT(*-avoid-c-arrays)
};
static_assert(sizeof(DecompressOpts) == 64 && alignof(DecompressOpts) == 4);
struct Alignments {  // nvcompAlignmentRequirements_t
  std::size_t input;
  std::size_t output;
  std::size_t temp;
};
struct Properties {  // nvcompProperties_t
  std::uint32_t version;
  std::uint32_t cudart_version;
};
}  // namespace nvcomp_abi

// One codec's batched decompressor.
struct NvcompCodec {
  nvcomp_abi::Status (*alignments)(nvcomp_abi::DecompressOpts, nvcomp_abi::Alignments*) = nullptr;
  nvcomp_abi::Status (*temp_size)(std::size_t num_chunks, std::size_t max_chunk_bytes, nvcomp_abi::DecompressOpts,
                                  std::size_t* temp_bytes, std::size_t max_total_bytes, cudaStream_t) = nullptr;
  nvcomp_abi::Status (*decompress)(const void* const* in_ptrs, const std::size_t* in_bytes,
                                   const std::size_t* out_buffer_bytes, std::size_t* out_bytes, std::size_t num_chunks,
                                   void* temp, std::size_t temp_bytes, void* const* out_ptrs,
                                   nvcomp_abi::DecompressOpts, nvcomp_abi::Status* statuses,
                                   cudaStream_t stream) = nullptr;
  nvcomp_abi::Alignments align{1, 1, 1};
};

struct Nvcomp {
  void* library = nullptr;
  NvcompCodec codecs[3];  // NOLINT(*-avoid-c-arrays): by GpuCodec
  const char* (*status_string)(nvcomp_abi::Status) = nullptr;
  std::uint32_t version = 0;
  std::string failure;  // why nvCOMP is unusable, or ""

  [[nodiscard]] const NvcompCodec& codec(GpuCodec c) const { return codecs[static_cast<int>(c)]; }
  [[nodiscard]] std::string describe(nvcomp_abi::Status status) const;
};

// nvCOMP loaded from `library` ("" = dlopen's search for libnvcomp.so.6), once per path per
// process; its `failure` says why it cannot be used.
[[nodiscard]] const Nvcomp& nvcomp(const std::string& library);

}  // namespace h5tile::detail::gpu
