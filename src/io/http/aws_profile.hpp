#pragma once
// Where s3:// credentials come from when the AWS_* variables do not give them, as the AWS SDKs
// and command line look: the shared credentials and config files of a profile (static keys, a
// session token, region, endpoint_url, or a credential_process), then a container's credentials
// endpoint (ECS, EKS Pod Identity). The parsing is pure and tested alone; complete_credentials
// does the I/O (files, the process, the endpoint) and is built with libcurl.

#include <string>
#include <string_view>

#include "io/http/s3_dialect.hpp"

namespace h5tile::detail::s3 {

// The variables (beside the AWS_* ones s3::resolve reads) that the API edge passes in the
// Environment for these lookups.
inline constexpr std::string_view kProfileVariables[] = {"AWS_PROFILE",
                                                         "AWS_SHARED_CREDENTIALS_FILE",
                                                         "AWS_CONFIG_FILE",
                                                         "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                                                         "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                                                         "AWS_CONTAINER_AUTHORIZATION_TOKEN",
                                                         "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
                                                         "HOME"};

// The key under which `env` says where its credentials came from, for messages ("profile 'p' of
// ~/.aws/credentials"); never a credential.
inline constexpr std::string_view kCredentialsFrom = "h5tile:credentials-from";

// The values of `profile` in the text of a credentials file (sections "[name]") and of a config
// file (sections "[profile name]", and "[default]"), the credentials file winning, as AWS_*
// variables: aws_access_key_id, aws_secret_access_key, aws_session_token, region, endpoint_url
// (AWS_ENDPOINT_URL) and credential_process (under the key "credential_process"). Comments
// ('#', ';') and indented sub-settings are skipped. Throws InvalidArgument for a line it cannot
// read, naming the file and the line number (never a value).
[[nodiscard]] Environment profile_values(std::string_view credentials, std::string_view credentials_name,
                                         std::string_view config, std::string_view config_name,
                                         std::string_view profile);

// The keys in a credential_process's output ({"Version": 1, "AccessKeyId", "SecretAccessKey",
// "SessionToken"?}) or a container endpoint's answer ({"AccessKeyId", "SecretAccessKey",
// "Token"?}) as AWS_* variables; throws InvalidArgument naming `what` (never a value).
[[nodiscard]] Environment process_credentials(std::string_view json, std::string_view what);
[[nodiscard]] Environment container_credentials(std::string_view json, std::string_view what);

// Whether a container credentials URI may be asked over plain http: loopback, or the ECS and
// EKS link-local hosts (169.254.170.2, 169.254.170.23), as the AWS SDKs allow.
[[nodiscard]] bool container_host_allowed(std::string_view uri);

// `env` with what it lacks filled in from the sources above, where it does not sign anonymously
// and has no keys: a profile's keys (AWS_PROFILE, else "default"), else its credential_process,
// else the container endpoint; region and endpoint_url from the profile where `env` has none.
// Throws InvalidArgument naming the file, the profile or the variable; IoError where the process
// or the endpoint fails.
[[nodiscard]] Environment complete_credentials(const Environment& env);

}  // namespace h5tile::detail::s3
