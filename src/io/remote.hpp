#pragma once
// Opening a URL as a byte source: the scheme picks the backend (http/: http, https, and s3,
// webhdfs and swebhdfs as its dialects).

#include <memory>
#include <string_view>

#include "io/byte_source.hpp"
#include "io/object_upload.hpp"
#include "io/remote_options.hpp"

namespace h5tile::detail {

// Opens the object at `url` for reading: one request that learns its size and version (ETag,
// Last-Modified) and fetches its first `options.block_size` bytes (WebHDFS: GETFILESTATUS, then
// the first block). Throws FileNotFound (404),
// IoError (EACCES for 401/403; EIO, EPROTO: the URL named without its query string),
// InvalidArgument (a malformed URL, an s3:// URL without credentials or with bad AWS_* settings), RuntimeError (a build
// without libcurl).
// A "python://" URL names a source registered with register_source (a Python file-like object,
// python/src/file_objects.cpp); FileNotFound once it is unregistered.
[[nodiscard]] std::shared_ptr<const ByteSource> open_remote(std::string_view url, const RemoteOptions& options);

// Starts writing the object at `url` (s3:// only: HTTP(S) and WebHDFS have no standard multipart
// upload, an InvalidArgument that says so) as an upload of at most about `expected_bytes` bytes,
// in parts of 8 MiB or more, `options.connections` of them sent at once. With `exclusive`, an
// object already there is a FileExists error. Throws as open_remote does.
[[nodiscard]] std::shared_ptr<ObjectUpload> start_upload(std::string_view url, const RemoteOptions& options,
                                                         bool exclusive, std::uint64_t expected_bytes);
// Joins upload `upload_id` of `url`, which another process started with start_upload and the same
// `expected_bytes` (the same part size): ObjectUpload's joined form (it sends the parts divide()
// gives it, and never completes the upload). Throws as start_upload does.
[[nodiscard]] std::shared_ptr<ObjectUpload> join_upload(std::string_view url, const RemoteOptions& options,
                                                        std::string upload_id, std::uint64_t expected_bytes);
// Deletes the object `url` (s3://), or nothing where it is not there. Throws as start_upload does.
void delete_object(std::string_view url, const RemoteOptions& options);
// Deletes every object whose key starts with the key of `url` (s3://bucket/prefix/): listed, then
// deleted one by one. Throws as start_upload does (a refusal to list included).
void delete_objects_under(std::string_view url, const RemoteOptions& options);

// Makes `source` what open_remote gives for `url` ("python://<id>/<name>"), until
// unregister_source(url). InvalidArgument where `url` is not of that scheme or is taken.
void register_source(const std::string& url, std::shared_ptr<const ByteSource> source);
void unregister_source(const std::string& url);

}  // namespace h5tile::detail
