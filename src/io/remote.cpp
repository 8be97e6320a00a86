#include "io/remote.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/http_source.hpp"
#include "io/http/url.hpp"

namespace h5tile::detail {

std::shared_ptr<const ByteSource> open_remote(std::string_view text, const RemoteOptions& options) {
  const auto url = parse_url(text);
  if (!url) {
    throw InvalidArgument(fmt::format("'{}' is not a URL h5tile can read (scheme://host/path)", redacted(text)));
  }
  // One backend, http/, for every scheme: S3 and WebHDFS are its dialects (io/http/dialect.hpp).
  return open_http(*url, options);
}

}  // namespace h5tile::detail
