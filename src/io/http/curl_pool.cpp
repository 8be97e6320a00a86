#include "io/http/curl_pool.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <mutex>
#include <random>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

// An attempt slower than this over a window of remote_timeout seconds is given up (and retried
// within the request's budget). The first byte must come within the same window.
constexpr long kMinBytesPerSecond = 1024;
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

void set_transport(CURL* h, const RemoteOptions& options, double remaining_s, const std::string& aws_sigv4,
                   const std::string& userpwd, char* error) {
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
#if LIBCURL_VERSION_NUM >= 0x074b00
  curl_easy_setopt(h, CURLOPT_AWS_SIGV4, aws_sigv4.empty() ? nullptr : aws_sigv4.c_str());
#endif
  curl_easy_setopt(h, CURLOPT_USERPWD, userpwd.empty() ? nullptr : userpwd.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::ceil(options.timeout_s * 1000)));
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, kMinBytesPerSecond);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, std::max(1L, static_cast<long>(std::ceil(options.timeout_s))));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, std::max(1L, static_cast<long>(std::ceil(remaining_s * 1000))));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  if (!options.ca_bundle.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options.ca_bundle.c_str());
}

void clear_transport(CURL* h) {
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(h, CURLOPT_USERPWD, nullptr);  // the secret is not kept in a pooled handle
}

RemoteOptions s3_transport(RemoteOptions options) {
  if (const auto it = options.aws.find("AWS_CA_BUNDLE"); it != options.aws.end()) options.ca_bundle = it->second;
  return options;
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) noexcept {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

std::string header_value(std::string_view line, std::size_t name_length) {
  auto v = line.substr(name_length);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  return std::string(v);
}

double uniform() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
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
