#pragma once
// What every libcurl request of the process shares: libcurl's global start, one cache of
// connections (with DNS answers and TLS sessions), and the easy handles not in use. The byte
// source's reads (http_source.cpp) and the uploads (s3_upload.cpp) take their handles here, so
// that they reuse each other's keep-alive connections. Built only with libcurl.

#include <curl/curl.h>

#include <memory>
#include <string>
#include <string_view>

#include "io/remote_options.hpp"

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

// What every request sets alike on its handle `h`: http(s) only; signed with SigV4 where
// `aws_sigv4` is given (with `userpwd`, which holds the secret: clear_transport takes it off);
// `options`' connect timeout, and given up when slower than 1 KiB/s over that long (a server
// trickling bytes would otherwise hold a request for hours) or after `remaining_s` in all; TCP
// keep-alive; TLS verified against `options.ca_bundle` (libcurl's store where empty); libcurl's
// error text into `error` (CURL_ERROR_SIZE bytes).
void set_transport(CURL* h, const RemoteOptions& options, double remaining_s, const std::string& aws_sigv4,
                   const std::string& userpwd, char* error);
// After the request: takes off `h` what must not stay in a pooled handle or outlive the request
// (the header list, the error buffer, the secret).
void clear_transport(CURL* h);

// `options` for requests to S3, whose clients take their CA bundle from AWS_CA_BUNDLE.
[[nodiscard]] RemoteOptions s3_transport(RemoteOptions options);

// Whether a header line starts with `prefix` (lower case, with its ':'), in any case.
[[nodiscard]] bool starts_with_nocase(std::string_view text, std::string_view prefix) noexcept;
// The value of a header line whose name (with its ':') is `name_length` long, trimmed.
[[nodiscard]] std::string header_value(std::string_view line, std::size_t name_length);
// A random number in [0, 1), for the jitter of retries.
[[nodiscard]] double uniform();

}  // namespace h5tile::detail
