// Settings resolved where a call enters the library (api/resolve.hpp) reach the plain values
// that layout/, engine/ and gpu/ take; and the pure rules those values feed.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/settings.hpp>

#include "api/resolve.hpp"
#include "gpu/backend.hpp"
#include "io/posix/posix_file.hpp"

namespace h5tile::detail {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

TEST(ReadsBypassCache, FollowTheModeAndTheFileSize) {
  constexpr std::uint64_t memory = 8192 * kMiB;
  EXPECT_FALSE(reads_bypass_cache(DirectIo::On, kMiB - 1, memory));  // too small to bother
  EXPECT_TRUE(reads_bypass_cache(DirectIo::On, kMiB, memory));
  EXPECT_FALSE(reads_bypass_cache(DirectIo::Auto, 4095 * kMiB, memory));  // would stay cached
  EXPECT_TRUE(reads_bypass_cache(DirectIo::Auto, 4096 * kMiB, memory));
  EXPECT_FALSE(reads_bypass_cache(DirectIo::Off, 1 << 30, kMiB));
}

TEST(StagingFor, TwoPiecesPerThreadBetweenOneMiBAndOneTask) {
  EXPECT_EQ(gpu::staging_for(128 * kMiB, 8 * kMiB, 16).piece_bytes, 4 * kMiB);
  EXPECT_EQ(gpu::staging_for(128 * kMiB, 8 * kMiB, 1).piece_bytes, 8 * kMiB);  // at most one task
  EXPECT_EQ(gpu::staging_for(16 * kMiB, 4 * kMiB, 64).piece_bytes, 1 * kMiB);  // at least 1 MiB
  EXPECT_EQ(gpu::staging_for(kMiB / 2, 8 * kMiB, 4).piece_bytes, kMiB / 2);    // unless less is staged
  EXPECT_EQ(gpu::staging_for(64 * kMiB, kMiB / 4, 2).piece_bytes, kMiB / 4);   // or tasks are smaller
  EXPECT_EQ(gpu::staging_for(128 * kMiB, 8 * kMiB, 16).bytes, 128 * kMiB);
}

// Restores the settings and environment variables a test changes.
class Resolve : public ::testing::Test {
 protected:
  void TearDown() override {
    settings::set_threads(threads_);
    settings::set_task_size(task_size_);
    settings::set_alignment(alignment_);
    settings::set_staging_bytes(staging_);
    settings::set_direct_io(direct_io_);
    settings::set_gds(gds_);
    settings::set_early_reads(early_reads_);
    settings::set_raw_io(raw_io_);
    settings::set_gpu_decode(gpu_decode_);
    settings::set_nvcomp_library(nvcomp_library_);
    ::unsetenv("HDF5_VDS_PREFIX");
    ::unsetenv("HDF5_EXTFILE_PREFIX");
  }

