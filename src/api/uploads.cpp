// pending_uploads and abort_upload (include/h5tile/io.hpp): the unfinished S3 multipart uploads
// a killed writer leaves, listed and aborted with the reads' credentials and settings.
#include "api/resolve.hpp"
#include "io/http/s3_upload.hpp"

#include <h5tile/io.hpp>

namespace h5tile {

std::vector<PendingUpload> pending_uploads(const std::string& prefix) {
  std::vector<PendingUpload> out;
  for (auto& found : detail::list_s3_uploads(prefix, detail::remote_options())) {
    out.push_back({std::move(found.url), std::move(found.upload_id), std::move(found.initiated)});
  }
  return out;
}

void abort_upload(const PendingUpload& upload) {
  detail::abort_s3_upload(upload.url, upload.upload_id, detail::remote_options());
}

}  // namespace h5tile
