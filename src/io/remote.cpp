#include "io/remote.hpp"

#include <map>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "io/http/http_source.hpp"
#include "io/http/s3_upload.hpp"
#include "io/http/url.hpp"

namespace h5tile::detail {

namespace {

std::mutex registered_mutex;
std::map<std::string, std::shared_ptr<const ByteSource>, std::less<>>& registered() {
  static std::map<std::string, std::shared_ptr<const ByteSource>, std::less<>> sources;
  return sources;
}

}  // namespace

void register_source(const std::string& url, std::shared_ptr<const ByteSource> source) {
  const auto parsed = parse_url(url);
  if (!parsed || parsed->scheme != "python") {
    throw InvalidArgument(fmt::format("'{}' is not a python:// name to register a byte source by", url));
  }
  const std::lock_guard lock(registered_mutex);
  if (!registered().emplace(url, std::move(source)).second) {
    throw InvalidArgument(fmt::format("'{}' is registered already", url));
  }
}

void unregister_source(const std::string& url) {
  const std::lock_guard lock(registered_mutex);
  registered().erase(url);
}

std::shared_ptr<const ByteSource> open_remote(std::string_view text, const RemoteOptions& options) {
  const auto url = parse_url(text);
  if (!url) {
    throw InvalidArgument(fmt::format("'{}' is not a URL h5tile can read (scheme://host/path)", redacted(text)));
  }
  if (url->scheme == "python") {  // a file-like object's bytes, registered by the Python package
    const std::lock_guard lock(registered_mutex);
    if (const auto found = registered().find(text); found != registered().end()) return found->second;
    throw FileNotFound(fmt::format("'{}' is no open file object (its h5tile.File was closed)", text));
  }
  // One backend, http/, for every scheme: S3 and WebHDFS are its dialects (io/http/dialect.hpp).
  return open_http(*url, options);
}

namespace {

void check_upload_url(std::string_view text) {
  const auto url = parse_url(text);
  if (!url || url->scheme != "s3") {
    throw InvalidArgument(
        fmt::format("cannot write '{}': remote writes go to s3:// URLs only (HTTP(S) and WebHDFS have no "
                    "standard multipart upload); write a local file or an s3:// object",
                    redacted(text)));
  }
}

std::shared_ptr<ObjectUpload> upload_of(std::unique_ptr<PartUploader> uploader, const RemoteOptions& options,
                                        std::uint64_t expected_bytes, bool completes) {
  // boto3's default part size: large enough that a request's cost is small beside its bytes, small
  // enough that the parts in flight (2 x connections) stay a few hundred MiB.
  constexpr std::uint64_t kPreferredPartBytes = std::uint64_t{8} << 20;
  auto upload = std::make_shared<ObjectUpload>(std::move(uploader), part_size_for(expected_bytes, kPreferredPartBytes),
                                               options.connections, completes);
  // A small object (a tile; a write's estimate holds 64 MiB for HDF5's metadata) gets small
  // metadata blocks: each is stored whole.
  if (expected_bytes < (std::uint64_t{128} << 20)) upload->set_meta_block_bytes(std::uint64_t{64} << 10);
  return upload;
}

}  // namespace

std::shared_ptr<ObjectUpload> start_upload(std::string_view text, const RemoteOptions& options, bool exclusive,
                                           std::uint64_t expected_bytes) {
  check_upload_url(text);
  return upload_of(start_s3_upload(text, options, exclusive), options, expected_bytes, true);
}

std::shared_ptr<ObjectUpload> join_upload(std::string_view text, const RemoteOptions& options, std::string upload_id,
                                          std::uint64_t expected_bytes) {
  check_upload_url(text);
  return upload_of(join_s3_upload(text, options, std::move(upload_id)), options, expected_bytes, false);
}

void delete_object(std::string_view url, const RemoteOptions& options) { delete_s3_object(url, options); }

void delete_objects_under(std::string_view url, const RemoteOptions& options) {
  for (const auto& object : list_s3_objects(url, options)) delete_s3_object(object, options);
}

}  // namespace h5tile::detail
