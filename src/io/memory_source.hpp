#pragma once
// Bytes held in memory as a byte source: a file-like object's contents (Python's io.BytesIO,
// bytes), read by the engine as any other source, from every thread at once.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "io/byte_source.hpp"

namespace h5tile::detail {

class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string name, std::vector<std::byte> bytes) : name_(std::move(name)), bytes_(std::move(bytes)) {}

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::uint64_t size() const override { return bytes_.size(); }
  // Throws IoError (EIO) naming the source for a range past its end.
  void read_at(void* buffer, std::size_t size, std::uint64_t offset) const override;

 private:
  std::string name_;
  std::vector<std::byte> bytes_;
};

}  // namespace h5tile::detail
