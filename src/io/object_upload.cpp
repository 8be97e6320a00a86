#include "io/object_upload.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {

std::uint64_t part_size_for(std::uint64_t expected, std::uint64_t preferred) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  std::uint64_t size = std::clamp(preferred, kMinPartBytes, kMaxPartBytes);
  const std::uint64_t needed = (expected + kMaxParts - 1) / kMaxParts;
  if (needed > size) size = std::min(kMaxPartBytes, (needed + kMiB - 1) / kMiB * kMiB);
  return size;
}

std::vector<RankBytes> rank_runs(std::vector<RankBytes> ranges, const std::string& what) {
  std::sort(ranges.begin(), ranges.end(), [](const RankBytes& a, const RankBytes& b) { return a.begin < b.begin; });
  // Each rank's runs: the ranges merged where one rank's meet, the bytes no range names rank 0's.
  std::vector<RankBytes> runs;
  const auto add = [&](std::uint64_t begin, std::uint64_t end, int rank) {
    if (!runs.empty() && runs.back().rank == rank && runs.back().end == begin) {
      runs.back().end = end;
    } else {
      runs.push_back({begin, end, rank});
    }
  };
  std::uint64_t at = 0;
  for (const auto& r : ranges) {
    if (r.begin == r.end) continue;
    if (r.begin < at && runs.back().rank == r.rank) {  // one rank's ranges that overlap (tiles in one chunk)
      runs.back().end = std::max(runs.back().end, r.end);
      at = runs.back().end;
      continue;
    }
    if (r.begin < at) {
      throw InvalidArgument(fmt::format(
          "{}: ranks {} and {} both write byte {} of the object; from several processes each part of it has one "
          "writer (tiles that share no chunk)",
          what, runs.back().rank, r.rank, r.begin));
    }
    if (r.begin > at) add(at, r.begin, 0);
    add(r.begin, r.end, r.rank);
    at = r.end;
  }
  return runs;
}

const RankBytes* short_run(const std::vector<RankBytes>& runs) {
  for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
    if (runs[i].end - runs[i].begin < kMinPartBytes) return &runs[i];
  }
  return nullptr;
}

PartPlan plan_parts(std::vector<RankBytes> ranges, std::uint64_t part_size, const std::string& what) {
  return parts_of_runs(rank_runs(std::move(ranges), what), part_size, what);
}

PartPlan parts_of_runs(const std::vector<RankBytes>& runs, std::uint64_t part_size, const std::string& what) {
  if (const auto* run = short_run(runs)) {
    throw InvalidArgument(fmt::format(
        "{}: rank {} writes bytes {} to {} of the object ({} bytes), fewer than S3's smallest part ({} bytes); "
        "ranks in several processes each send their own parts: give each rank at least 5 MiB of the dataset in "
        "one run (tiles of whole rows along the first axis), or write layout 'virtual'",
        what, run->rank, run->begin, run->end, run->end - run->begin, kMinPartBytes));
  }
  PartPlan plan;
  plan.starts.clear();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto length = runs[i].end - runs[i].begin;
    // Parts of part_size or a little more (a short remainder is shared out), within S3's largest.
    auto count = std::max<std::uint64_t>(1, length / part_size);
    count = std::max(count, (length + kMaxPartBytes - 1) / kMaxPartBytes);
    // `count` parts of `step` bytes, the first `extra` one more: none past S3's largest.
    const auto step = length / count;
    const auto extra = length % count;
    for (std::uint64_t k = 0; k < count; ++k) {
      plan.starts.push_back(runs[i].begin + k * step + std::min(k, extra));
      plan.owners.push_back(runs[i].rank);
    }
  }
  plan.starts.push_back(runs.empty() ? 0 : runs.back().end);
  if (plan.owners.size() > kMaxParts) {
    throw InvalidArgument(
        fmt::format("{}: the object needs {} parts, more than S3's {}", what, plan.owners.size(), kMaxParts));
  }
  return plan;
}

ObjectUpload::ObjectUpload(std::unique_ptr<PartUploader> uploader, std::uint64_t part_size, unsigned streams,
                           bool completes)
    : uploader_(std::move(uploader)),
      name_(uploader_->name()),
      part_size_(part_size),
      streams_(std::max(1U, streams)),
      completes_(completes) {
  senders_.reserve(streams_);
  try {
    for (unsigned i = 0; i < streams_; ++i) senders_.emplace_back([this] { send_loop(); });
  } catch (...) {
    abort();
    throw;
  }
}

