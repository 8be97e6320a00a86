#pragma once
// Writing one object of an object store (S3) as the write's sink: the bytes that the layouts place
// at offsets decided beforehand are gathered into parts of a multipart upload, each part sent as
// soon as all its bytes are there, on threads of its own; bytes that may be written again (HDF5's
// metadata, through hdf5/upload_driver.hpp) keep their parts in memory until finish(). finish()
// sends what is left and completes the upload, which is the commit: the object appears whole, or
// (abort(), or the process dies) not at all.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "io/byte_sink.hpp"

namespace h5tile::detail {

// What ObjectUpload drives: the requests of one multipart upload (io/http/s3_upload.hpp), or an
// upload into memory in the unit tests.
class PartUploader {
 public:
  PartUploader() = default;
  PartUploader(const PartUploader&) = delete;
  PartUploader& operator=(const PartUploader&) = delete;
  virtual ~PartUploader() = default;

  // The object, as messages show it.
  [[nodiscard]] virtual std::string name() const = 0;
  // Sends part `number` (1 to 10,000); returns its ETag. Called from several threads at once.
  // Throws (IoError) once retries are spent.
  virtual std::string put_part(unsigned number, std::span<const std::byte> bytes) = 0;
  // Makes the object from the parts, `etags[i]` being part i + 1's: the commit.
  virtual void complete(const std::vector<std::string>& etags) = 0;
  // Discards the parts sent: nothing of the upload becomes visible. Never throws.
  virtual void abort() noexcept = 0;
  // After complete() threw: whether the object may have been made anyway (the answer to a
  // completion the server carried out was lost); true where it cannot tell. Never throws.
  [[nodiscard]] virtual bool may_have_completed() noexcept { return true; }
};

// S3's limits on the parts of one upload.
inline constexpr std::uint64_t kMinPartBytes = std::uint64_t{5} << 20;  // every part but the last
inline constexpr std::uint64_t kMaxPartBytes = std::uint64_t{5} << 30;
inline constexpr std::uint64_t kMaxParts = 10000;

// The part size for an object of at most `expected` bytes: `preferred`, or larger (whole MiB)
// where `expected` would need more than kMaxParts parts of it; within S3's limits.
[[nodiscard]] std::uint64_t part_size_for(std::uint64_t expected, std::uint64_t preferred);

class ObjectUpload final : public ByteSink {
 public:
  // Parts of `part_size` bytes (the last may be smaller), at most `streams` sent at once.
  ObjectUpload(std::unique_ptr<PartUploader> uploader, std::uint64_t part_size, unsigned streams);
  ObjectUpload(const ObjectUpload&) = delete;
  ObjectUpload& operator=(const ObjectUpload&) = delete;
  // Aborts the upload where it was not completed.
  ~ObjectUpload() override;

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::uint64_t part_size() const noexcept { return part_size_; }

  // Raw bytes, each written once: a part is sent as soon as all its bytes are written (and none
  // of them is held). Blocks while more than a few parts wait to be sent. Throws the upload's
  // failure, once there is one.
  void write_at(const void* buffer, std::size_t size, std::uint64_t offset) const override;
  // Bytes that may be written again (HDF5's metadata): their parts stay in memory until finish().
  // Bytes already sent cannot be written again: a RuntimeError.
  void write_held(const void* buffer, std::size_t size, std::uint64_t offset);
  // Bytes written and still in memory, zeros where none were written; bytes already sent are a
  // RuntimeError (nothing reads them back: HDF5 reads its metadata, which is held).
  void read_at(void* buffer, std::size_t size, std::uint64_t offset) const;
  // One past the last byte: the furthest written, or as set_end said.
  [[nodiscard]] std::uint64_t end() const;
  // The object ends at `end` (HDF5's truncate at close).
  void set_end(std::uint64_t end);
  // Sends every part not sent (bytes never written are zeros), waits for them and completes the
  // upload: the object appears. Throws the upload's failure (then abort()).
  void finish();
  // Stops sending, and discards the upload (AbortMultipartUpload). Never throws.
  void abort() noexcept;
  // Whether the object may exist as this upload made it: completed, or a completion was sent
  // and failed in a way that leaves it unknown (PartUploader::may_have_completed). Never throws.
  [[nodiscard]] bool may_have_completed() noexcept;
  // HDF5's metadata block for a file built into this upload (upload_driver.hpp): 1 MiB, which
  // keeps metadata in few parts; less for a small object (each block is stored whole).
  [[nodiscard]] std::uint64_t meta_block_bytes() const noexcept { return meta_block_bytes_; }
  void set_meta_block_bytes(std::uint64_t bytes) noexcept { meta_block_bytes_ = bytes; }

 private:
  enum class State : unsigned char { Filling, Queued, Sending, Sent };
  struct Part {
    std::unique_ptr<std::byte[]> bytes;
    std::uint64_t raw = 0;  // raw bytes written
    bool held = false;      // holds bytes that may be written again
    State state = State::Filling;
    std::uint64_t size = 0;  // set when queued
  };

  // The part at `index`, made (zeroed) where it was not; RuntimeError for an index past S3's
  // limit or a part that is sent. Call with mutex_ held.
  Part& part_to_write(std::uint64_t index, std::uint64_t offset) const;
  // Queues a filled part; call with mutex_ held.
  void queue(std::uint64_t index, Part& part, std::uint64_t size) const;
  void send_loop();
  void rethrow_failure() const;  // with mutex_ held

  std::unique_ptr<PartUploader> uploader_;
  std::string name_;
  std::uint64_t part_size_;
  unsigned streams_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable std::map<std::uint64_t, Part> parts_;  // not yet sent
  mutable std::deque<std::uint64_t> queue_;
  mutable std::map<std::uint64_t, std::string> etags_;
  mutable std::uint64_t end_ = 0;
  mutable std::exception_ptr failure_;
  bool stopping_ = false;
  bool completed_ = false;
  bool complete_sent_ = false;  // complete() was called and did not refuse outright
  bool aborted_ = false;
  std::uint64_t meta_block_bytes_ = std::uint64_t{1} << 20;
  std::vector<std::thread> senders_;
};

}  // namespace h5tile::detail
