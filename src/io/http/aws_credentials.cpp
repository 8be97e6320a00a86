// s3::complete_credentials: the I/O of io/http/aws_profile.hpp (the profile's files, its
// credential_process, a container's credentials endpoint over libcurl).
#include <curl/curl.h>

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/aws_profile.hpp"

namespace h5tile::detail::s3 {
namespace {

constexpr std::size_t kMaxAnswer = std::size_t{1} << 20;  // credentials are a few hundred bytes
constexpr long kEndpointTimeoutMs = 5000;

std::string_view get(const Environment& env, std::string_view name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string_view{} : std::string_view{it->second};
}

// The text of a file, or "" where it does not exist (a profile's files are optional).
std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string run_process(const std::string& command, std::string_view what) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    const int err = errno;
    throw IoError(fmt::format("{}: cannot run it", what), err);
  }
  std::string out;
  char buffer[4096];
  while (out.size() < kMaxAnswer) {
    const auto n = std::fread(buffer, 1, sizeof buffer, pipe);
    if (n == 0) break;
    out.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw IoError(fmt::format("{}: it failed (exit status {})", what, WIFEXITED(status) ? WEXITSTATUS(status) : -1),
                  EIO);
  }
  return out;
}

std::size_t collect(char* data, std::size_t size, std::size_t count, void* user) {
  auto& out = *static_cast<std::string*>(user);
  if (out.size() + size * count > kMaxAnswer) return 0;
  out.append(data, size * count);
  return size * count;
}

std::string fetch(const std::string& uri, const std::string& authorization, std::string_view what) {
  CURL* h = curl_easy_init();
  if (h == nullptr) throw RuntimeError(fmt::format("{}: curl_easy_init failed", what));
  std::string body;
  curl_slist* headers = nullptr;
  if (!authorization.empty()) headers = curl_slist_append(headers, ("Authorization: " + authorization).c_str());
  curl_easy_setopt(h, CURLOPT_URL, uri.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, kEndpointTimeoutMs);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
  const CURLcode code = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  if (code != CURLE_OK) throw IoError(fmt::format("{}: {}", what, curl_easy_strerror(code)), EIO);
  if (status != 200) throw IoError(fmt::format("{}: HTTP {}", what, status), status == 403 ? EACCES : EIO);
  return body;
}

bool holds_keys(const Environment& env) {
  return !get(env, "AWS_ACCESS_KEY_ID").empty() || !get(env, "AWS_SECRET_ACCESS_KEY").empty();
}

bool anonymous(const Environment& env) {
  std::string v(get(env, "AWS_NO_SIGN_REQUEST"));
  for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v == "yes" || v == "true" || v == "1";
}

// The container endpoint's keys, where AWS_CONTAINER_CREDENTIALS_* name one.
Environment from_container(const Environment& env) {
  std::string uri;
  if (const auto full = get(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI"); !full.empty()) {
    uri = full;
  } else if (const auto relative = get(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); !relative.empty()) {
    uri = fmt::format("http://169.254.170.2{}", relative);
  } else {
    return {};
  }
  const auto what = fmt::format("the container credentials endpoint '{}'", uri);
  if (!container_host_allowed(uri)) {
    throw InvalidArgument(
        fmt::format("{}: AWS_CONTAINER_CREDENTIALS_FULL_URI must be https://, or http:// to a "
                    "loopback address or the ECS/EKS host (169.254.170.2, 169.254.170.23)",
                    what));
  }
  std::string token(get(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN"));
  if (const auto file = get(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); !file.empty()) {
    token = file_text(std::string(file));
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  }
  if (std::ranges::any_of(token, [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    throw InvalidArgument(fmt::format("{}: its authorization token holds a control character", what));
  }
  auto keys = container_credentials(fetch(uri, token, what), what);
  keys.emplace(std::string(kCredentialsFrom), what);
  return keys;
}

}  // namespace

Environment complete_credentials(const Environment& env) {
  if (anonymous(env)) return env;
  const std::string home(get(env, "HOME"));
  const std::string credentials_file = !get(env, "AWS_SHARED_CREDENTIALS_FILE").empty()
                                           ? std::string(get(env, "AWS_SHARED_CREDENTIALS_FILE"))
                                           : (home.empty() ? std::string() : home + "/.aws/credentials");
  const std::string config_file = !get(env, "AWS_CONFIG_FILE").empty()
                                      ? std::string(get(env, "AWS_CONFIG_FILE"))
                                      : (home.empty() ? std::string() : home + "/.aws/config");
  const std::string profile = get(env, "AWS_PROFILE").empty() ? "default" : std::string(get(env, "AWS_PROFILE"));
  const auto values =
      profile_values(credentials_file.empty() ? std::string() : file_text(credentials_file), credentials_file,
                     config_file.empty() ? std::string() : file_text(config_file), config_file, profile);
  Environment out = env;
  // The region and endpoint of the profile where the variables give none.
  if (get(env, "AWS_REGION").empty() && get(env, "AWS_DEFAULT_REGION").empty()) {
    if (const auto region = get(values, "AWS_REGION"); !region.empty()) out["AWS_REGION"] = region;
  }
  if (get(env, "AWS_ENDPOINT_URL").empty() && get(env, "AWS_ENDPOINT_URL_S3").empty()) {
    if (const auto endpoint = get(values, "AWS_ENDPOINT_URL"); !endpoint.empty()) out["AWS_ENDPOINT_URL"] = endpoint;
  }
  if (holds_keys(env)) return out;
  const auto where = fmt::format("profile '{}' of '{}'", profile, credentials_file);
  if (!get(values, "AWS_ACCESS_KEY_ID").empty() || !get(values, "AWS_SECRET_ACCESS_KEY").empty()) {
    for (const char* key : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}) {
      if (const auto v = get(values, key); !v.empty()) out[key] = v;
    }
    out[std::string(kCredentialsFrom)] = where;
    return out;
  }
  if (const auto command = get(values, "credential_process"); !command.empty()) {
    const auto what = fmt::format("the credential_process of profile '{}' in '{}'", profile, config_file);
    for (auto& [key, value] : process_credentials(run_process(std::string(command), what), what)) out[key] = value;
    out[std::string(kCredentialsFrom)] = what;
    return out;
  }
  if (!get(env, "AWS_PROFILE").empty() && values.empty()) {
    throw InvalidArgument(fmt::format("AWS_PROFILE names profile '{}', which neither '{}' nor '{}' holds", profile,
                                      credentials_file, config_file));
  }
  for (auto& [key, value] : from_container(env)) out[key] = value;
  return out;
}

}  // namespace h5tile::detail::s3