ObjectUpload::~ObjectUpload() { abort(); }

void ObjectUpload::rethrow_failure() const {
  if (failure_) std::rethrow_exception(failure_);
  if (aborted_) throw RuntimeError(fmt::format("cannot write '{}': its upload was abandoned", name_));
}

std::uint64_t ObjectUpload::index_of(std::uint64_t offset) const {
  const auto planned = plan_.starts.size() - 1;
  if (offset >= plan_.starts.back()) return planned + (offset - plan_.starts.back()) / part_size_;
  return static_cast<std::uint64_t>(std::upper_bound(plan_.starts.begin(), plan_.starts.end(), offset) -
                                    plan_.starts.begin()) -
         1;
}

std::uint64_t ObjectUpload::begin_of(std::uint64_t index) const {
  const auto planned = plan_.starts.size() - 1;
  return index < planned ? plan_.starts[index] : plan_.starts.back() + (index - planned) * part_size_;
}

std::uint64_t ObjectUpload::size_of(std::uint64_t index) const {
  const auto planned = plan_.starts.size() - 1;
  return index < planned ? plan_.starts[index + 1] - plan_.starts[index] : part_size_;
}

ObjectUpload::Piece ObjectUpload::piece_at(std::uint64_t offset, std::uint64_t size) const {
  const auto index = index_of(offset);
  const auto at = offset - begin_of(index);
  return {index, at, std::min(size, size_of(index) - at)};
}

bool ObjectUpload::mine(std::uint64_t index) const {
  const auto planned = plan_.starts.size() - 1;
  return index < planned ? plan_.owners[index] == rank_ : completes_;
}

ObjectUpload::Part& ObjectUpload::part_to_write(std::uint64_t index, std::uint64_t offset) const {
  if (index >= kMaxParts) {
    throw RuntimeError(fmt::format("cannot write byte {} of '{}': an upload in parts of {} bytes ends at part {}",
                                   offset, name_, part_size_, kMaxParts));
  }
  if (!mine(index)) {
    throw RuntimeError(fmt::format("cannot write byte {} of '{}': its part ({}) is another process's to send", offset,
                                   name_, index + 1));
  }
  const auto sent = [&] {
    return RuntimeError(fmt::format("cannot write byte {} of '{}': its part was sent already", offset, name_));
  };
  if (etags_.count(index) != 0) throw sent();
  auto [it, made] = parts_.try_emplace(index);
  if (made) {
    it->second.bytes = std::make_unique<std::byte[]>(size_of(index));  // zeroed: bytes never written are 0
  } else if (it->second.state != State::Filling) {
    throw sent();
  }
  return it->second;
}

void ObjectUpload::queue(std::uint64_t index, Part& part, std::uint64_t size) const {
  part.state = State::Queued;
  part.size = size;
  queue_.push_back(index);
  changed_.notify_all();
}

void ObjectUpload::write_at(const void* buffer, std::size_t size, std::uint64_t offset) const {
  const auto* in = static_cast<const std::byte*>(buffer);
  while (size > 0) {
    std::uint64_t index = 0;
    std::uint64_t n = 0;
    std::uint64_t part_size = 0;
    std::byte* into = nullptr;
    {
      const std::lock_guard lock(mutex_);
      rethrow_failure();
      const auto piece = piece_at(offset, size);
      index = piece.index;
      part_size = size_of(index);
      n = piece.n;
      into = part_to_write(index, offset).bytes.get() + piece.at;
      end_ = std::max(end_, offset + n);
    }
    // Outside the lock: the part stays until all its bytes, these among them, are counted.
    std::memcpy(into, in, n);
    {
      std::unique_lock lock(mutex_);
      auto& part = parts_.at(index);
      part.raw += n;
      if (part.raw == part_size && !part.held) {
        queue(index, part, part_size);
        // Back-pressure: the writers wait while more parts wait to be sent than the senders take.
        changed_.wait(lock, [&] { return queue_.size() < 2 * std::size_t{streams_} || failure_ || aborted_; });
      }
    }
    in += n;
    offset += n;
    size -= n;
  }
}

