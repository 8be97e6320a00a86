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
inline constexpr unsigned kFilterLzf = 32000;  // h5py's own
inline constexpr unsigned kFilterBlosc = 32001;
inline constexpr unsigned kFilterLz4 = 32004;
inline constexpr unsigned kFilterBitshuffle = 32008;
inline constexpr unsigned kFilterZstd = 32015;

// "deflate", "zstd", ...; "filter 40000 (unknown to h5tile)" for an ID h5tile does not know.
[[nodiscard]] inline std::string filter_name(unsigned id) {
  switch (id) {
    case kFilterDeflate: return "deflate";
    case kFilterShuffle: return "shuffle";
    case kFilterFletcher32: return "fletcher32";
    case kFilterSzip: return "szip";
    case kFilterNbit: return "nbit";
    case kFilterScaleOffset: return "scaleoffset";
    case kFilterLzf: return "lzf";
    case kFilterBlosc: return "blosc";
    case kFilterLz4: return "lz4";
    case kFilterZstd: return "zstd";
    case kFilterBitshuffle: return "bitshuffle";
    // Registered with The HDF Group, named so that a message says what a file needs; h5tile
    // leaves their decoding to HDF5 and its plugins.
    case 305: return "lzo";
    case 307: return "bzip2";
    case 32002: return "mafisc";
    case 32003: return "snappy";
    case 32013: return "zfp";
    case 32014: return "fpzip";
    case 32017: return "sz";
    case 32018: return "fcidecomp";
    case 32019: return "jpeg";
    case 32020: return "vbz";
    case 32022: return "bitgroom";
    case 32023: return "granularbr";
    case 32024: return "sz3";
    case 32026: return "blosc2";
    default: return fmt::format("filter {} (unknown to h5tile)", id);
  }
}

}  // namespace h5tile::detail
