// KeptOpen (include/h5tile/io.hpp): one open of a URL shared by the calls made while it lives.
#include <h5tile/io.hpp>

#include "api/resolve.hpp"
#include "hdf5/file.hpp"
#include "io/location.hpp"

namespace h5tile {

KeptOpen::KeptOpen(const std::filesystem::path& path) : path_(path) {
  const auto location = detail::Location::of(path);
  if (!location.remote()) return;
  detail::keep_remote_open(location, detail::remote_options());
  kept_ = true;
}

KeptOpen::~KeptOpen() {
  if (kept_) detail::release_remote_open(detail::Location::of(path_));
}

}  // namespace h5tile