void ObjectUpload::write_held(const void* buffer, std::size_t size, std::uint64_t offset) {
  const std::lock_guard lock(mutex_);
  if (aborted_) return;  // HDF5 closing a file whose write failed: its metadata goes nowhere
  held_ranges_.emplace_back(offset, size);
  hold(static_cast<const std::byte*>(buffer), size, offset);
}

void ObjectUpload::hold(const std::byte* in, std::size_t size, std::uint64_t offset) {
  while (size > 0) {
    const auto [index, at, n] = piece_at(offset, size);
    auto& part = part_to_write(index, offset);
    part.held = true;
    std::memcpy(part.bytes.get() + at, in, n);
    end_ = std::max(end_, offset + n);
    in += n;
    offset += n;
    size -= n;
  }
}

void ObjectUpload::read_at(void* buffer, std::size_t size, std::uint64_t offset) const {
  auto* out = static_cast<std::byte*>(buffer);
  const std::lock_guard lock(mutex_);
  while (size > 0) {
    const auto [index, at, n] = piece_at(offset, size);
    if (const auto it = parts_.find(index); it != parts_.end() && it->second.bytes) {
      std::memcpy(out, it->second.bytes.get() + at, n);
    } else if (etags_.count(index) != 0) {
      throw RuntimeError(fmt::format("cannot read byte {} of '{}' back: its part was sent already", offset, name_));
    } else {
      std::memset(out, 0, n);
    }
    out += n;
    offset += n;
    size -= n;
  }
}

std::uint64_t ObjectUpload::end() const {
  const std::lock_guard lock(mutex_);
  return end_;
}

void ObjectUpload::set_end(std::uint64_t end) {
  const std::lock_guard lock(mutex_);
  end_ = end;
}

void ObjectUpload::send_loop() {
  for (;;) {
    std::uint64_t index = 0;
    std::span<const std::byte> bytes;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      index = queue_.front();
      queue_.pop_front();
      auto& part = parts_.at(index);
      part.state = State::Sending;
      bytes = std::span<const std::byte>(part.bytes.get(), part.size);
      changed_.notify_all();  // a writer waiting for room in the queue
      if (failure_ || aborted_) {
        parts_.erase(index);
        continue;
      }
    }
    std::string etag;
    std::exception_ptr failed;
    try {
      etag = uploader_->put_part(static_cast<unsigned>(index + 1), bytes);
    } catch (...) {
      failed = std::current_exception();
    }
    const std::lock_guard lock(mutex_);
    parts_.erase(index);  // its memory goes back now
    if (failed) {
      if (!failure_) failure_ = failed;
    } else {
      etags_[index] = std::move(etag);
    }
    changed_.notify_all();
  }
}

void ObjectUpload::finish() {
  std::unique_lock lock(mutex_);
  rethrow_failure();
  if (!completes_) throw RuntimeError(fmt::format("cannot complete the upload of '{}': another process does", name_));
  if (completed_) return;
  const auto count = end_ == 0 ? 1 : index_of(end_ - 1) + 1;
  if (count > kMaxParts) {
    throw RuntimeError(fmt::format("cannot write '{}': its {} bytes need more than {} parts of {} bytes", name_, end_,
                                   kMaxParts, part_size_));
  }
  for (auto it = parts_.lower_bound(count); it != parts_.end();) {  // past the end (HDF5 truncated)
    it = it->second.state == State::Filling ? parts_.erase(it) : std::next(it);
  }
  const auto planned = plan_.starts.size() - 1;
  if (count > planned && planned > 0 && size_of(planned - 1) < kMinPartBytes) {
    throw RuntimeError(fmt::format(
        "cannot write '{}': HDF5 put {} bytes after the data, where the last rank's part ({} bytes) would no longer "
        "be the object's last and is smaller than S3's smallest part",
        name_, end_ - plan_.starts.back(), size_of(planned - 1)));
  }
  if (etags_.lower_bound(count) != etags_.end()) {
    throw RuntimeError(
        fmt::format("cannot write '{}': HDF5 ended the file at byte {}, before bytes already sent", name_, end_));
  }
  send_mine(lock, count, end_);
  std::vector<std::string> etags;
  etags.reserve(count);
  for (std::uint64_t index = 0; index < count; ++index) {
    if (mine(index)) {
      etags.push_back(etags_.at(index));
    } else if (const auto it = received_.find(index); it != received_.end()) {
      etags.push_back(it->second);
    } else {
      throw RuntimeError(fmt::format("cannot complete the upload of '{}': part {}, rank {}'s, was not sent", name_,
                                     index + 1, plan_.owners[index]));
    }
  }
  complete_sent_ = true;
  lock.unlock();
  try {
    uploader_->complete(etags);
  } catch (const FileExists&) {  // refused (mode x): this upload made nothing
    const std::lock_guard again(mutex_);
    complete_sent_ = false;
    throw;
  }
  lock.lock();
  completed_ = true;
  stopping_ = true;
  changed_.notify_all();
}

