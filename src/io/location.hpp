#pragma once
// Where a file's bytes are: a local path, or a URL that a remote byte source reads (io/remote.hpp:
// http, https, s3, webhdfs, swebhdfs, and python for a file-like object). Parsed once, where a
// path enters h5tile (the public functions in src/api/: Location::of); the layers below take the
// Location and ask it, never the text, whether the file is remote.

#include <filesystem>
#include <string>

namespace h5tile::detail {

class Location {
 public:
  // What the path is given for: the refusal of a scheme h5tile does not serve names it.
  enum class Use : unsigned char { Read, Write };

  // `given` as a Location: a URL of a scheme h5tile reads, else a local path. Throws
  // InvalidArgument naming the scheme (and those h5tile reads, or that it writes local paths) for
  // a URL of another scheme ("gs://", "az://", "file://", fsspec's "simplecache::s3://"), which
  // taken as a local path would only "not exist", or make a folder "gs:" when written.
  [[nodiscard]] static Location of(std::filesystem::path given, Use use = Use::Read);
  // A path known to be local (a tile file, a source found beside a local file): not parsed.
  [[nodiscard]] static Location local(std::filesystem::path path) noexcept;
  Location() = default;  // an empty local path

  [[nodiscard]] bool remote() const noexcept { return remote_; }
  // The local path, or the URL as given (its credentials and query included: for opening it only).
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] const std::string& text() const noexcept { return path_.native(); }
  // As messages show it: a URL without its user information, query and fragment; a path as given.
  [[nodiscard]] std::string shown() const;

 private:
  Location(std::filesystem::path path, bool remote) noexcept : path_(std::move(path)), remote_(remote) {}

  std::filesystem::path path_;
  bool remote_ = false;
};

}  // namespace h5tile::detail
