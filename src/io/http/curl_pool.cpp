#include "io/http/curl_pool.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

// One cache of connections (and of DNS answers and TLS sessions) for the whole process: the many
// objects of one server that a read opens (a remote virtual dataset's tiles) share keep-alive
// connections, instead of each object's idle handles keeping connections (and descriptors) of
// their own. Its size is CURLOPT_MAXCONNECTS of the handles (kMaxCachedConnections).
class SharedConnections {
 public:
  SharedConnections() : share_(curl_share_init()) {
    if (share_ == nullptr) return;  // then every handle keeps its own cache, as without sharing
    curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, lock);
    curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, unlock);
    curl_share_setopt(share_, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  SharedConnections(const SharedConnections&) = delete;
  SharedConnections& operator=(const SharedConnections&) = delete;
  ~SharedConnections() = default;  // kept until exit: handles may still use it from other statics

  [[nodiscard]] CURLSH* get() const noexcept { return share_; }

 private:
  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
    static_cast<SharedConnections*>(self)->mutexes_.at(static_cast<std::size_t>(data)).lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* self) {
    static_cast<SharedConnections*>(self)->mutexes_.at(static_cast<std::size_t>(data)).unlock();
  }

  CURLSH* share_;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> mutexes_{};
};

// The most idle connections the shared cache keeps open (the oldest is closed beyond it).
constexpr long kMaxCachedConnections = 32;

CURLSH* shared_connections() {
  static auto* shared = new SharedConnections();  // never destroyed: see ~SharedConnections
  return shared->get();
}

// Easy handles not in use, for requests to any object. Pooled for the process, not per object:
// each handle keeps a socket pair of its own (the wake-up of libcurl's multi handle inside
// curl_easy_perform), so a handle kept idle by each of thousands of objects held open (a remote
// virtual dataset's tiles) would cost thousands of descriptors.
class IdleHandles {
 public:
  CurlHandle take() {
    const std::lock_guard lock(mutex_);
    if (idle_.empty()) return {};
    auto h = std::move(idle_.back());
    idle_.pop_back();
    return h;
  }
  void give(CurlHandle handle) noexcept {
    const std::lock_guard lock(mutex_);
    if (idle_.size() < static_cast<std::size_t>(kMaxCachedConnections)) {
      try {
        idle_.push_back(std::move(handle));
      } catch (...) {  // no memory for one more pointer: the handle is freed instead
      }
    }
  }

 private:
  std::mutex mutex_;
  std::vector<CurlHandle> idle_;
};

IdleHandles& idle_handles() {
  static auto* pool = new IdleHandles();  // never destroyed, as the shared connections
  return *pool;
}

}  // namespace

void global_init() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK) {
    throw RuntimeError(fmt::format("cannot start libcurl: {}", curl_easy_strerror(code)));
  }
}

CurlHandle take_handle(unsigned connections, const char* what) {
  global_init();
  CurlHandle h = idle_handles().take();
  if (h) {
    curl_easy_reset(h.get());  // keeps its caches; the connections are in the shared cache
  } else {
    h.reset(curl_easy_init());
    if (!h) {
      throw RuntimeError(fmt::format("{}: curl_easy_init failed", what));
    }
  }
  if (CURLSH* share = shared_connections(); share != nullptr) {
    curl_easy_setopt(h.get(), CURLOPT_SHARE, share);
    curl_easy_setopt(h.get(), CURLOPT_MAXCONNECTS, std::max<long>(kMaxCachedConnections, connections));
  }
  return h;
}

void give_handle(CurlHandle handle) noexcept {
  if (handle) idle_handles().give(std::move(handle));
}

bool retryable(CURLcode code) noexcept {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
  }
}

}  // namespace h5tile::detail