  unsigned threads_ = settings::threads();
  std::size_t task_size_ = settings::task_size();
  std::size_t alignment_ = settings::alignment();
  std::size_t staging_ = settings::staging_bytes();
  settings::DirectIo direct_io_ = settings::direct_io();
  settings::Gds gds_ = settings::gds();
  bool early_reads_ = settings::early_reads();
  bool raw_io_ = settings::raw_io();
  settings::GpuDecode gpu_decode_ = settings::gpu_decode();
  std::string nvcomp_library_ = settings::nvcomp_library();
};

TEST_F(Resolve, ReadsTakeTheCallersOptionsElseTheSettings) {
  settings::set_threads(5);
  settings::set_task_size(2 * kMiB);
  settings::set_staging_bytes(32 * kMiB);
  settings::set_direct_io(settings::DirectIo::On);
  settings::set_gds(settings::Gds::Off);
  auto opening = open_options(ReadOptions{});
  EXPECT_EQ(opening.threads, 5U);
  EXPECT_EQ(opening.task_size, 2 * kMiB);
  EXPECT_EQ(opening.direct_reads, DirectIo::On);
  EXPECT_EQ(opening.gds, gpu::GdsMode::Off);
  EXPECT_EQ(opening.staging.bytes, 32 * kMiB);
  EXPECT_EQ(opening.staging.piece_bytes, gpu::staging_for(32 * kMiB, 2 * kMiB, 5).piece_bytes);
  EXPECT_TRUE(opening.early_reads);
  EXPECT_EQ(opening.vds_prefix, "");
  EXPECT_EQ(open_options(ReadOptions{.threads = 3}).threads, 3U);
  EXPECT_EQ(open_options(ConsolidateOptions{.threads = 2}).threads, 2U);
  settings::set_direct_io(settings::DirectIo::Off);
  settings::set_gds(settings::Gds::On);
  opening = open_options(ReadOptions{.allow_external_sources = true, .verify_checksums = true});
  EXPECT_EQ(opening.direct_reads, DirectIo::Off);
  EXPECT_EQ(opening.gds, gpu::GdsMode::On);
  EXPECT_TRUE(opening.allow_external);
  EXPECT_FALSE(opening.early_reads);  // checksums are checked before any byte is read
  EXPECT_TRUE(describe_options().metadata_only);
}

TEST_F(Resolve, GpuDecodingTakesItsModeAndLibraryFromTheSettings) {
  settings::set_gpu_decode(settings::GpuDecode::Off);
  settings::set_nvcomp_library("/opt/nvcomp/lib64/libnvcomp.so.6");
  auto opening = open_options(ReadOptions{});
  EXPECT_EQ(opening.gpu_decode, gpu::DecodeMode::Off);
  EXPECT_EQ(opening.nvcomp_library, "/opt/nvcomp/lib64/libnvcomp.so.6");
  settings::set_gpu_decode(settings::GpuDecode::On);
  settings::set_nvcomp_library("");
  opening = open_options(ReadOptions{});
  EXPECT_EQ(opening.gpu_decode, gpu::DecodeMode::On);
  EXPECT_EQ(opening.nvcomp_library, "");
}

TEST_F(Resolve, EarlyReadsNeedTheirSettingRawIoAndNoVdsPrefix) {
  EXPECT_TRUE(open_options(ReadOptions{}).early_reads);
  settings::set_early_reads(false);
  EXPECT_FALSE(open_options(ReadOptions{}).early_reads);
  settings::set_early_reads(true);
  settings::set_raw_io(false);
  EXPECT_FALSE(open_options(ReadOptions{}).early_reads);
  settings::set_raw_io(true);
  ::setenv("HDF5_VDS_PREFIX", "/somewhere", 1);
  ::setenv("HDF5_EXTFILE_PREFIX", "${ORIGIN}/ext", 1);
  const auto opening = open_options(ReadOptions{});
  EXPECT_FALSE(opening.early_reads);
  EXPECT_EQ(opening.vds_prefix, "/somewhere");
  EXPECT_EQ(opening.extfile_prefix, "${ORIGIN}/ext");
  EXPECT_EQ(write_config(WriteOptions{}).vds_prefix, "/somewhere");
}

TEST_F(Resolve, WritesTakeTheSettings) {
  settings::set_threads(6);
  settings::set_task_size(kMiB);
  settings::set_alignment(64 * 1024);
  settings::set_direct_io(settings::DirectIo::On);
  const auto config = write_config(WriteOptions{.layout = Layout::Chunked, .mode = Mode::Append, .sync = false});
  EXPECT_EQ(config.layout, Layout::Chunked);
  EXPECT_EQ(config.mode, Mode::Append);
  EXPECT_FALSE(config.sync);
  EXPECT_TRUE(config.keep_previous);
  EXPECT_EQ(config.threads, 6U);
  EXPECT_EQ(config.task_size, kMiB);
  EXPECT_EQ(config.alignment, 64U * 1024);
  EXPECT_EQ(config.direct_reads, DirectIo::On);
  EXPECT_EQ(config.staging.piece_bytes, gpu::staging_for(settings::staging_bytes(), kMiB, 6).piece_bytes);
  const auto consolidating = write_config(ConsolidateOptions{.threads = 3, .keep_previous = false});
  EXPECT_EQ(consolidating.layout, Layout::Contiguous);
  EXPECT_EQ(consolidating.threads, 3U);
  EXPECT_FALSE(consolidating.keep_previous);
}

// The AWS_* variables that s3:// URLs resolve with are read here, at the edge, into the options
// passed down; empty ones count as unset, and others (AWS_PROFILE) are not read.
TEST(ResolveRemote, RequestsSideBySideRunEveryIndexOnThePool) {
  const auto options = open_options(ReadOptions{}).remote;
  ASSERT_TRUE(options.parallel);  // the remote driver reads B-tree nodes ahead only with it
  std::vector<std::atomic<int>> runs(40);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  options.parallel(runs.size(), [&](std::size_t i) {
    ++runs[i];
    {
      const std::lock_guard lock(mutex);
      threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a request's wait
  });
  for (const auto& n : runs) EXPECT_EQ(n.load(), 1);
  EXPECT_GT(threads.size(), 1U);  // side by side, not one after another
}

TEST(ResolveRemote, AwsVariablesAreReadAtTheEdgeIntoTheRemoteOptions) {
  const std::vector<std::string> names = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                          "AWS_REGION",        "AWS_ENDPOINT_URL",      "AWS_PROFILE"};
  std::vector<std::optional<std::string>> saved;
  for (const auto& name : names) {
    const char* value = std::getenv(name.c_str());
    saved.push_back(value != nullptr ? std::optional<std::string>(value) : std::nullopt);
  }
  ::setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
  ::setenv("AWS_SESSION_TOKEN", "", 1);
  ::setenv("AWS_REGION", "eu-north-1", 1);
  ::unsetenv("AWS_ENDPOINT_URL");
  ::setenv("AWS_PROFILE", "other", 1);
  const auto options = open_options(ReadOptions{}).remote;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (saved[i]) {
      ::setenv(names[i].c_str(), saved[i]->c_str(), 1);
    } else {
      ::unsetenv(names[i].c_str());
    }
  }
  EXPECT_EQ(options.aws.at("AWS_ACCESS_KEY_ID"), "AKID");
  EXPECT_EQ(options.aws.at("AWS_SECRET_ACCESS_KEY"), "secret");
  EXPECT_EQ(options.aws.at("AWS_REGION"), "eu-north-1");
  EXPECT_FALSE(options.aws.contains("AWS_SESSION_TOKEN"));
  EXPECT_FALSE(options.aws.contains("AWS_ENDPOINT_URL"));
  // The profile's name goes with them, for the S3 dialect to read the profile where the keys are
  // not set (io/http/aws_profile.hpp); an unrelated variable does not.
  EXPECT_EQ(options.aws.at("AWS_PROFILE"), "other");
  EXPECT_FALSE(options.aws.contains("PATH"));
}

}  // namespace
}  // namespace h5tile::detail
