#pragma once
// Writing one object of an object store (S3) as the write's sink: the bytes that the layouts place
// at offsets decided beforehand are gathered into parts of a multipart upload, each part sent as
// soon as all its bytes are there, on threads of its own; bytes that may be written again (HDF5's
// metadata, through hdf5/upload_driver.hpp) keep their parts in memory until finish(). finish()
// sends what is left and completes the upload, which is the commit: the object appears whole, or
// (abort(), or the process dies) not at all.
//
// Ranks in several processes (MPI) write one object as one upload, each process an ObjectUpload
// of its own: the object is divided into parts by the rank that writes their bytes (plan_parts,
// divide()), each process sends its own parts, the joined ones hand their ETags over (flush()), and
// the process that started the upload completes it with them (add_etags(), finish()).

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
  // The upload's id, by which other processes join it (empty where it has none).
  [[nodiscard]] virtual std::string upload_id() const { return {}; }
};

// S3's limits on the parts of one upload.
inline constexpr std::uint64_t kMinPartBytes = std::uint64_t{5} << 20;  // every part but the last
inline constexpr std::uint64_t kMaxPartBytes = std::uint64_t{5} << 30;
inline constexpr std::uint64_t kMaxParts = 10000;

// The part size for an object of at most `expected` bytes: `preferred`, or larger (whole MiB)
// where `expected` would need more than kMaxParts parts of it; within S3's limits.
[[nodiscard]] std::uint64_t part_size_for(std::uint64_t expected, std::uint64_t preferred);

// Bytes [begin, end) of an object that rank `rank` writes.
struct RankBytes {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  int rank = 0;
};
// The parts of an object written by ranks of several processes, each part sent by the one rank
// that writes its bytes: part i is [starts[i], starts[i + 1]), rank owners[i]'s; the bytes past
// starts.back() (HDF5's metadata after the data, if any) are rank 0's, in parts of the upload's size.
struct PartPlan {
  std::vector<std::uint64_t> starts{0};
  std::vector<int> owners;
};
// The runs of bytes of each rank that `ranges` (in any order) make: the bytes before, between and
// after them rank 0's, the neighbouring ranges of one rank one run. InvalidArgument, whose message
// begins with `what`, where two ranks write the same bytes.
[[nodiscard]] std::vector<RankBytes> rank_runs(std::vector<RankBytes> ranges, const std::string& what);
// The first of `runs` but the last shorter than S3's smallest part (5 MiB); nullptr where none is.
[[nodiscard]] const RankBytes* short_run(const std::vector<RankBytes>& runs);
// The plan for `ranges` (in any order; the bytes before, between and after them are rank 0's):
// each rank's runs of bytes cut into parts of about `part_size` (at least, where a run is longer).
// InvalidArgument, whose message begins with `what`, where two ranks write the same bytes, where
// a run of one rank's bytes other than the last is smaller than S3's smallest part (5 MiB), or
// where the plan needs more than 10,000 parts.
[[nodiscard]] PartPlan plan_parts(std::vector<RankBytes> ranges, std::uint64_t part_size, const std::string& what);
// The same for the runs rank_runs made of them.
[[nodiscard]] PartPlan parts_of_runs(const std::vector<RankBytes>& runs, std::uint64_t part_size,
                                     const std::string& what);

class ObjectUpload final : public ByteSink {
 public:
  // Parts of `part_size` bytes (the last may be smaller), at most `streams` sent at once. An upload
  // that another process started and completes (`completes` false) sends only the parts divide()
  // gives it and hands their ETags over (flush()); it never completes or aborts the upload.
  ObjectUpload(std::unique_ptr<PartUploader> uploader, std::uint64_t part_size, unsigned streams,
               bool completes = true);
  ObjectUpload(const ObjectUpload&) = delete;
  ObjectUpload& operator=(const ObjectUpload&) = delete;
  // Aborts the upload where it was not completed.
  ~ObjectUpload() override;

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::uint64_t part_size() const noexcept { return part_size_; }
  // The upload's id, by which other processes join it (PartUploader::upload_id).
  [[nodiscard]] std::string upload_id() const { return uploader_->upload_id(); }
  // Whether this process completes the upload (it started it; false: it joined it).
  [[nodiscard]] bool completes() const noexcept { return completes_; }

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
  // upload: the object appears. Throws the upload's failure (then abort()). With parts of other
  // processes (divide()), those are completed with the ETags add_etags() gave; one missing is a
  // RuntimeError.
  void finish();

  // Several processes: the object divided as `plan` says, this process sending the parts of rank
  // `rank` (and, where it completes the upload, those past the plan). Call before any raw byte is
  // written; held bytes written so far move into the new parts. Throws RuntimeError otherwise.
  void divide(const PartPlan& plan, int rank);
  // A joined upload: sends this process's parts (zeros where nothing was written), waits for them
  // and returns their ETags by part number, for the completing process's add_etags(). Throws the
  // upload's failure.
  [[nodiscard]] std::map<unsigned, std::string> flush();
  // The completing process: the ETags, by part number, of parts that other processes sent.
  void add_etags(const std::map<unsigned, std::string>& etags);
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

  // The part holding byte `offset`, where it starts, and its size (the last may be cut shorter).
  [[nodiscard]] std::uint64_t index_of(std::uint64_t offset) const;
  [[nodiscard]] std::uint64_t begin_of(std::uint64_t index) const;
  [[nodiscard]] std::uint64_t size_of(std::uint64_t index) const;
  // Of `size` bytes from `offset`: the part holding the first, where in it, and how many are in it.
  struct Piece {
    std::uint64_t index = 0;
    std::uint64_t at = 0;
    std::uint64_t n = 0;
  };
  [[nodiscard]] Piece piece_at(std::uint64_t offset, std::uint64_t size) const;
  // Whether this process sends part `index`.
  [[nodiscard]] bool mine(std::uint64_t index) const;
  // The part at `index`, made (zeroed) where it was not; RuntimeError for an index past S3's
  // limit, a part that is sent or one that another process sends. Call with mutex_ held.
  Part& part_to_write(std::uint64_t index, std::uint64_t offset) const;
  // write_held with mutex_ held.
  void hold(const std::byte* in, std::size_t size, std::uint64_t offset);
  // Queues this process's parts of the first `count` not queued yet (the object ending at `end`)
  // and waits until every one of them is sent; throws the upload's failure. `lock` holds mutex_.
  void send_mine(std::unique_lock<std::mutex>& lock, std::uint64_t count, std::uint64_t end);
  // Queues a filled part; call with mutex_ held.
  void queue(std::uint64_t index, Part& part, std::uint64_t size) const;
  void send_loop();
  void rethrow_failure() const;  // with mutex_ held

  std::unique_ptr<PartUploader> uploader_;
  std::string name_;
  std::uint64_t part_size_;
  unsigned streams_;
  bool completes_;
  // The parts divide() planned (none: parts of part_size_ from byte 0) and the rank whose this
  // process sends; past the plan, parts of part_size_, sent by the completing process.
  PartPlan plan_;
  int rank_ = 0;
  std::map<std::uint64_t, std::string> received_;                     // ETags of other processes' parts (add_etags)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> held_ranges_;  // (offset, size) of held writes
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
