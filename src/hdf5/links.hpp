#pragma once
// External links followed only after a check: HDF5 opens an external link's target file while it
// walks a path (H5Lexists, H5Oopen, H5Dopen), so a target is checked in HDF5's own external-link
// callback (H5Pset_elink_cb), which HDF5 calls before it opens the target, for every external link
// on the way (in the target file too, and behind soft links).

#include <exception>
#include <functional>
#include <string>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// An external link that HDF5 is about to follow.
struct ExternalLink {
  std::string parent_file;  // the file holding the link, as HDF5 opened it
  std::string group;        // the group holding the link, in that file
  std::string file;         // the target file's name as stored in the link
  std::string object;       // the target object's path in that file
};

// Throws (an h5tile::Error saying why) where a link must not be followed.
using ExternalLinkCheck = std::function<void(const ExternalLink&)>;

// A link access property list whose external-link callback runs a check first: where the check
// throws, HDF5 is told to fail the traversal (it opens nothing) and the error is kept for
// rethrow(). For one thread at a time (the HDF5 calls it is given to are serialised anyway).
class GuardedLinks {
 public:
  // An empty `check` refuses every external link (the target is not opened).
  explicit GuardedLinks(ExternalLinkCheck link_check);
  GuardedLinks(const GuardedLinks&) = delete;
  GuardedLinks& operator=(const GuardedLinks&) = delete;

  [[nodiscard]] hid_t lapl() const noexcept { return lapl_.get(); }
  // Throws the error of a check that refused a link since the last call (HDF5's own error that
  // followed it is cleared); nothing otherwise.
  void rethrow_refusal() const;

 private:
  static herr_t callback(const char* parent_file, const char* parent_group, const char* file, const char* object,
                         unsigned* flags, hid_t fapl, void* self) noexcept;
  ExternalLinkCheck check_;
  PlistHandle lapl_;
  mutable std::exception_ptr refused_;
};

}  // namespace h5tile::detail
