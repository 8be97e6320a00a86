// GPUDirect Storage through cuFile, loaded at run time with dlopen so that one binary runs
// with and without it. The few cuFile types used are declared here with the layout of
// cufile.h (tests/cuda checks them against the real header where it is installed).
#include <dlfcn.h>
#include <fcntl.h>

#include <mutex>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "gpu/backend.hpp"
#include "io/posix/posix_file.hpp"

namespace h5tile::detail::gpu {

namespace cufile_abi {
struct Error {
  int err;     // CUfileOpError, 0 = CU_FILE_SUCCESS
  int cu_err;  // CUresult
};
struct Descr {
  int type;  // CUfileFileHandleType, 1 = CU_FILE_HANDLE_TYPE_OPAQUE_FD
  union {
    int fd;
    void* handle;
  } handle;
  const void* fs_ops;
};
using Handle = void*;
constexpr int kOpaqueFd = 1;
}  // namespace cufile_abi

namespace {

struct CuFile {
  void* library = nullptr;
  cufile_abi::Error (*driver_open)() = nullptr;
  cufile_abi::Error (*handle_register)(cufile_abi::Handle*, cufile_abi::Descr*) = nullptr;
  void (*handle_deregister)(cufile_abi::Handle) = nullptr;
  ssize_t (*read)(cufile_abi::Handle, void*, std::size_t, off_t, off_t) = nullptr;
  std::string failure;  // why cuFile is unusable, or ""
};

// Loads libcufile and opens the driver once per process.
const CuFile& cufile() {
  static const CuFile instance = [] {
    CuFile c;
    for (const char* name : {"libcufile.so.0", "libcufile.so.1", "libcufile.so"}) {
      c.library = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (c.library != nullptr) break;
    }
    if (c.library == nullptr) {
      c.failure = "libcufile is not installed (dlopen failed)";
      return c;
    }
    auto sym = [&](const char* name) { return ::dlsym(c.library, name); };
    c.driver_open = reinterpret_cast<decltype(c.driver_open)>(sym("cuFileDriverOpen"));
    c.handle_register = reinterpret_cast<decltype(c.handle_register)>(sym("cuFileHandleRegister"));
    c.handle_deregister = reinterpret_cast<decltype(c.handle_deregister)>(sym("cuFileHandleDeregister"));
    c.read = reinterpret_cast<decltype(c.read)>(sym("cuFileRead"));
    if (!c.driver_open || !c.handle_register || !c.handle_deregister || !c.read) {
      c.failure = "libcufile lacks cuFileDriverOpen, cuFileHandleRegister or cuFileRead";
      return c;
    }
    const auto status = c.driver_open();
    if (status.err != 0) {
      c.failure = fmt::format("cuFileDriverOpen failed with error {}", status.err);
    }
    return c;
  }();
  return instance;
}

class CuFileReader final : public GdsFile {
 public:
  CuFileReader(PosixFile file, cufile_abi::Handle handle) : file_(std::move(file)), handle_(handle) {}
  CuFileReader(const CuFileReader&) = delete;
  CuFileReader& operator=(const CuFileReader&) = delete;
  ~CuFileReader() override { cufile().handle_deregister(handle_); }

  void read(void* dst, std::size_t bytes, std::uint64_t offset) override {
    std::size_t done = 0;
    while (done < bytes) {
      const auto n =
          cufile().read(handle_, dst, bytes - done, static_cast<off_t>(offset + done), static_cast<off_t>(done));
      if (n <= 0) {
        throw IoError(fmt::format("cuFileRead of {} bytes at offset {} of '{}' failed ({})", bytes - done,
                                  offset + done, file_.path().string(), n),
                      n < 0 ? static_cast<int>(-n) : EIO);
      }
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  PosixFile file_;
  cufile_abi::Handle handle_;
};

}  // namespace

std::unique_ptr<GdsFile> gds_open(const PosixFile& source, GdsMode mode) {
  const auto& path = source.path();
  if (mode == GdsMode::Off) {
    note_gds_reason("H5TILE_GDS=off");
    return nullptr;
  }
  std::string reason = cufile().failure;
  if (reason.empty()) {
    try {
      PosixFile file = source.reopen(O_RDONLY | O_DIRECT);
      cufile_abi::Descr descr{};
      descr.type = cufile_abi::kOpaqueFd;
      descr.handle.fd = file.fd();
      cufile_abi::Handle handle = nullptr;
      const auto status = cufile().handle_register(&handle, &descr);
      if (status.err == 0) {
        note_gds_reason("");
        return std::make_unique<CuFileReader>(std::move(file), handle);
      }
      reason = fmt::format("cuFileHandleRegister refused '{}' with error {}", path.string(), status.err);
    } catch (const std::exception& e) {
      reason = e.what();
    }
  }
  if (mode == GdsMode::On) {
    throw RuntimeError(fmt::format("H5TILE_GDS=on but GPUDirect Storage cannot read '{}': {}", path.string(), reason));
  }
  note_gds_reason(reason);
  return nullptr;
}

}  // namespace h5tile::detail::gpu
