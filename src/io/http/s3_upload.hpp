#pragma once
// S3's multipart upload as a PartUploader (io/object_upload.hpp): CreateMultipartUpload,
// UploadPart, CompleteMultipartUpload and AbortMultipartUpload of one object, signed and resolved
// as the reads' requests are (io/http/s3_dialect.hpp: the AWS_* variables, the settings given
// for the URL, profiles), over the process's keep-alive connections (curl_pool.hpp), failures
// worth it retried with backoff (http_policy.hpp). Built only with libcurl.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/object_upload.hpp"
#include "io/remote_options.hpp"

namespace h5tile::detail {

// Starts a multipart upload of `url` (s3://bucket/key). With `exclusive`, an object already there
// is a FileExists error, now (HeadObject) and at the commit (If-None-Match: *, where the server
// honours it), so that the upload never replaces one. Throws FileExists, IoError (EACCES for a
// refusal, EIO once retries are spent), InvalidArgument for a URL or settings S3 cannot take.
[[nodiscard]] std::unique_ptr<PartUploader> start_s3_upload(std::string_view url, const RemoteOptions& options,
                                                            bool exclusive);

// Joins upload `upload_id` of `url` that another process started: its parts are sent by the
// returned uploader, which never completes nor aborts it (the starter does). Throws as
// start_s3_upload does, without a request.
[[nodiscard]] std::unique_ptr<PartUploader> join_s3_upload(std::string_view url, const RemoteOptions& options,
                                                           std::string upload_id);

// Deletes the object `url` (s3://bucket/key), one that is not there included (DeleteObject),
// signed and retried as the uploads are. Throws IoError once retries are spent or where refused.
void delete_s3_object(std::string_view url, const RemoteOptions& options);

// An unfinished multipart upload: the object's URL, its upload id, when it began (ISO 8601).
struct PendingS3Upload {
  std::string url;
  std::string upload_id;
  std::string initiated;
};
// The unfinished multipart uploads of the objects whose keys start with the key of `url`
// (s3://bucket/prefix; s3://bucket/ for all), every page (ListMultipartUploads).
[[nodiscard]] std::vector<PendingS3Upload> list_s3_uploads(std::string_view url, const RemoteOptions& options);
// Aborts upload `upload_id` of the object `url`: its parts are discarded (one already gone too).
void abort_s3_upload(std::string_view url, std::string_view upload_id, const RemoteOptions& options);

// The objects whose keys start with the key of `url` (s3://bucket/prefix), as s3:// URLs
// (ListObjectsV2, every page). Throws as delete_s3_object does.
[[nodiscard]] std::vector<std::string> list_s3_objects(std::string_view url, const RemoteOptions& options);

}  // namespace h5tile::detail
