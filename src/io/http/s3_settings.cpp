#include "io/http/s3_settings.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/url.hpp"

namespace h5tile::detail::s3 {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, Environment, std::less<>> by_prefix;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void set_settings(const std::string& given, const Environment& settings) {
  const auto url = detail::parse_url(given);
  if (!url || url->scheme != "s3") {
    throw InvalidArgument(
        fmt::format("S3 settings are given for s3:// URLs (s3://bucket/key), not for '{}'", redacted(given)));
  }
  // As the S3 dialect names the object (user information left out; a key's '?' and '#' kept).
  const auto prefix = object_url(*url);
  for (const auto& [name, value] : settings) {
    if (std::find(std::begin(kSettingNames), std::end(kSettingNames), name) == std::end(kSettingNames)) {
      throw InvalidArgument(
          fmt::format("'{}' is not an S3 setting h5tile takes (one of {})", name, fmt::join(kSettingNames, ", ")));
    }
  }
  auto& r = registry();
  const std::lock_guard lock(r.mutex);
  if (settings.empty()) {
    r.by_prefix.erase(prefix);
  } else {
    r.by_prefix.insert_or_assign(prefix, settings);
  }
}

Environment with_settings(std::string_view url, Environment environment) {
  auto& r = registry();
  const std::lock_guard lock(r.mutex);
  const Environment* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& [prefix, settings] : r.by_prefix) {
    // "s3://bucket/dir/" covers the objects under it; "s3://bucket/key" that object only (not
    // "s3://bucket/key2").
    const bool covers = prefix.ends_with('/') ? url.starts_with(prefix) : url == prefix;
    if (covers && prefix.size() >= best_length) {
      best = &settings;
      best_length = prefix.size();
    }
  }
  if (best == nullptr) return environment;
  for (const auto& [name, value] : *best) {
    if (value.empty()) {
      environment.erase(name);
    } else {
      environment.insert_or_assign(name, value);
    }
  }
  return environment;
}

}  // namespace h5tile::detail::s3
