#pragma once
// Where the bytes of a file come from, for reading: one small interface with one folder per
// backend beside it (posix/: a local file; http/: a URL over HTTP(S), on which S3 and WebHDFS
// are dialects), as TensorStore keeps its kvstores side by side. The layout and codec code reads
// through it without knowing whether the bytes come from a disk or a socket.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace h5tile::detail {

class PosixFile;

// One range to read: `size` bytes at `offset` of the source, into `out`.
struct ByteRange {
  std::uint64_t offset = 0;
  std::size_t size = 0;
  std::byte* out = nullptr;
};

class ByteSource {
 public:
  ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;
  virtual ~ByteSource() = default;

  // What messages call it: a path, or a URL without its query string or user information.
  [[nodiscard]] virtual std::string name() const = 0;
  // Its size in bytes (for a remote object: as recorded when it was opened).
  [[nodiscard]] virtual std::uint64_t size() const = 0;
  // Reads exactly `size` bytes at `offset` into `buffer`; a source that ends first, or that
  // changed since it was opened, is an error (IoError or RuntimeError naming it). Safe to call
  // from several threads at once.
  virtual void read_at(void* buffer, std::size_t size, std::uint64_t offset) const = 0;
  // Reads every range of `ranges` (in any order). Sources that pay per request (HTTP) join
  // neighbouring ranges into fewer requests; the default reads one range after another.
  virtual void read_ranges(std::span<const ByteRange> ranges) const;
  // Whether each request costs a round trip (a remote object), so that callers batch reads.
  [[nodiscard]] virtual bool remote() const noexcept { return false; }
  // Whether every request names the version opened, so that a read of a changed object fails
  // (IoError, ESTALE) rather than returning its new bytes: a remote object with a strong ETag,
  // sent as If-Match, last modified 2 s or more before it was opened (an ETag made from the
  // modification time in seconds tells later versions apart). A local file is not pinned
  // (readers compare its stat instead).
  [[nodiscard]] virtual bool pinned() const noexcept { return false; }
  // How many leading bytes the source holds in memory (a remote object's first block, fetched
  // at open): reads inside them cost no request, and a cache in front need not copy them.
  [[nodiscard]] virtual std::uint64_t resident_bytes() const noexcept { return 0; }
  // Asks the server whether the object is still the version opened (one request of one byte,
  // whatever is held in memory): IoError (ESTALE) where it changed. Nothing for a local file.
  virtual void validate() const {}
  // The local file behind it, for the paths that need a descriptor (writes, O_DIRECT, cuFile,
  // a tile's identity), or nullptr.
  [[nodiscard]] virtual const PosixFile* posix_file() const noexcept { return nullptr; }
};

// One request that reads the ranges `members` of a read_ranges call: [offset, offset + size)
// of the source, which holds each of them (and the gaps between them, read and dropped).
struct JoinedRange {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::vector<std::size_t> members;  // indices into the ranges given, by offset
};

// Joins `ranges` into requests, in order of offset: a range that starts at most `max_gap` bytes
// after the end of the previous request joins it while the request stays within `max_bytes`
// (a range longer than that is a request of its own). Overlapping ranges join. Empty ranges are
// left out.
[[nodiscard]] std::vector<JoinedRange> join_ranges(std::span<const ByteRange> ranges, std::uint64_t max_gap,
                                                   std::uint64_t max_bytes);

}  // namespace h5tile::detail
