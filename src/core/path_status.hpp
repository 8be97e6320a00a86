#pragma once
// What a path is (std::filesystem::status), where an error other than "not there" is an error:
// a symbolic-link loop (ELOOP), a permission denied on the way, a name too long. Without this,
// such a path reads as "does not exist", which it may well do.

#include <filesystem>
#include <string>
#include <string_view>

namespace h5tile::detail {

// The status of `path`, following symbolic links: file_type::not_found where nothing is there
// (ENOENT, or a component that is not a folder); otherwise IoError carrying errno, saying
// "<doing> '<path>': ..." ("cannot open", "cannot write") and, for ELOOP, that the path is a
// symbolic-link loop.
[[nodiscard]] std::filesystem::file_status status_of(const std::filesystem::path& path, std::string_view doing);

// What a status's type is called in messages ("a regular file", "a FIFO (named pipe)", ...).
[[nodiscard]] std::string kind_of(const std::filesystem::file_status& status);

// Throws InvalidArgument (IsADirectory for a folder) where `path` exists and is anything but a
// regular file, following symbolic links: a write replaces (renames over) only regular files,
// never a device, a FIFO, a socket or a folder, whatever its mode or --force says. Called where a
// write is checked and again just before its rename.
void check_replaceable_path(const std::filesystem::path& path);

}  // namespace h5tile::detail
