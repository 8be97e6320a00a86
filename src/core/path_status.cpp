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

}  // namespace h5tile::detail
