#pragma once
// S3 settings given for URLs (h5tile.File(url, storage_options=...), set_s3_settings): the AWS
// variables of the environment, replaced for the objects under a prefix where an s3:// URL opens.

#include <string>
#include <string_view>

#include "io/http/s3_dialect.hpp"

namespace h5tile::detail::s3 {

// Keeps `settings` for the s3:// URLs under `prefix` where it ends with '/' (s3://bucket/dir/),
// else for the URL `prefix` alone (s3://bucket/key, as messages show URLs); an empty map forgets
// the prefix. InvalidArgument (naming it) for a prefix that is
// not an s3:// URL or a name that is not one of kSettingNames.
void set_settings(const std::string& prefix, const Environment& settings);

// `environment` with the settings of the longest prefix covering `url` laid over it: each value replaces
// the environment's, an empty value removes it. `environment` itself where no prefix matches.
[[nodiscard]] Environment with_settings(std::string_view url, Environment environment);

// The variables set_settings takes: those the S3 dialect and its credential chain read.
inline constexpr std::string_view kSettingNames[] = {
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",   "AWS_REGION",  "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",  "AWS_ENDPOINT_URL_S3",   "AWS_NO_SIGN_REQUEST", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE"};

}  // namespace h5tile::detail::s3