void ObjectUpload::divide(const PartPlan& plan, int rank) {
  const std::lock_guard lock(mutex_);
  rethrow_failure();
  for (const auto& [index, part] : parts_) {
    if (part.raw != 0 || part.state != State::Filling) {
      throw RuntimeError(fmt::format("cannot divide the upload of '{}' into parts: bytes were written", name_));
    }
  }
  if (!etags_.empty()) throw RuntimeError(fmt::format("cannot divide the upload of '{}': parts were sent", name_));
  // The held bytes (HDF5's metadata), read out of the old parts and written into the new ones.
  auto ranges = held_ranges_;
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<std::uint64_t, std::vector<std::byte>>> held;
  for (const auto& [offset, size] : ranges) {
    if (!held.empty() && offset <= held.back().first + held.back().second.size()) {
      const auto end = std::max<std::uint64_t>(held.back().first + held.back().second.size(), offset + size);
      held.back().second.resize(end - held.back().first);
    } else {
      held.emplace_back(offset, std::vector<std::byte>(size));
    }
  }
  for (auto& [offset, bytes] : held) {
    for (std::uint64_t done = 0; done < bytes.size();) {
      const auto [index, at, n] = piece_at(offset + done, bytes.size() - done);
      std::memcpy(bytes.data() + done, parts_.at(index).bytes.get() + at, n);
      done += n;
    }
  }
  parts_.clear();
  plan_ = plan;
  rank_ = rank;
  for (const auto& [offset, bytes] : held) hold(bytes.data(), bytes.size(), offset);
}

void ObjectUpload::send_mine(std::unique_lock<std::mutex>& lock, std::uint64_t count, std::uint64_t end) {
  std::uint64_t own = 0;
  for (std::uint64_t index = 0; index < count; ++index) {
    if (!mine(index)) continue;  // another process's (add_etags)
    ++own;
    if (etags_.count(index) != 0) continue;  // sent
    if (const auto it = parts_.find(index); it != parts_.end() && it->second.state != State::Filling) continue;
    auto& part = part_to_write(index, begin_of(index));  // made here where nothing was written
    queue(index, part, std::min(size_of(index), end - std::min(end, begin_of(index))));
  }
  changed_.wait(lock, [&] { return etags_.size() == own || failure_ || aborted_; });
  rethrow_failure();
}

std::map<unsigned, std::string> ObjectUpload::flush() {
  std::unique_lock lock(mutex_);
  rethrow_failure();
  send_mine(lock, plan_.starts.size() - 1, plan_.starts.back());
  std::map<unsigned, std::string> sent;
  for (const auto& [index, etag] : etags_) sent.emplace(static_cast<unsigned>(index + 1), etag);
  return sent;
}

void ObjectUpload::add_etags(const std::map<unsigned, std::string>& etags) {
  const std::lock_guard lock(mutex_);
  for (const auto& [number, etag] : etags) received_[number - 1] = etag;
}

bool ObjectUpload::may_have_completed() noexcept {
  {
    const std::lock_guard lock(mutex_);
    if (completed_) return true;
    if (!complete_sent_) return false;
  }
  return uploader_->may_have_completed();
}

void ObjectUpload::abort() noexcept {
  bool discard = false;
  {
    const std::lock_guard lock(mutex_);
    discard = completes_ && !completed_ && !aborted_;  // a joined upload is its starter's to abort
    aborted_ = aborted_ || !completed_;
    stopping_ = true;
    queue_.clear();
    changed_.notify_all();
  }
  for (auto& t : senders_) {
    if (t.joinable()) t.join();
  }
  if (discard) uploader_->abort();  // after the senders: no part arrives after the abort
  const std::lock_guard lock(mutex_);
  parts_.clear();
}

}  // namespace h5tile::detail
