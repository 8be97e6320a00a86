#include "hdf5/links.hpp"

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {

GuardedLinks::GuardedLinks(ExternalLinkCheck link_check) : check_(std::move(link_check)) {
  const Hdf5Lock lock;
  lapl_ = PlistHandle(check(H5Pcreate(H5P_LINK_ACCESS), "H5Pcreate(link access)"));
  check(H5Pset_elink_cb(lapl_.get(), &GuardedLinks::callback, this), "H5Pset_elink_cb");
}

herr_t GuardedLinks::callback(const char* parent_file, const char* parent_group, const char* file, const char* object,
                              unsigned* /*flags*/, hid_t /*fapl*/, void* self) noexcept {
  auto& guard = *static_cast<GuardedLinks*>(self);
  try {
    const ExternalLink link{parent_file != nullptr ? parent_file : "", parent_group != nullptr ? parent_group : "",
                            file != nullptr ? file : "", object != nullptr ? object : ""};
    if (!guard.check_) {
      throw VirtualSourceError(fmt::format("an external link in '{}' of '{}' (to '{}' in '{}') is not followed here",
                                           link.group, link.parent_file, link.object, link.file));
    }
    guard.check_(link);
    return 0;
  } catch (...) {
    if (!guard.refused_) guard.refused_ = std::current_exception();
    return -1;  // HDF5 fails the traversal without opening the target
  }
}

void GuardedLinks::rethrow_refusal() const {
  if (refused_) {
    H5Eclear2(H5E_DEFAULT);
    std::rethrow_exception(std::exchange(refused_, nullptr));
  }
}

}  // namespace h5tile::detail
