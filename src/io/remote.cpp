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
  if (url->scheme == "http" || url->scheme == "https") {
    return open_http(*url, options);
  }
  throw InvalidArgument(fmt::format("cannot read '{}': {}:// URLs are not supported yet (http:// and https:// are)",
                                    redacted(*url), url->scheme));
}

}  // namespace h5tile::detail
