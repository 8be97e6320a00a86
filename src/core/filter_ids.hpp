#pragma once
// HDF5 filter IDs and their names, as `h5tile info` and describe() show them: HDF5's own filters
// and the ones registered with The HDF Group that hdf5plugin ships and h5tile knows.

#include <string>

#include <fmt/format.h>

namespace h5tile::detail {

inline constexpr unsigned kFilterDeflate = 1;
inline constexpr unsigned kFilterShuffle = 2;
inline constexpr unsigned kFilterFletcher32 = 3;
inline constexpr unsigned kFilterSzip = 4;
inline constexpr unsigned kFilterNbit = 5;
inline constexpr unsigned kFilterScaleOffset = 6;
inline constexpr unsigned kFilterBlosc = 32001;
inline constexpr unsigned kFilterLz4 = 32004;
inline constexpr unsigned kFilterZstd = 32015;

// "deflate", "zstd", ...; "filter 307" for an ID h5tile does not know.
[[nodiscard]] inline std::string filter_name(unsigned id) {
  switch (id) {
    case kFilterDeflate: return "deflate";
    case kFilterShuffle: return "shuffle";
    case kFilterFletcher32: return "fletcher32";
    case kFilterSzip: return "szip";
    case kFilterNbit: return "nbit";
    case kFilterScaleOffset: return "scaleoffset";
    case kFilterBlosc: return "blosc";
    case kFilterLz4: return "lz4";
    case kFilterZstd: return "zstd";
    default: return fmt::format("filter {}", id);
  }
}

}  // namespace h5tile::detail
