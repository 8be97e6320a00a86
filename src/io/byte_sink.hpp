#pragma once
// Where a write's raw bytes go: a local file (PosixFile) or an object being uploaded
// (io/object_upload.hpp). The layouts' writers place bytes at offsets they decided beforehand;
// what carries them there is the sink's business.

#include <cstddef>
#include <cstdint>
#include <string>

namespace h5tile::detail {

class ByteSink {
 public:
  ByteSink() = default;
  ByteSink(const ByteSink&) = delete;
  ByteSink& operator=(const ByteSink&) = delete;
  virtual ~ByteSink() = default;

  // What messages call it: a path, or a URL without its query string or user information.
  [[nodiscard]] virtual std::string name() const = 0;
  // Writes exactly `size` bytes of `buffer` at `offset`. Safe to call from several threads at
  // once for ranges that do not overlap.
  virtual void write_at(const void* buffer, std::size_t size, std::uint64_t offset) const = 0;
  // Starts moving [offset, offset + size) on to where it lives, without waiting (a hint: a local
  // file's writeback; nothing for a sink that moves bytes as they come).
  virtual void start_writeback(std::uint64_t /*offset*/, std::uint64_t /*size*/) const noexcept {}
  // Makes what this rank wrote durable (a local file's fdatasync; nothing for an upload, whose
  // completion is the commit).
  virtual void sync() const {}
};

}  // namespace h5tile::detail
