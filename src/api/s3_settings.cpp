// set_s3_settings (include/h5tile/io.hpp): S3 settings for URLs, kept by io/http/s3_settings.
#include <h5tile/io.hpp>

#include "io/http/s3_settings.hpp"

namespace h5tile {

void set_s3_settings(const std::string& prefix, const std::map<std::string, std::string>& settings) {
  detail::s3::set_settings(prefix, detail::s3::Environment(settings.begin(), settings.end()));
}

}  // namespace h5tile
