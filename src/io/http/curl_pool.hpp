#pragma once
// What every libcurl request of the process shares: libcurl's global start, one cache of
// connections (with DNS answers and TLS sessions), and the easy handles not in use. The byte
// source's reads (http_source.cpp) and the uploads (s3_upload.cpp) take their handles here, so
// that they reuse each other's keep-alive connections. Built only with libcurl.

#include <curl/curl.h>

#include <memory>

namespace h5tile::detail {

// Starts libcurl once for the process; throws RuntimeError where it cannot.
void global_init();

struct CurlDeleter {
  void operator()(CURL* handle) const noexcept { curl_easy_cleanup(handle); }
};
using CurlHandle = std::unique_ptr<CURL, CurlDeleter>;

// A handle for one request: an idle one (reset: no option of an earlier request is kept) or a
// new one, on the shared cache of connections, which keeps at least `connections` idle ones.
// Throws RuntimeError naming `what` where libcurl cannot make one.
[[nodiscard]] CurlHandle take_handle(unsigned connections, const char* what);
// Gives a handle back after its request, for the next (its connection stays in the cache). A
// handle whose request failed is dropped instead: its connection may be in any state.
void give_handle(CurlHandle handle) noexcept;

// Transport failures worth another try: the server or the network may do better next time.
[[nodiscard]] bool retryable(CURLcode code) noexcept;

}  // namespace h5tile::detail
