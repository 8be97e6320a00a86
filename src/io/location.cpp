#include "io/location.hpp"

#include <utility>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/url.hpp"

namespace h5tile::detail {

Location Location::of(std::filesystem::path given, Use use) {
  if (const auto scheme = unsupported_scheme(given.native())) {
    if (use == Use::Write) {
      throw InvalidArgument(fmt::format("cannot write '{}': h5tile does not write '{}://' URLs; it writes local paths",
                                        given.string(), *scheme));
    }
    throw InvalidArgument(fmt::format("cannot open '{}': h5tile does not read '{}://' URLs; it reads {}",
                                      given.string(), *scheme, kSupportedSchemes));
  }
  const bool remote = is_url(given.native());
  return {std::move(given), remote};
}

Location Location::local(std::filesystem::path path) noexcept { return {std::move(path), false}; }

std::string Location::shown() const { return remote_ ? redacted(path_.native()) : path_.string(); }

}  // namespace h5tile::detail
