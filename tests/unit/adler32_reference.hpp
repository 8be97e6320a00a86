#pragma once
// The Adler-32 that the GPU's check is tested against: zlib's adler32() where the tests link zlib
// (H5TILE_TESTS_HAVE_ZLIB), else Adler-32 as RFC 1950 defines it, byte by byte.

#include <cstddef>
#include <cstdint>

#if H5TILE_TESTS_HAVE_ZLIB
#include <zlib.h>
#endif

namespace h5tile::detail::gpu {

inline std::uint32_t reference_adler32(const std::byte* data, std::size_t size) {
#if H5TILE_TESTS_HAVE_ZLIB
  uLong adler = adler32(0L, Z_NULL, 0);
  for (std::size_t done = 0; done < size;) {  // uInt lengths
    const auto n = static_cast<uInt>(size - done < (std::size_t{1} << 30) ? size - done : std::size_t{1} << 30);
    adler = adler32(adler, reinterpret_cast<const Bytef*>(data + done), n);
    done += n;
  }
  return static_cast<std::uint32_t>(adler);
#else
  std::uint32_t a = 1;
  std::uint32_t b = 0;
  for (std::size_t i = 0; i < size; ++i) {
    a = (a + std::to_integer<std::uint32_t>(data[i])) % 65521;
    b = (b + a) % 65521;
  }
  return b << 16 | a;
#endif
}

}  // namespace h5tile::detail::gpu
