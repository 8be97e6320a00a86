#include "core/path_status.hpp"

#include <cerrno>
#include <system_error>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace fs = std::filesystem;

fs::file_status status_of(const fs::path& path, std::string_view doing) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (!ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
    return ec ? fs::file_status(fs::file_type::not_found) : status;
  }
  const int err = ec.value();
  if (err == ELOOP) {
    throw IoError(fmt::format("{} '{}': it is a symbolic-link loop (links that lead back to themselves, or more "
                              "than the system follows: {})",
                              doing, path.string(), ec.message()),
                  err);
  }
  throw IoError(fmt::format("{} '{}': {}", doing, path.string(), ec.message()), err);
}

std::string kind_of(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::regular: return "a regular file";
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    default: return "a special file";
  }
}

void check_replaceable_path(const fs::path& path) {
  const auto status = status_of(path, "cannot write");
  if (!fs::exists(status) || fs::is_regular_file(status)) return;
  const auto message =
      fmt::format("cannot write '{}': it is {}; h5tile replaces only regular files", path.string(), kind_of(status));
  if (fs::is_directory(status)) throw IsADirectory(message);
  throw InvalidArgument(message);
}

}  // namespace h5tile::detail
