// The GPU layer of a build without CUDA: host memory only; every device request is an error.
#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "gpu/backend.hpp"
#include "gpu/decode.hpp"

namespace h5tile::detail::gpu {
namespace {

[[noreturn]] void no_cuda(const char* what) {
  throw RuntimeError(
      fmt::format("{}: h5tile was built without CUDA (configure with H5TILE_WITH_CUDA=ON on a "
                  "machine with the CUDA toolkit)",
                  what));
}

}  // namespace

bool built_with_cuda() noexcept { return false; }
int device_count() noexcept { return 0; }
int device_of(const void* /*ptr*/) { return -1; }
int device_of(const ArrayView& view) {
  if (view.memory == MemoryKind::Device) {
    no_cuda("an array in device memory");
  }
  return -1;
}
std::byte* allocate(std::uint64_t /*bytes*/, int device) { no_cuda(fmt::format("device {}", device).c_str()); }
void release(std::byte* /*p*/) noexcept {}
void copy_to_host(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/) { no_cuda("copy from device"); }
void stage_to_device(int, std::size_t, std::size_t, const std::function<DeviceRegion(std::size_t)>&,
                     const std::function<void(std::size_t, std::byte*)>&, unsigned, const Staging&) {
  no_cuda("a read into device memory");
}
void stage_from_device(int, std::size_t, std::size_t, const std::function<DeviceRegion(std::size_t)>&,
                       const std::function<void(std::size_t, const std::byte*)>&, unsigned, const Staging&) {
  no_cuda("a write from device memory");
}
std::unique_ptr<GdsFile> gds_open(const PosixFile& /*file*/, GdsMode /*mode*/) { return nullptr; }
void note_path(const char* /*path*/) {}
void begin_device_io() {}
void wait_for_default_stream(int /*device*/) {}
void note_gds_reason(const std::string& /*reason*/) {}
void note_decode_phases(const DecodePhases& /*phases*/) {}
void note_device_io_seconds(double /*plan*/, double /*total*/) {}
void note_decoder_choice(const DecoderChoiceReport& /*choice*/) {}
void note_decoder(const std::string& /*decoder*/, const std::string& /*reason*/) {}
bool kernels_built() noexcept { return false; }
std::string decode_obstacle(const GpuFilters& /*filters*/, const std::string& /*library*/) {
  return "h5tile was built without CUDA";
}
void decode_to_device(int, const DecodeRequest&, std::byte*, const Shape&, const std::string&, unsigned, const Staging&,
                      Progress*) {
  no_cuda("decoding on the GPU");
}
DeviceIoReport report() { return {}; }

}  // namespace h5tile::detail::gpu

namespace h5tile {
bool cuda_built() noexcept { return false; }
int cuda_device_count() noexcept { return 0; }
DeviceIoReport last_device_io() { return {}; }
}  // namespace h5tile
