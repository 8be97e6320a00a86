// open_http in a build without libcurl: a URL is a clear error.
#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/aws_profile.hpp"
#include "io/http/http_source.hpp"
#include "io/http/s3_upload.hpp"

namespace h5tile::detail {

// No S3 requests without libcurl: nothing to complete.
s3::Environment s3::complete_credentials(const Environment& env) { return env; }

std::shared_ptr<const ByteSource> open_http(const Url& url, const RemoteOptions& /*options*/) {
  throw RuntimeError(
      fmt::format("cannot read '{}': this build of h5tile has no remote reads (libcurl was not "
                  "found when it was built)",
                  redacted(url)));
}

std::unique_ptr<PartUploader> start_s3_upload(std::string_view url, const RemoteOptions& /*options*/,
                                              bool /*exclusive*/) {
  throw RuntimeError(
      fmt::format("cannot write '{}': this build of h5tile has no remote writes (libcurl was not found when it was "
                  "built)",
                  redacted(url)));
}

std::unique_ptr<PartUploader> join_s3_upload(std::string_view url, const RemoteOptions& options,
                                             std::string /*upload_id*/) {
  return start_s3_upload(url, options, false);  // throws: no remote writes
}

void delete_s3_object(std::string_view url, const RemoteOptions& options) {
  (void)start_s3_upload(url, options, false);  // throws: no remote writes
}

std::vector<PendingS3Upload> list_s3_uploads(std::string_view url, const RemoteOptions& options) {
  (void)start_s3_upload(url, options, false);  // throws: no remote writes
  return {};
}

void abort_s3_upload(std::string_view url, std::string_view /*upload_id*/, const RemoteOptions& options) {
  (void)start_s3_upload(url, options, false);  // throws: no remote writes
}

std::vector<std::string> list_s3_objects(std::string_view url, const RemoteOptions& options) {
  (void)start_s3_upload(url, options, false);  // throws: no remote writes
  return {};
}

}  // namespace h5tile::detail
