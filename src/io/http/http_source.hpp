#pragma once
// The HTTP(S) backend of ByteSource, on libcurl: ranged GETs over a pool of keep-alive
// connections that the workers share, every response checked (http_policy.hpp), failures worth
// it retried with backoff. Built only with libcurl (H5TILE_WITH_CURL); without it open_http
// throws.

#include <memory>

#include "io/byte_source.hpp"
#include "io/http/url.hpp"
#include "io/remote_options.hpp"

namespace h5tile::detail {

// Opens `url` (http or https): see open_remote (io/remote.hpp).
[[nodiscard]] std::shared_ptr<const ByteSource> open_http(const Url& url, const RemoteOptions& options);

}  // namespace h5tile::detail
