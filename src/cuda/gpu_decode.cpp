// Compressed chunks decoded on the GPU (gpu/decode.hpp). A read goes in batches: the workers
// pread a batch's stored chunks into one of two pinned buffers while the GPU decodes the batch
// before; a batch is then, in order on one stream: copied to the device (with its table of
// pieces), decoded by one batched nvCOMP call, for deflate summed by the Adler-32 kernel (one
// launch for the batch: nvCOMP does not check the zlib trailer), unshuffled, copied into place
// (each chunk's part clipped as the CPU path clips it), and its nvCOMP statuses and Adler-32s
// copied back, checked (the Adler-32s against the trailers) before the pinned buffer is filled
// again. Device buffers are kept per device for the next read.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "cuda/check.hpp"
#include "cuda/kernels.hpp"
#include "cuda/nvcomp.hpp"
#include "engine/raw_transfer.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/decode.hpp"

namespace h5tile::detail::gpu {
namespace {

constexpr std::size_t kAlign = 16;        // where each stored chunk's first piece starts
constexpr std::size_t kChunkAlign = 256;  // decoded chunks start this far apart (at least)
constexpr std::size_t kMostChunksPerBatch = 8192;

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::atomic<std::uint64_t> pinned_total{0};  // held by every decoder's pinned buffers

// Pinned host memory, grown or shrunk to what a read asks for.
class Pinned {
 public:
  Pinned() = default;
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  ~Pinned() { reset(); }
  void resize(std::size_t bytes) {
    if (bytes == size_) return;
    reset();
    void* p = nullptr;
    cuda_check(cudaHostAlloc(&p, std::max<std::size_t>(bytes, 1), cudaHostAllocPortable),
               fmt::format("cudaHostAlloc of {} bytes", bytes));
    p_ = static_cast<std::byte*>(p);
    size_ = bytes;
    pinned_total += bytes;
  }
  void reserve(std::size_t bytes) {
    if (bytes > size_) resize(std::max(bytes, 2 * size_));
  }
  [[nodiscard]] std::byte* data() const noexcept { return p_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  void reset() noexcept {
    if (p_ != nullptr) (void)cudaFreeHost(p_);
    pinned_total -= size_;
    p_ = nullptr;
    size_ = 0;
  }
  std::byte* p_ = nullptr;
  std::size_t size_ = 0;
};

// Device memory that grows; growing waits for `stream` (the memory may still be in use there).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p_ != nullptr) (void)cudaFree(p_);
  }
  std::byte* reserve(std::size_t bytes, cudaStream_t stream) {
    if (bytes > size_) {
      cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      if (p_ != nullptr) (void)cudaFree(p_);
      p_ = nullptr;
      size_ = 0;
      void* p = nullptr;
      cuda_check(cudaMalloc(&p, bytes), fmt::format("cudaMalloc of {} bytes for GPU decoding", bytes));
      p_ = static_cast<std::byte*>(p);
      size_ = bytes;
    }
    return p_;
  }
  [[nodiscard]] std::byte* data() const noexcept { return p_; }

