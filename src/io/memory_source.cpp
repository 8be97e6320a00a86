#include "io/memory_source.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {

void MemorySource::read_at(void* buffer, std::size_t size, std::uint64_t offset) const {
  if (offset > bytes_.size() || size > bytes_.size() - offset) {
    throw IoError(
        fmt::format("cannot read {} bytes at offset {} of '{}': it holds {} bytes", size, offset, name_, bytes_.size()),
        EIO);
  }
  std::memcpy(buffer, bytes_.data() + offset, size);
}

}  // namespace h5tile::detail
