#include "layout/virtual/virtual_map.hpp"

#include <sys/stat.h>

#include <algorithm>

#include <cstdlib>
#include <string_view>
#include <unordered_set>

#include "engine/thread_pool.hpp"
#include "hdf5/describe.hpp"
#include "hdf5/file.hpp"
#include "hdf5/virtual.hpp"

namespace h5tile::detail {
namespace fs = std::filesystem;

std::string escape_source_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    out.push_back(c);
    if (c == '%') out.push_back('%');
  }
  return out;
}

std::optional<std::string> unescape_source_name(std::string_view stored) {
  std::string out;
  out.reserve(stored.size());
  for (std::size_t i = 0; i < stored.size(); ++i) {
    if (stored[i] == '%') {
      if (i + 1 == stored.size() || stored[i + 1] != '%') return std::nullopt;  // "%b", or refused
      ++i;
    }
    out.push_back(stored[i]);
  }
  return out;
}

std::vector<std::string> virtual_file_names(hid_t dcpl, std::vector<bool>* expands) {
  const Hdf5Lock lock;
  const std::size_t count = virtual_count(dcpl);
  std::vector<std::string> names;
  if (expands != nullptr) expands->assign(count, false);
  for (std::size_t i = 0; i < count; ++i) {
    auto name = virtual_file_name(dcpl, i);
    auto unescaped = unescape_source_name(name);
    if (expands != nullptr) (*expands)[i] = !unescaped;
    names.push_back(unescaped ? std::move(*unescaped) : std::move(name));
  }
  return names;
}