 private:
  std::byte* p_ = nullptr;
  std::size_t size_ = 0;
};

// A piece of a batch that nvCOMP decodes: for its status, the chunk it belongs to and its size;
// for deflate (one piece per chunk), the Adler-32 its stream ends with.
struct PieceCheck {
  std::size_t chunk = 0;  // index in the request
  std::uint64_t decoded = 0;
  std::uint32_t trailer = 0;
};

// One of the two pinned buffers: a batch's stored chunks, its table of pieces, the results
// copied back, and the event after which the GPU is done with all of them.
struct Half {
  Pinned data;
  Pinned table;    // per piece: input pointer, input bytes, output capacity, output pointer
  Pinned results;  // per piece: decoded bytes (8); then per piece: status (4); for deflate, per piece: Adler-32 (4)
  cudaEvent_t done = nullptr;
  cudaEvent_t marks[6] = {};  // NOLINT(*-avoid-c-arrays): timing: before H2D, after H2D, decode, check, unshuffle, scatter
  bool pending = false;
  std::vector<PieceCheck> checks;
  std::size_t first = 0;            // the request's index of the batch's first chunk
  std::vector<std::size_t> places;  // where each chunk of the batch starts in `data`
};

// The GPU decoder of one device: one read at a time (its mutex), its stream, its buffers.
struct Decoder {
  explicit Decoder(int device) {
    const DeviceScope scope(device);
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    for (auto& h : halves) {
      cuda_check(cudaEventCreateWithFlags(&h.done, cudaEventDisableTiming), "cudaEventCreate");
      for (auto& m : h.marks) cuda_check(cudaEventCreate(&m), "cudaEventCreate");
    }
  }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  std::mutex mutex;
  cudaStream_t stream = nullptr;
  Half halves[2];  // NOLINT(*-avoid-c-arrays)
  DeviceBuffer in, table, results, decoded, unshuffled, temp, adler32_scratch, redone;
};

std::mutex decoders_mutex;
// Never destroyed: freeing CUDA memory while the process exits (after the runtime unloads) fails.
std::map<int, Decoder*> decoders;

Decoder& decoder_for(int device) {
  const std::lock_guard lock(decoders_mutex);
  auto& d = decoders[device];
  if (d == nullptr) d = new Decoder(device);  // NOLINT(cppcoreguidelines-owning-memory): see above
  return *d;
}

// Copies box `extent` between row-major arrays of `src_shape` (at `src`, its first element) and
// `dst_shape` (at `dst`) in device memory: trailing axes that both hold whole merge into one run,
// then one 2-D or 3-D copy per remaining outer index.
void copy_box(std::byte* dst, const Shape& dst_shape, const std::byte* src, const Shape& src_shape, const Shape& extent,
              std::size_t es, cudaStream_t stream) {
  const auto rank = extent.size();
  if (rank == 0) {
    cuda_check(cudaMemcpyAsync(dst, src, es, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    return;
  }
  const auto src_strides = rowmajor_strides(src_shape, es);
  const auto dst_strides = rowmajor_strides(dst_shape, es);
  std::size_t k = rank - 1;  // first axis of the run
  std::size_t width = extent[k] * es;
  while (k > 0 && extent[k] == src_shape[k] && extent[k] == dst_shape[k]) {
    --k;
    width *= extent[k];
  }
  if (k == 0) {
    cuda_check(cudaMemcpyAsync(dst, src, width, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    return;
  }
  // Axes k - 1 (rows) and, where there is one, k - 2 (slices) go in one copy; the rest loop.
  const std::size_t row = k - 1;
  const bool slices = row > 0;
  const std::size_t outer = slices ? row - 1 : 0;
  std::vector<std::uint64_t> idx(outer, 0);
  for (;;) {
    const std::byte* s = src;
    std::byte* d = dst;
    for (std::size_t a = 0; a < outer; ++a) {
      s += static_cast<std::int64_t>(idx[a]) * src_strides[a];
      d += static_cast<std::int64_t>(idx[a]) * dst_strides[a];
    }
    const auto spitch = static_cast<std::size_t>(src_strides[row]);
    const auto dpitch = static_cast<std::size_t>(dst_strides[row]);
    if (!slices) {
      cuda_check(cudaMemcpy2DAsync(d, dpitch, s, spitch, width, extent[row], cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpy2DAsync");
    } else {
      cudaMemcpy3DParms p{};
      // cudaPitchedPtr: pointer, row pitch, row width, rows per slice.
      p.srcPtr = {const_cast<std::byte*>(s), spitch, width,  // NOLINT(*-const-cast)
                  static_cast<std::size_t>(src_strides[row - 1]) / spitch};
      p.dstPtr = {d, dpitch, width, static_cast<std::size_t>(dst_strides[row - 1]) / dpitch};
      p.extent = {width, extent[row], extent[row - 1]};
      p.kind = cudaMemcpyDeviceToDevice;
      cuda_check(cudaMemcpy3DAsync(&p, stream), "cudaMemcpy3DAsync");
    }
    std::size_t a = outer;
    while (a > 0 && ++idx[a - 1] == extent[a - 1]) {
      idx[a - 1] = 0;
      --a;
    }
    if (a == 0) return;
  }
}

std::uint64_t linear(const Shape& offset, const Shape& shape) {
  std::uint64_t v = 0;
  for (std::size_t a = 0; a < shape.size(); ++a) v = v * shape[a] + offset[a];
  return v;
}

class Run {
 public:
  Run(const DecodeRequest& r, Decoder& d, const Nvcomp& n, std::byte* out, const Shape& out_shape, unsigned threads,
      const Staging& staging, Progress* progress)
      : r_(r),
        d_(d),
        codec_(n.codec(r.filters.codec)),
        nvcomp_(n),
        out_(out),
        out_shape_(out_shape),
        threads_(threads),
        progress_(progress) {
    es_ = r.elem_size;
    chunk_bytes_ = element_count(r.chunk) * es_;
    stride_ = align_up(chunk_bytes_, kChunkAlign);
    std::uint64_t largest = 0;
    for (const auto& c : r.chunks) largest = std::max(largest, c.stored_bytes);
    half_bytes_ = std::max<std::size_t>(staging.bytes / 2, largest + 2 * kAlign);
    batch_chunks_ =
        std::clamp<std::size_t>(2 * staging.bytes / std::max<std::size_t>(stride_, 1), 1, kMostChunksPerBatch);
    for (auto& h : d_.halves) h.data.resize(half_bytes_);
    d_.in.reserve(half_bytes_, d_.stream);
    d_.decoded.reserve(batch_chunks_ * stride_, d_.stream);
    if (r.filters.shuffle_bytes > 1) d_.unshuffled.reserve(batch_chunks_ * stride_, d_.stream);
  }

  void run() {
    const auto start = std::chrono::steady_clock::now();
    std::size_t k = 0;
    for (std::size_t begin = 0; begin < r_.chunks.size(); ++k) {
      Half& h = d_.halves[k % 2];
      finish(h);
      begin = fill_and_submit(h, begin);
    }
    for (auto& h : d_.halves) finish(h);
    phases_.wall = seconds_since(start);
    note_decode_phases(phases_);
  }

  // After an error: let the GPU finish with the buffers before anyone reuses them.
  void abandon() noexcept {
    (void)cudaStreamSynchronize(d_.stream);
    for (auto& h : d_.halves) h.pending = false;
    (void)cudaGetLastError();
  }

 private:
  // Waits for the batch last submitted from `h`, then checks nvCOMP's statuses and sizes, and
  // deflate's Adler-32s.
  void finish(Half& h) {
    if (!h.pending) return;
    const auto waited = std::chrono::steady_clock::now();
    cuda_check(cudaEventSynchronize(h.done), "cudaEventSynchronize");
    phases_.wait += seconds_since(waited);
    h.pending = false;
    double* sums[5] = {&phases_.h2d, &phases_.decode, &phases_.check, &phases_.unshuffle,  // NOLINT(*-avoid-c-arrays)
                       &phases_.scatter};
    for (std::size_t m = 0; m < 5; ++m) {
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, h.marks[m], h.marks[m + 1]), "cudaEventElapsedTime");
      *sums[m] += ms / 1000.0;
    }
    const auto n = h.checks.size();
    const auto* sizes = reinterpret_cast<const std::size_t*>(h.results.data());
    const auto* statuses = reinterpret_cast<const nvcomp_abi::Status*>(h.results.data() + 8 * n);
    const auto* adler32s = reinterpret_cast<const std::uint32_t*>(h.results.data() + 12 * n);
    std::size_t last_redone = r_.chunks.size();  // a chunk of several pieces is decoded again once
    for (std::size_t i = 0; i < n; ++i) {
      const auto chunk = h.checks[i].chunk;
      std::string why;
      if (statuses[i] != 0 || sizes[i] != h.checks[i].decoded) {
        why = fmt::format("cannot be decoded on the GPU: {}: {}", codec_name(r_.filters.codec),
                          statuses[i] != 0 ? nvcomp_.describe(statuses[i])
                                           : fmt::format("decodes to {} bytes, not {}", sizes[i], h.checks[i].decoded));
      } else if (checks_adler32()) {
        // As the CPU path words a damaged chunk (layout/source.cpp, with the filter's name).
        if (const auto mismatch = adler32_mismatch(h.checks[i].trailer, adler32s[i], r_.chunks[chunk].stored_bytes);
            !mismatch.empty()) {
          why = fmt::format("cannot be decoded: {}: {}", codec_name(r_.filters.codec), mismatch);
        }
      }
      if (!why.empty() && chunk != last_redone) {
        decode_again_on_cpu(h, chunk, why);
        last_redone = chunk;
      }
    }
  }

  // A chunk the GPU did not decode, or whose Adler-32 disagrees (`why`): the CPU's decoder reads
  // its stored bytes (still in `h`) as HDF5 would, for example a zlib stream with bytes after its
  // end, whose last four bytes are then not its Adler-32; its part is copied over what the GPU put
  // in place. A chunk the CPU cannot decode either fails the read with the CPU's reason.
  void decode_again_on_cpu(const Half& h, std::size_t chunk, const std::string& why) {
    const auto& c = r_.chunks[chunk];
    const auto named = [&](const std::string& reason) {
      return fmt::format("chunk {} of {} (at byte {} of '{}') {}", to_string(Box{c.origin, r_.chunk}), r_.where,
                         c.file_offset, r_.file->name(), reason);
    };
    if (!r_.cpu) throw RuntimeError(named(why));
    ByteBuffer data;
    ByteBuffer scratch;
    data.resize(c.stored_bytes);
    std::memcpy(data.data(), h.data.data() + h.places[chunk - h.first], c.stored_bytes);
    try {
      r_.cpu->decode(data, scratch, 0, chunk_bytes_);  // the GPU decodes chunks with no filter skipped only
    } catch (const RuntimeError& e) {
      throw RuntimeError(named(fmt::format("cannot be decoded: {}", e.what())));
    }
    std::byte* redone = d_.redone.reserve(chunk_bytes_, d_.stream);
    // On the stream, before the copy into place: a cudaMemcpy from pageable memory may return
    // before its bytes arrive, and this stream does not wait for the default one.
    cuda_check(cudaMemcpyAsync(redone, data.data(), chunk_bytes_, cudaMemcpyHostToDevice, d_.stream),
               "cudaMemcpyAsync");
    copy_box(out_ + linear(c.dst_offset, out_shape_) * es_, out_shape_, redone + linear(c.part.offset, r_.chunk) * es_,
             r_.chunk, c.part.extent, es_, d_.stream);
    cuda_check(cudaStreamSynchronize(d_.stream), "cudaStreamSynchronize");  // `data` and `redone` free again
  }

  // Deflate's zlib streams end with an Adler-32 that nvCOMP leaves unchecked; it is one piece per
  // chunk, so piece i of a batch is chunk i.
  [[nodiscard]] bool checks_adler32() const noexcept { return r_.filters.codec == GpuCodec::Deflate; }

  // Reads chunks from `begin` on into `h`, as many as fit, and submits their work to the GPU.
  // Returns the first chunk not taken.
  std::size_t fill_and_submit(Half& h, std::size_t begin) {
    // Where each chunk goes in the pinned buffer: its first piece at a multiple of kAlign.
    const std::size_t skip = r_.filters.codec == GpuCodec::Deflate ? kZlibHeaderBytes : 0;
    std::vector<std::size_t> place;
    std::size_t used = 0;
    std::size_t end = begin;
    while (end < r_.chunks.size() && end - begin < batch_chunks_) {
      const std::size_t at = align_up(used + skip, kAlign) - skip;
      if (at + r_.chunks[end].stored_bytes > half_bytes_ && end > begin) break;
      place.push_back(at);
      used = at + r_.chunks[end].stored_bytes;
      ++end;
    }
    const auto count = end - begin;
    std::vector<std::vector<StoredPiece>> pieces(count);
    const auto read_start = std::chrono::steady_clock::now();
    parallel_for(count, threads_, [&](std::size_t i) {
      const auto& c = r_.chunks[begin + i];
      std::byte* p = h.data.data() + place[i];
      r_.file->read_at(p, c.stored_bytes, c.file_offset);
      try {
        split_stored_chunk(r_.filters.codec, p, c.stored_bytes, chunk_bytes_, pieces[i]);
      } catch (const RuntimeError& e) {
        throw RuntimeError(fmt::format("chunk {} of {} (at byte {} of '{}') cannot be decoded: {}: {}",
                                       to_string(Box{c.origin, r_.chunk}), r_.where, c.file_offset, r_.file->name(),
                                       codec_name(r_.filters.codec), e.what()));
      }
    });
    phases_.read += seconds_since(read_start);
    ++phases_.batches;
    phases_.chunks += count;
    phases_.stored_bytes += used;
    // The table nvCOMP reads, and the raw pieces (lz4 blocks stored as they are) copied instead.
    std::size_t n = 0;
    std::uint64_t most = 0;
    std::uint64_t total = 0;
    for (const auto& ps : pieces) {
      for (const auto& p : ps) {
        if (p.raw) continue;
        ++n;
        most = std::max(most, p.decoded);
        total += p.decoded;
      }
    }
    h.table.reserve(32 * n);
    h.results.reserve(16 * n);
    std::byte* in = d_.in.data();
    std::byte* table = d_.table.reserve(32 * std::max<std::size_t>(n, 1), d_.stream);
    std::byte* results = d_.results.reserve(16 * std::max<std::size_t>(n, 1), d_.stream);
    std::byte* adler32_scratch =
        checks_adler32() ? d_.adler32_scratch.reserve(adler32_scratch_bytes(chunk_bytes_, count), d_.stream) : nullptr;
    std::byte* decoded = d_.decoded.data();
    auto* in_ptrs = reinterpret_cast<const void**>(h.table.data());
    auto* in_bytes = reinterpret_cast<std::size_t*>(h.table.data() + 8 * n);
    auto* out_capacity = reinterpret_cast<std::size_t*>(h.table.data() + 16 * n);
    auto* out_ptrs = reinterpret_cast<void**>(h.table.data() + 24 * n);
    struct RawCopy {
      std::byte* dst;
      const std::byte* src;
      std::size_t bytes;
    };
    std::vector<RawCopy> raw;
    h.checks.clear();
    std::size_t j = 0;
    for (std::size_t i = 0; i < count; ++i) {
      for (const auto& p : pieces[i]) {
        const std::byte* src = in + place[i] + p.offset;
        std::byte* dst = decoded + i * stride_ + p.out_offset;
        if (p.raw) {
          raw.push_back({dst, src, p.decoded});
          continue;
        }
        in_ptrs[j] = src;
        in_bytes[j] = p.size;
        out_capacity[j] = p.decoded;
        out_ptrs[j] = dst;
        const auto trailer =
            checks_adler32() ? zlib_trailer(h.data.data() + place[i], r_.chunks[begin + i].stored_bytes) : 0;
        h.checks.push_back({begin + i, p.decoded, trailer});
        ++j;
      }
    }
    h.first = begin;
    h.places = place;
    if (checks_adler32() && n != count) {
      throw RuntimeError(fmt::format("GPU decoding of {}: {} deflate pieces for {} chunks", r_.where, n, count));
    }
    std::size_t temp_bytes = 0;
    if (n > 0) {
      if (const auto s = codec_.temp_size(n, most, nvcomp_abi::DecompressOpts{}, &temp_bytes, total, d_.stream);
          s != 0) {
        throw RuntimeError(
            fmt::format("nvCOMP {} temp size for {} chunks: {}", codec_name(r_.filters.codec), n, nvcomp_.describe(s)));
      }
    }
    std::byte* temp = d_.temp.reserve(std::max<std::size_t>(temp_bytes, 1), d_.stream);

    // In order on the stream: the copies in, the decoding, the unshuffling, the copies into place.
    const auto stream = d_.stream;
    cuda_check(cudaEventRecord(h.marks[0], stream), "cudaEventRecord");
    cuda_check(cudaMemcpyAsync(in, h.data.data(), used, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    if (n > 0) {
      cuda_check(cudaMemcpyAsync(table, h.table.data(), 32 * n, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    }
    cuda_check(cudaEventRecord(h.marks[1], stream), "cudaEventRecord");
    if (n > 0) {
      const auto s = codec_.decompress(
          reinterpret_cast<const void* const*>(table), reinterpret_cast<const std::size_t*>(table + 8 * n),
          reinterpret_cast<const std::size_t*>(table + 16 * n), reinterpret_cast<std::size_t*>(results), n, temp,
          temp_bytes, reinterpret_cast<void* const*>(table + 24 * n), nvcomp_abi::DecompressOpts{},
          reinterpret_cast<nvcomp_abi::Status*>(results + 8 * n), stream);
      if (s != 0) {
        throw RuntimeError(fmt::format("nvcompBatched{}DecompressAsync of {} chunks of {}: {}",
                                       codec_name(r_.filters.codec), n, r_.where, nvcomp_.describe(s)));
      }
    }
    for (const auto& c : raw) {
      cuda_check(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    }
    cuda_check(cudaEventRecord(h.marks[2], stream), "cudaEventRecord");
    if (checks_adler32()) {
      adler32_chunks(decoded, chunk_bytes_, stride_, count, reinterpret_cast<std::uint32_t*>(results + 12 * n),
                     adler32_scratch, stream);
    }
    cuda_check(cudaEventRecord(h.marks[3], stream), "cudaEventRecord");
    const std::byte* ready = decoded;
    if (r_.filters.shuffle_bytes > 1) {
      unshuffle_chunks(decoded, d_.unshuffled.data(), chunk_bytes_, stride_, count, r_.filters.shuffle_bytes, stream);
      ready = d_.unshuffled.data();
    }
    cuda_check(cudaEventRecord(h.marks[4], stream), "cudaEventRecord");
    std::uint64_t placed = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const auto& c = r_.chunks[begin + i];
      copy_box(out_ + linear(c.dst_offset, out_shape_) * es_, out_shape_,
               ready + i * stride_ + linear(c.part.offset, r_.chunk) * es_, r_.chunk, c.part.extent, es_, stream);
      placed += c.part.count() * es_;
    }
    cuda_check(cudaEventRecord(h.marks[5], stream), "cudaEventRecord");
    if (n > 0) {
      const std::size_t back = checks_adler32() ? 16 * n : 12 * n;
      cuda_check(cudaMemcpyAsync(h.results.data(), results, back, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    }
    cuda_check(cudaEventRecord(h.done, stream), "cudaEventRecord");
    h.pending = true;
    if (progress_ != nullptr) progress_->add(placed);
    return end;
  }

  const DecodeRequest& r_;
  Decoder& d_;
  const NvcompCodec& codec_;
  const Nvcomp& nvcomp_;
  std::byte* out_;
  const Shape& out_shape_;
  unsigned threads_;
  Progress* progress_;
  std::size_t es_ = 0;
  std::size_t chunk_bytes_ = 0;
  std::size_t stride_ = 0;
  std::size_t half_bytes_ = 0;
  std::size_t batch_chunks_ = 0;
  DecodePhases phases_;
};

}  // namespace

void decode_to_device(int device, const DecodeRequest& request, std::byte* out, const Shape& out_shape,
                      const std::string& library, unsigned threads, const Staging& staging, Progress* progress) {
  const auto& n = nvcomp(library);
  if (!n.failure.empty()) throw RuntimeError(n.failure);
  if (request.chunks.empty()) return;
  const DeviceScope scope(device);
  Decoder& d = decoder_for(device);
  const std::lock_guard lock(d.mutex);
  Run run(request, d, n, out, out_shape, threads, staging, progress);
  try {
    run.run();
  } catch (...) {
    run.abandon();
    throw;
  }
  note_path("nvcomp");
}

std::uint64_t decoder_pinned_bytes() { return pinned_total.load(); }

}  // namespace h5tile::detail::gpu
