// How HDF5's failures become h5tile's errors: a system call's errno is kept, and a file is called
// "locked by another program" only where HDF5 failed to lock it, not where its name says "lock".
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "hdf5/create.hpp"

namespace h5tile::detail {
namespace {
namespace fs = std::filesystem;

TEST(Hdf5Errors, AnExistingFileIsNotCalledLockedWhateverItsName) {
  const fs::path folder = fs::temp_directory_path() / ("h5tile_blocks_" + std::to_string(::getpid()));
  fs::create_directories(folder);
  const fs::path path = folder / "unlocked-block.h5";
  { (void)create_file_exclusive(path, write_access(4096).get()); }
  try {
    (void)create_file_exclusive(path, write_access(4096).get());
    ADD_FAILURE() << "a second exclusive create of " << path << " succeeded";
  } catch (const IoError& e) {
    const std::string text = e.what();
    EXPECT_EQ(e.error_number(), EEXIST) << text;
    EXPECT_EQ(text.find("locked by another program"), std::string::npos) << text;
    EXPECT_NE(text.find("File exists"), std::string::npos) << text;
  } catch (const Error& e) {
    ADD_FAILURE() << "not an IoError: " << e.what();
  }
  fs::remove_all(folder);
}

}  // namespace
}  // namespace h5tile::detail
