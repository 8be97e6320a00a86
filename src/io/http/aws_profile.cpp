#include "io/http/aws_profile.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <h5tile/error.hpp>

namespace h5tile::detail::s3 {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

// What a key of a profile is called among the AWS_* variables.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kKeys{{
    {"aws_access_key_id", "AWS_ACCESS_KEY_ID"},
    {"aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"},
    {"aws_session_token", "AWS_SESSION_TOKEN"},
    {"region", "AWS_REGION"},
    {"endpoint_url", "AWS_ENDPOINT_URL"},
    {"credential_process", "credential_process"},
}};

// The keys of section `wanted` of an INI text, added to `out` where it has none yet.
void read_section(std::string_view text, std::string_view file, std::string_view wanted, Environment& out) {
  bool inside = false;
  std::size_t number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view raw = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++number;
    const auto line = trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') {
        throw InvalidArgument(fmt::format("'{}', line {}: a section name without its closing ']'", file, number));
      }
      inside = trim(line.substr(1, line.size() - 2)) == wanted;
      continue;
    }
    if (!inside || std::isspace(static_cast<unsigned char>(raw.front())) != 0) continue;  // a sub-setting
    const auto equals = line.find('=');
    if (equals == std::string_view::npos) {
      throw InvalidArgument(
          fmt::format("'{}', line {}: expected 'name = value' in profile '{}'", file, number, wanted));
    }
    const auto key = trim(line.substr(0, equals));
    const auto value = trim(line.substr(equals + 1));
    for (const auto& [name, variable] : kKeys) {
      if (key == name && !value.empty()) out.emplace(std::string(variable), std::string(value));
    }
  }
}

std::string text_of(const nlohmann::json& j, const char* key, std::string_view what, bool required) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) throw InvalidArgument(fmt::format("{}: the credentials have no \"{}\"", what, key));
    return {};
  }
  if (!it->is_string()) throw InvalidArgument(fmt::format("{}: \"{}\" is not a string", what, key));
  return it->get<std::string>();
}

Environment keys_of(std::string_view json, std::string_view what, const char* token_key) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception&) {
    throw InvalidArgument(fmt::format("{}: the answer is not JSON", what));
  }
  if (!j.is_object()) throw InvalidArgument(fmt::format("{}: the answer is not a JSON object", what));
  Environment out;
  out.emplace("AWS_ACCESS_KEY_ID", text_of(j, "AccessKeyId", what, true));
  out.emplace("AWS_SECRET_ACCESS_KEY", text_of(j, "SecretAccessKey", what, true));
  if (auto token = text_of(j, token_key, what, false); !token.empty())
    out.emplace("AWS_SESSION_TOKEN", std::move(token));
  return out;
}

}  // namespace

Environment profile_values(std::string_view credentials, std::string_view credentials_name, std::string_view config,
                           std::string_view config_name, std::string_view profile) {
  Environment out;
  read_section(credentials, credentials_name, profile, out);
  read_section(config, config_name, profile == "default" ? std::string("default") : fmt::format("profile {}", profile),
               out);
  return out;
}

Environment process_credentials(std::string_view json, std::string_view what) {
  const auto out = keys_of(json, what, "SessionToken");
  const auto j = nlohmann::json::parse(json);
  if (const auto version = j.find("Version"); version == j.end() || *version != 1) {
    throw InvalidArgument(fmt::format("{}: the output must say \"Version\": 1", what));
  }
  return out;
}

Environment container_credentials(std::string_view json, std::string_view what) { return keys_of(json, what, "Token"); }

bool container_host_allowed(std::string_view uri) {
  const auto sep = uri.find("://");
  if (sep == std::string_view::npos) return false;
  std::string scheme(uri.substr(0, sep));
  std::ranges::transform(scheme, scheme.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme == "https") return true;
  if (scheme != "http") return false;
  auto host = uri.substr(sep + 3);
  host = host.substr(0, host.find_first_of("/?#"));
  if (const auto at = host.rfind('@'); at != std::string_view::npos) host = host.substr(at + 1);
  if (host.starts_with("[")) {
    host = host.substr(0, host.find(']') + 1);
  } else {
    host = host.substr(0, host.find(':'));
  }
  const bool ipv4 =
      !host.empty() && std::ranges::all_of(host, [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
  return host == "localhost" || host == "[::1]" || (ipv4 && host.starts_with("127.")) || host == "169.254.170.2" ||
         host == "169.254.170.23";
}

}  // namespace h5tile::detail::s3
