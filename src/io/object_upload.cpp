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

ObjectUpload::ObjectUpload(std::unique_ptr<PartUploader> uploader, std::uint64_t part_size, unsigned streams)
    : uploader_(std::move(uploader)), name_(uploader_->name()), part_size_(part_size), streams_(std::max(1U, streams)) {
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

ObjectUpload::Part& ObjectUpload::part_to_write(std::uint64_t index, std::uint64_t offset) const {
  if (index >= kMaxParts) {
    throw RuntimeError(fmt::format("cannot write byte {} of '{}': an upload in parts of {} bytes ends at part {}",
                                   offset, name_, part_size_, kMaxParts));
  }
  const auto sent = [&] {
    return RuntimeError(fmt::format("cannot write byte {} of '{}': its part was sent already", offset, name_));
  };
  if (etags_.count(index) != 0) throw sent();
  auto [it, made] = parts_.try_emplace(index);
  if (made) {
    it->second.bytes = std::make_unique<std::byte[]>(part_size_);  // zeroed: bytes never written are 0
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
    const auto index = offset / part_size_;
    const auto at = offset - index * part_size_;
    const auto n = std::min<std::uint64_t>(size, part_size_ - at);
    std::byte* into = nullptr;
    {
      const std::lock_guard lock(mutex_);
      rethrow_failure();
      into = part_to_write(index, offset).bytes.get() + at;
      end_ = std::max(end_, offset + n);
    }
    // Outside the lock: the part stays until all its bytes, these among them, are counted.
    std::memcpy(into, in, n);
    {
      std::unique_lock lock(mutex_);
      auto& part = parts_.at(index);
      part.raw += n;
      if (part.raw == part_size_ && !part.held) {
        queue(index, part, part_size_);
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
  const auto* in = static_cast<const std::byte*>(buffer);
  const std::lock_guard lock(mutex_);
  if (aborted_) return;  // HDF5 closing a file whose write failed: its metadata goes nowhere
  while (size > 0) {
    const auto index = offset / part_size_;
    const auto at = offset - index * part_size_;
    const auto n = std::min<std::uint64_t>(size, part_size_ - at);
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
    const auto index = offset / part_size_;
    const auto at = offset - index * part_size_;
    const auto n = std::min<std::uint64_t>(size, part_size_ - at);
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
  if (completed_) return;
  const auto count = std::max<std::uint64_t>(1, (end_ + part_size_ - 1) / part_size_);
  if (count > kMaxParts) {
    throw RuntimeError(fmt::format("cannot write '{}': its {} bytes need more than {} parts of {} bytes", name_, end_,
                                   kMaxParts, part_size_));
  }
  for (auto it = parts_.lower_bound(count); it != parts_.end();) {  // past the end (HDF5 truncated)
    it = it->second.state == State::Filling ? parts_.erase(it) : std::next(it);
  }
  for (std::uint64_t index = 0; index < count; ++index) {
    if (etags_.count(index) != 0) continue;  // sent
    if (const auto it = parts_.find(index); it != parts_.end() && it->second.state != State::Filling) continue;
    auto& part = part_to_write(index, index * part_size_);  // made here where nothing was written
    queue(index, part, std::min(part_size_, end_ - std::min(end_, index * part_size_)));
  }
  if (etags_.lower_bound(count) != etags_.end()) {
    throw RuntimeError(
        fmt::format("cannot write '{}': HDF5 ended the file at byte {}, before bytes already sent", name_, end_));
  }
  changed_.wait(lock, [&] { return etags_.size() == count || failure_ || aborted_; });
  rethrow_failure();
  std::vector<std::string> etags;
  etags.reserve(count);
  for (std::uint64_t index = 0; index < count; ++index) etags.push_back(etags_.at(index));
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
    discard = !completed_ && !aborted_;
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