std::optional<std::vector<VirtualEntry>> read_virtual_map(hid_t dcpl) {
  const Hdf5Lock lock;
  const std::size_t count = virtual_count(dcpl);
  std::vector<VirtualEntry> entries;
  entries.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    VirtualEntry entry;
    auto file = unescape_source_name(virtual_file_name(dcpl, i));
    auto dataset = unescape_source_name(virtual_dataset_name(dcpl, i));
    if (!file || !dataset) {
      return std::nullopt;  // "%b" names expand at read time, per block
    }
    entry.file = std::move(*file);
    entry.dataset = std::move(*dataset);
    const auto vspace = virtual_space(dcpl, i);
    const auto sspace = virtual_source_space(dcpl, i);
    auto dst = selection_box(vspace.get());
    if (!dst) {
      return std::nullopt;
    }
    entry.dst = *dst;
    // "All" of a source: its extent is only known once the source is open (the stored
    // source space may not carry it), so the caller checks it against the mapping.
    if (!selects_all(sspace.get())) {
      auto src = selection_box(sspace.get());
      if (!src || src->extent != dst->extent) {
        return std::nullopt;  // irregular, or the same count in another shape: HDF5 reshapes, we do not
      }
      entry.src = *src;
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

fs::path resolve_source(const fs::path& vds_file, const std::string& name, const std::string& vds_prefix) {
  if (name == ".") {
    return vds_file;
  }
  // HDF5's search (H5F_prefix_open_file): an absolute name as it is, and where that is missing its
  // last component as a relative name; a relative name under each prefix HDF5_VDS_PREFIX lists
  // (separated by ':'), under HDF5_VDS_PREFIX as one prefix with a leading "${ORIGIN}" made the
  // file's folder (H5D__build_file_prefix), beside the file, from the working directory, and
  // beside the file the virtual dataset's file is a link to.
  const fs::path source(name);
  std::error_code ec;
  fs::path relative = source;
  if (source.is_absolute()) {
    if (fs::exists(source, ec)) {
      return source;
    }
    relative = source.filename();
  }
  std::vector<fs::path> candidates;
  if (!vds_prefix.empty()) {
    for (std::size_t begin = 0; begin <= vds_prefix.size();) {
      const auto colon = std::min(vds_prefix.find(':', begin), vds_prefix.size());
      if (colon > begin) candidates.push_back(fs::path(vds_prefix.substr(begin, colon - begin)) / relative);
      begin = colon + 1;
    }
    constexpr std::string_view origin = "${ORIGIN}";
    if (vds_prefix.starts_with(origin)) {
      // HDF5 puts the folder with its trailing '/' in its place: "${ORIGIN}sub" is <folder>/sub.
      candidates.push_back(
          fs::path(fs::absolute(vds_file, ec).parent_path().string() + "/" + vds_prefix.substr(origin.size())) /
          relative);
    } else if (vds_prefix != ".") {
      candidates.push_back(fs::path(vds_prefix) / relative);
    }
  }
  const auto beside = vds_file.parent_path() / relative;
  candidates.push_back(beside);
  candidates.push_back(relative);
  if (const auto target = fs::canonical(vds_file, ec); !ec) candidates.push_back(target.parent_path() / relative);
  for (auto& candidate : candidates) {
    if (fs::exists(candidate, ec)) {
      return candidate;
    }
  }
  return source.is_absolute() ? source : beside;
}

std::vector<fs::path> mapped_source_files(const fs::path& file, const std::string& vds_prefix) {
  const auto handle = open_local_file(file);
  const Hdf5Lock lock;
  std::vector<fs::path> sources;
  for (const auto& name : dataset_paths(handle.get())) {
    const auto dataset = open_dataset_at(handle.get(), name);
    const auto dcpl = creation_plist(dataset.get());
    if (!is_virtual(dcpl.get())) continue;
    const std::size_t count = virtual_count(dcpl.get());
    for (std::size_t i = 0; i < count; ++i) {
      const auto source = unescape_source_name(virtual_file_name(dcpl.get(), i));
      if (source) sources.push_back(resolve_source(file, *source, vds_prefix));
    }
  }
  return sources;
}

fs::path first_candidate(const fs::path& folder, const std::string& name) {
  if (!name.empty() && name.front() == '/') return name;
  std::string joined;
  joined.reserve(folder.native().size() + 1 + name.size());
  joined.append(folder.native());
  if (!joined.empty() && joined.back() != '/') joined.push_back('/');
  joined.append(name);
  return fs::path(std::move(joined));
}

std::vector<ResolvedSource> resolve_sources(const fs::path& vds_file, const std::vector<std::string>& names,
                                            unsigned threads, const std::string& vds_prefix) {
  std::vector<ResolvedSource> out(names.size());
  const bool prefixed = !vds_prefix.empty();
  const auto folder = vds_file.parent_path();
  const auto workers = static_cast<unsigned>(std::min<std::size_t>(threads, 1 + names.size() / 64));
  parallel_for(names.size(), workers, [&](std::size_t i) {
    const auto& name = names[i];
    auto& r = out[i];
    struct stat st {};
    if (!prefixed && name != "." && !fs::path(name).is_absolute()) {
      auto beside = first_candidate(folder, name);
      if (::lstat(beside.c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) {
        r = {std::move(beside), true, false, static_cast<std::uint64_t>(st.st_size)};
        return;
      }
    }
    r.file = resolve_source(vds_file, name, vds_prefix);  // the full search: prefix, links, working directory
    if (::lstat(r.file.c_str(), &st) == 0) {
      r.found = true;
      r.link = S_ISLNK(st.st_mode);
      if (r.link && ::stat(r.file.c_str(), &st) != 0) st.st_size = 0;  // a dangling link
      r.bytes = static_cast<std::uint64_t>(st.st_size);
    }
  });
  return out;
}

std::uint64_t stored_bytes_of(const std::vector<ResolvedSource>& sources) {
  std::unordered_set<std::string> seen;
  std::uint64_t total = 0;
  for (const auto& s : sources) {
    const auto& text = s.file.native();
    const bool plain = text.find("/.") == std::string::npos && text.find("//") == std::string::npos;
    if (s.found && seen.insert(plain ? text : s.file.lexically_normal().native()).second) total += s.bytes;
  }
  return total;
}

FolderCheck::FolderCheck(const fs::path& vds_file) {
  std::error_code ec;
  folder_ = fs::weakly_canonical(fs::absolute(vds_file).parent_path(), ec);
}

bool FolderCheck::inside(const fs::path& source) {
  struct stat st {};
  return inside(source, ::lstat(fs::absolute(source).c_str(), &st) == 0 && S_ISLNK(st.st_mode));
}

bool FolderCheck::inside(const fs::path& source, bool link) {
  // A file (not a link) named in a folder lies inside exactly when its folder does, so each
  // folder is resolved once and a source costs a few string operations. A '..' after a
  // symbolic link climbs from where the link points, so such paths (and sources that are
  // links themselves) are resolved in full, never lexically.
  const std::string_view text = source.native();
  const bool dots =
      text == ".." || text.starts_with("../") || text.ends_with("/..") || text.find("/../") != std::string_view::npos;
  const auto slash = text.rfind('/');
  const auto name = slash == std::string_view::npos ? text : text.substr(slash + 1);
  if (!link && !dots && !name.empty() && name != "." && name != "..") {
    const std::string parent(slash == std::string_view::npos ? "." : text.substr(0, std::max<std::size_t>(slash, 1)));
    auto it = parents_.find(parent);
    if (it == parents_.end()) {
      it = parents_.emplace(parent, resolves_inside(parent)).first;
    }
    return it->second;
  }
  return resolves_inside(source);
}

bool FolderCheck::resolves_inside(const fs::path& path) const {
  std::error_code ec;
  const auto relative = fs::weakly_canonical(fs::absolute(path), ec).lexically_relative(folder_);
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace h5tile::detail
