// nvCOMP loaded at run time (cuda/nvcomp.hpp), and whether the GPU can decode a dataset here.
#include "cuda/nvcomp.hpp"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace h5tile::detail::gpu {
namespace {

constexpr const char* kDefaultLibrary = "libnvcomp.so.6";
constexpr std::uint32_t kMajor = 6;  // the signatures declared in nvcomp.hpp

std::unique_ptr<Nvcomp> load(const std::string& path) {
  auto n = std::make_unique<Nvcomp>();
  const std::string name = path.empty() ? kDefaultLibrary : path;
  n->library = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (n->library == nullptr) {
    const char* why = ::dlerror();
    n->failure = fmt::format("nvCOMP is not available: dlopen('{}') failed ({}){}", name, why != nullptr ? why : "?",
                             path.empty() ? "; install nvidia-libnvcomp-cu13 or set H5TILE_NVCOMP_LIBRARY" : "");
    return n;
  }
  auto sym = [&](const std::string& s) { return ::dlsym(n->library, s.c_str()); };
  auto* properties = reinterpret_cast<nvcomp_abi::Status (*)(nvcomp_abi::Properties*)>(sym("nvcompGetProperties"));
  n->status_string = reinterpret_cast<const char* (*)(nvcomp_abi::Status)>(sym("nvcompGetStatusString"));
  nvcomp_abi::Properties p{};
  if (properties == nullptr || properties(&p) != 0) {
    n->failure = fmt::format("'{}' is not nvCOMP (no nvcompGetProperties)", name);
    return n;
  }
  n->version = p.version;  // major * 1000 + minor * 100 + patch
  if (p.version / 1000 != kMajor) {
    n->failure = fmt::format("'{}' is nvCOMP {}.{}.{}; h5tile calls nvCOMP {}.x", name, p.version / 1000,
                             p.version % 1000 / 100, p.version % 100, kMajor);
    return n;
  }
  for (const auto codec : {GpuCodec::Deflate, GpuCodec::Zstd, GpuCodec::Lz4}) {
    const std::string c = codec == GpuCodec::Deflate ? "Deflate" : codec == GpuCodec::Zstd ? "Zstd" : "LZ4";
    auto& k = n->codecs[static_cast<int>(codec)];
    k.alignments =
        reinterpret_cast<decltype(k.alignments)>(sym("nvcompBatched" + c + "DecompressGetRequiredAlignments"));
    k.temp_size = reinterpret_cast<decltype(k.temp_size)>(sym("nvcompBatched" + c + "DecompressGetTempSize"));
    k.decompress = reinterpret_cast<decltype(k.decompress)>(sym("nvcompBatched" + c + "DecompressAsync"));
    if (k.alignments == nullptr || k.temp_size == nullptr || k.decompress == nullptr) {
      n->failure = fmt::format("'{}' lacks nvcompBatched{}DecompressAsync or its helpers", name, c);
      return n;
    }
    if (const auto s = k.alignments(nvcomp_abi::DecompressOpts{}, &k.align); s != 0) {
      n->failure = fmt::format("nvcompBatched{}DecompressGetRequiredAlignments failed: {}", c, n->describe(s));
      return n;
    }
  }
  return n;
}

}  // namespace

std::string Nvcomp::describe(nvcomp_abi::Status status) const {
  const char* text = status_string != nullptr ? status_string(status) : nullptr;
  return fmt::format("nvCOMP status {} ({})", status, text != nullptr ? text : "?");
}

const Nvcomp& nvcomp(const std::string& library) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Nvcomp>> loaded;  // never unloaded
  const std::lock_guard lock(mutex);
  auto& n = loaded[library];
  if (!n) n = load(library);
  return *n;
}

std::string decode_obstacle(const GpuFilters& filters, const std::string& library) {
  if (device_count() == 0) return "no CUDA device";
  const auto& n = nvcomp(library);
  if (!n.failure.empty()) return n.failure;
  // Chunks are laid out for the GPU with their first piece at a multiple of 16 bytes and their
  // decoded bytes at a multiple of 256 (cuda/gpu_decode.cpp); the blocks of an lz4 chunk start
  // anywhere in it, so its decompressor must take them unaligned.
  const auto& align = n.codec(filters.codec).align;
  const bool lz4 = filters.codec == GpuCodec::Lz4;
  if (align.input > (lz4 ? 1U : 16U) || align.output > (lz4 ? 1U : 256U)) {
    return fmt::format("nvCOMP's {} decompressor asks for input aligned to {} bytes and output to {}",
                       codec_name(filters.codec), align.input, align.output);
  }
  return "";
}

}  // namespace h5tile::detail::gpu
