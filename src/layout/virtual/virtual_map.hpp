#pragma once
// The mapping of a virtual dataset, read once with H5Pget_virtual_*.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <h5tile/array.hpp>

#include "hdf5/handle.hpp"

namespace h5tile::detail {

// One mapping: the region `dst` of the virtual dataset comes from `src` of `dataset` in
// `file` (the name as HDF5 reads it, "%%" unescaped; "." is the virtual dataset's own file).
struct VirtualEntry {
  Box dst;
  std::string file;
  std::string dataset;
  std::optional<Box> src;  // nullopt: the whole source dataset
};

// HDF5 reads the source file and dataset names of a mapping as printf-style patterns: "%b"
// stands for the block number of an unlimited mapping, "%%" for one '%', and any other '%'
// is refused ("invalid format specifier"). escape_source_name gives the name to store so that
// HDF5 reads back `name` exactly; unescape_source_name gives the name HDF5 reads from a
// stored one, or nullopt when it has a "%b" (or an invalid '%'), which only HDF5 expands.
[[nodiscard]] std::string escape_source_name(std::string_view name);
[[nodiscard]] std::optional<std::string> unescape_source_name(std::string_view stored);

// The mappings of a virtual dataset's creation property list, with the source names as HDF5
// reads them (unescaped), or nullopt when some mapping is not a plain box-to-box copy
// (unlimited or irregular selections, "%b" names): such datasets are read through HDF5.
[[nodiscard]] std::optional<std::vector<VirtualEntry>> read_virtual_map(hid_t dcpl);

// The source file names of every mapping, unescaped where they have no "%b" (those stay as
// stored: HDF5 expands them per block; `expands`, when given, is set to say which these are).
[[nodiscard]] std::vector<std::string> virtual_file_names(hid_t dcpl, std::vector<bool>* expands = nullptr);

// Every source file that the virtual datasets of the HDF5 file `file` map, resolved as
// resolve_source resolves them ("%b" names, which HDF5 expands per block, are left out).
// Throws where the file or one of its datasets cannot be read.
[[nodiscard]] std::vector<std::filesystem::path> mapped_source_files(const std::filesystem::path& file,
                                                                     const std::string& vds_prefix);

// Where a source file name points, as HDF5 resolves it: "." is `vds_file`; an absolute name
// that exists is itself, else its last component is searched for as a relative name: in each
// prefix of `vds_prefix` (HDF5_VDS_PREFIX, "" where unset: a ':'-separated list, and as a whole
// with a leading "${ORIGIN}" meaning the folder of `vds_file`), beside `vds_file`, from the
// working directory, then beside the file `vds_file` links to. Missing everywhere: the name
// (absolute) or the place beside `vds_file`.
[[nodiscard]] std::filesystem::path resolve_source(const std::filesystem::path& vds_file, const std::string& name,
                                                   const std::string& vds_prefix);

// Where HDF5 first looks for source `name` when HDF5_VDS_PREFIX is unset: beside the virtual
// dataset's file (in `folder`), or the name itself when it is absolute. Joined with one parse
// of the whole path (thousands of tiles are resolved per read).
[[nodiscard]] std::filesystem::path first_candidate(const std::filesystem::path& folder, const std::string& name);

// A source file found as resolve_source finds it, with what one lstat(2) said of it.
struct ResolvedSource {
  std::filesystem::path file;
  bool found = false;       // an entry of that name exists
  bool link = false;        // ... and is a symbolic link
  std::uint64_t bytes = 0;  // its size (the link's target's for a link)
};

// resolve_source for every name, with one lstat(2) per name where the name lies beside
// `vds_file` and is no link (names elsewhere take the full search). Thousands of tiles cost
// one metadata lookup each, spread over `threads`.
[[nodiscard]] std::vector<ResolvedSource> resolve_sources(const std::filesystem::path& vds_file,
                                                          const std::vector<std::string>& names, unsigned threads,
                                                          const std::string& vds_prefix);

// The bytes of the distinct files among `sources` that exist.
[[nodiscard]] std::uint64_t stored_bytes_of(const std::vector<ResolvedSource>& sources);

// Whether sources (symbolic links followed) lie in the folder tree of `vds_file`, for the many
// sources of one virtual dataset: the folder of `vds_file` and each source's folder are
// resolved once, so that a source costs one lstat(2), or none when the caller knows whether it
// is a link (a source that is a symbolic link, or whose path has a '..', is resolved in full).
class FolderCheck {
 public:
  explicit FolderCheck(const std::filesystem::path& vds_file);
  [[nodiscard]] bool inside(const std::filesystem::path& source);
  // The same, for a source whose lstat(2) said whether it is a symbolic link.
  [[nodiscard]] bool inside(const std::filesystem::path& source, bool link);

 private:
  [[nodiscard]] bool resolves_inside(const std::filesystem::path& path) const;  // resolved in full

  std::filesystem::path folder_;
  std::unordered_map<std::string, bool> parents_;  // folder as named -> whether it lies inside
};

}  // namespace h5tile::detail
