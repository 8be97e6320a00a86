// Compressed chunks decoded on the GPU (gpu/decode.hpp). A read is decoded in as few batches of
// consecutive chunks as the device window allows (nvCOMP decodes each chunk in one small part of the
// GPU, so its rate grows with the chunks of one call: on one H200, 170 chunks of 1 MiB took 46 ms
// of gzip, 1024 took 55). The workers pread the stored chunks into a ring of pinned buffers; each
// buffer is copied on the copy stream into its batch's device buffer, and is free again once that
// copy is done. When a batch's bytes have arrived, its stream (waiting for that copy, not the host)
// copies its table of pieces in, decodes it with one batched nvCOMP call, sums deflate's Adler-32s
// (one launch: nvCOMP does not check the zlib trailer), unshuffles, copies clipped chunks into
// place and copies its statuses back; where fletcher32 was applied last, one more launch sums the
// Fletcher-32 of every stored chunk of the batch (g.in, which nothing on the device writes) after
// the decoding, and the host checks those checksums before anything else of the batch. A chunk
// that is whole in the destination and one run there is decoded (no shuffle) or unshuffled
// straight into its place. The host waits for a batch only
// before its device buffers are used again (a read larger than the window) and at the end, and then
// checks its statuses, Fletcher-32s and Adler-32s. Buffers are kept per device for the next read.
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "cuda/check.hpp"
#include "cuda/copy_box.hpp"
#include "cuda/decode_buffers.hpp"
#include "cuda/kernels.hpp"
#include "cuda/nvcomp.hpp"
#include "engine/codecs/codec.hpp"
#include "engine/thread_pool.hpp"
#include "gpu/decode.hpp"

namespace h5tile::detail::gpu {
namespace {

constexpr std::size_t kAlign = 16;        // where each stored chunk's first piece starts
constexpr std::size_t kChunkAlign = 256;  // decoded chunks start this far apart (at least)
constexpr std::size_t kMostChunksPerBatch = 8192;
// Batches in flight: a read that the window holds is one batch (nvCOMP's rate grows with the
// chunks in one call, and batches on several streams overlapped less on one H200: 1 GiB of zstd
// decoded at 26 GB/s in one batch, 24 in two, 25 in four); a larger one goes in batches of half the
// window on two streams, the next read while the last decodes.
constexpr std::size_t kStreams = 2;
constexpr std::size_t kPinned = 4;  // pinned buffers on their way to the device
// The device memory that the batches in flight may hold (their stored and decoded bytes): this
// many times the staging size (4 GiB by default), at most a quarter of the device's free memory.
constexpr std::uint64_t kWindowPerStagingByte = 32;

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

float elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return ms;
}

// One pinned buffer of the ring: stored chunks on their way to the device.
struct PinnedSlot {
  Pinned data;
  Event start{true};
  Event end{true};  // the copy to the device is done: the buffer is free again
  bool pending = false;
};

// A piece that nvCOMP decodes: for its status, the chunk it belongs to and its size; for deflate
// (one piece per chunk), the Adler-32 its stream ends with.
struct PieceCheck {
  std::size_t chunk = 0;  // index in the request
  std::uint64_t decoded = 0;
  std::uint32_t trailer = 0;
};

// The buffers and the stream of one batch in flight (batch b uses region b % kStreams).
struct Region {
  Stream stream;
  Event arrived{false};  // on the copy stream: the batch's bytes are in
  Event marks[5] = {Event{true}, Event{true}, Event{true}, Event{true}, Event{true}};  // NOLINT(*-avoid-c-arrays)
  Event done{true};  // the batch is decoded, in place, and its results copied back
  // per piece: input pointer, input bytes, output capacity, output pointer; per chunk: 2 pointers,
  // and with fletcher32 its stored bytes' pointer and size (without the checksum)
  Pinned table;
  Pinned results;  // per piece: decoded bytes (8), status (4); per chunk: Adler-32 (4), Fletcher-32 (4)
  DeviceBuffer in, table_d, results_d, decoded, unshuffled, temp, adler32_scratch, fletcher32_scratch;
  bool pending = false;
  std::size_t first = 0;  // the request's index of the batch's first chunk
  std::size_t count = 0;
  std::vector<PieceCheck> checks;
  std::vector<std::uint32_t> fletcher32_stored;  // per chunk: the checksum its stored bytes end with
};

// The GPU decoder of one device: one read at a time (its mutex), its streams, its buffers. Made
// with its device current (decode_to_device).
struct Decoder {
  Decoder() = default;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  std::mutex mutex;
  Stream copy;
  PinnedSlot pinned[kPinned];  // NOLINT(*-avoid-c-arrays)
  Region regions[kStreams];    // NOLINT(*-avoid-c-arrays)
  DeviceBuffer redone;
};

std::mutex decoders_mutex;
// Never destroyed: freeing CUDA memory while the process exits (after the runtime unloads) fails.
std::map<int, Decoder*> decoders;

Decoder& decoder_for(int device) {
  const std::lock_guard lock(decoders_mutex);
  auto& d = decoders[device];
  if (d == nullptr) d = new Decoder();  // NOLINT(cppcoreguidelines-owning-memory): see above
  return *d;
}

std::uint64_t linear(const Shape& offset, const Shape& shape) {
  std::uint64_t v = 0;
  for (std::size_t a = 0; a < shape.size(); ++a) v = v * shape[a] + offset[a];
  return v;
}

// True when box (`offset`, `extent`) of a row-major array of `shape` is one run of elements.
bool one_run(const Shape& extent, const Shape& shape) {
  std::size_t a = 0;
  while (a < extent.size() && extent[a] == 1) ++a;  // leading unit axes
  for (++a; a < extent.size(); ++a) {
    if (extent[a] != shape[a]) return false;
  }
  return true;
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
    const auto start = std::chrono::steady_clock::now();
    es_ = r.elem_size;
    chunk_bytes_ = element_count(r.chunk) * es_;
    stride_ = align_up(chunk_bytes_, kChunkAlign);
    shuffled_ = r.filters.shuffle_bytes > 1;
    const std::size_t count = r.chunks.size();
    // Which chunks go straight into the destination: whole there, one run, aligned for the kernels
    // and nvCOMP.
    direct_.resize(count);
    bool scattered = false;
    std::uint64_t stored = 0;
    std::uint64_t largest = 0;
    const auto out_align = std::max<std::size_t>({kAlign, codec_.align.output, 1});
    for (std::size_t i = 0; i < count; ++i) {
      const auto& c = r.chunks[i];
      stored += c.stored_bytes;
      largest = std::max(largest, c.stored_bytes);
      const auto dst = reinterpret_cast<std::uintptr_t>(place_of(i));
      const bool whole = c.part.extent == r.chunk && std::all_of(c.part.offset.begin(), c.part.offset.end(),
                                                                 [](std::uint64_t v) { return v == 0; });
      direct_[i] = whole && one_run(c.part.extent, out_shape) && dst % out_align == 0;
      scattered = scattered || !direct_[i];
    }
    // Batches: the whole read where half the device window holds it, else half the window each.
    const std::uint64_t per_chunk = align_up(stored / count + kAlign, kAlign) + (shuffled_ || scattered ? stride_ : 0) +
                                    (shuffled_ && scattered ? stride_ : 0);
    std::size_t free = 0;
    std::size_t total = 0;
    cuda_check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    const std::uint64_t window = std::min<std::uint64_t>(kWindowPerStagingByte * staging.bytes, free / 4);
    batch_chunks_ = static_cast<std::size_t>(
        std::clamp<std::uint64_t>(window / kStreams / per_chunk, 1, std::min(count, kMostChunksPerBatch)));
    // Where each chunk lies in its batch's device buffer: its first piece at a multiple of kAlign.
    const std::size_t skip = r.filters.codec == GpuCodec::Deflate ? kZlibHeaderBytes : 0;
    place_.resize(count);
    std::size_t most_in = 0;
    for (std::size_t b = 0; b < count; b += batch_chunks_) {
      std::size_t used = 0;
      for (std::size_t i = b; i < std::min(count, b + batch_chunks_); ++i) {
        place_[i] = align_up(used + skip, kAlign) - skip;
        used = place_[i] + r.chunks[i].stored_bytes;
      }
      most_in = std::max(most_in, used);
    }
    largest_stored_ = largest;
    pinned_bytes_ = std::max<std::size_t>(staging.bytes / kPinned, largest + kAlign);
    for (auto& p : d_.pinned) {
      if (p.data.size() < pinned_bytes_ || p.data.size() > 2 * pinned_bytes_) p.data.resize(pinned_bytes_);
    }
    const std::size_t scratch = batch_chunks_ * stride_;
    const std::size_t batches = (count + batch_chunks_ - 1) / batch_chunks_;
    for (std::size_t k = 0; k < std::min(kStreams, batches); ++k) {
      auto& g = d_.regions[k];
      g.in.reserve(most_in, g.stream.get());
      if (shuffled_ || scattered) g.decoded.reserve(scratch, g.stream.get());
      if (shuffled_ && scattered) g.unshuffled.reserve(scratch, g.stream.get());
      if (checks_adler32())
        g.adler32_scratch.reserve(adler32_scratch_bytes(chunk_bytes_, batch_chunks_), g.stream.get());
      if (checks_fletcher32())
        g.fletcher32_scratch.reserve(fletcher32_scratch_bytes(largest_stored_, batch_chunks_), g.stream.get());
      temp(g, batch_chunks_, chunk_bytes_, batch_chunks_ * chunk_bytes_);
    }
    phases_.setup = seconds_since(start);
  }

  void run() {
    const auto start = std::chrono::steady_clock::now();
    std::size_t batch = 0;
    for (std::size_t first = 0; first < r_.chunks.size(); first += batch_chunks_, ++batch) {
      Region& g = d_.regions[batch % kStreams];
      finish(g);
      submit(g, first, std::min(r_.chunks.size(), first + batch_chunks_));
    }
    for (auto& g : d_.regions) finish(g);
    for (auto& p : d_.pinned) release(p);
    phases_.wall = seconds_since(start);
    note_decode_phases(phases_);
  }

  // After an error: let the GPU finish with the buffers before anyone reuses them.
  void abandon() noexcept {
    (void)cudaStreamSynchronize(d_.copy.get());
    for (auto& g : d_.regions) {
      (void)cudaStreamSynchronize(g.stream.get());
      g.pending = false;
    }
    for (auto& p : d_.pinned) p.pending = false;
    (void)cudaGetLastError();
  }

 private:
  // Where chunk i's part goes in the destination.
  [[nodiscard]] std::byte* place_of(std::size_t i) const {
    return out_ + linear(r_.chunks[i].dst_offset, out_shape_) * es_;
  }

  // Deflate's zlib streams end with an Adler-32 that nvCOMP leaves unchecked; it is one piece per
  // chunk, so piece i of a batch is chunk i.
  [[nodiscard]] bool checks_adler32() const noexcept { return r_.filters.codec == GpuCodec::Deflate; }

  // Fletcher-32, applied last, covers a stored chunk's bytes before its 4-byte checksum.
  [[nodiscard]] bool checks_fletcher32() const noexcept { return r_.filters.fletcher32; }

  // Chunk i cannot be decoded, for `reason`: worded as the CPU path words it (layout/source.cpp).
  [[nodiscard]] RuntimeError chunk_error(std::size_t i, const std::string& reason) const {
    const auto& c = r_.chunks[i];
    return RuntimeError(fmt::format("chunk {} of {} (at byte {} of '{}') {}", to_string(Box{c.origin, r_.chunk}),
                                    r_.where, c.file_offset, r_.file->name(), reason));
  }

  // Where a chunk's stored bytes (`size` at `data`) could not be split for its codec: the
  // Fletcher-32 mismatch that the CPU path, which checks it first, would report instead, if any.
  [[nodiscard]] std::string fletcher32_error(const std::byte* data, std::size_t size) const {
    if (!checks_fletcher32() || size < 4) return "";
    const auto mismatch = fletcher32_mismatch(fletcher32_trailer(data, size), fletcher32(data, size - 4));
    return mismatch.empty() ? "" : "cannot be decoded: fletcher32: " + mismatch;
  }

  // nvCOMP's scratch memory for `pieces` pieces of at most `most` bytes, `total` in all.
  std::pair<std::byte*, std::size_t> temp(Region& g, std::size_t pieces, std::uint64_t most, std::uint64_t total) {
    std::size_t bytes = 0;
    if (pieces > 0) {
      if (const auto s = codec_.temp_size(pieces, most, nvcomp_abi::DecompressOpts{}, &bytes, total, g.stream.get());
          s != 0) {
        throw RuntimeError(fmt::format("nvCOMP {} temp size for {} chunks: {}", codec_name(r_.filters.codec), pieces,
                                       nvcomp_.describe(s)));
      }
    }
    return {g.temp.reserve(std::max<std::size_t>(bytes, 1), g.stream.get()), bytes};
  }

  // Waits until pinned buffer `p` has gone to the device.
  void release(PinnedSlot& p) {
    if (!p.pending) return;
    const auto waited = std::chrono::steady_clock::now();
    cuda_check(cudaEventSynchronize(p.end.get()), "cudaEventSynchronize");
    phases_.wait += seconds_since(waited);
    phases_.h2d += elapsed_ms(p.start.get(), p.end.get()) / 1000.0;
    p.pending = false;
  }

  // Reads chunks [first, end) into the pinned ring and copies them into `g.in`, splitting each into
  // its pieces (`pieces[i - first]`) and noting deflate's trailers (`trailers`) and fletcher32's
  // checksums (g.fletcher32_stored).
  void read_batch(Region& g, std::size_t first, std::size_t end, std::vector<std::vector<StoredPiece>>& pieces,
                  std::vector<std::uint32_t>& trailers) {
    for (std::size_t begin = first; begin < end;) {
      std::size_t stop = begin + 1;
      while (stop < end && place_[stop] + r_.chunks[stop].stored_bytes - place_[begin] <= pinned_bytes_) ++stop;
      PinnedSlot& p = d_.pinned[slot_++ % kPinned];
      release(p);
      const auto read_start = std::chrono::steady_clock::now();
      parallel_for(stop - begin, threads_, [&](std::size_t k) {
        const auto i = begin + k;
        const auto& c = r_.chunks[i];
        std::byte* at = p.data.data() + (place_[i] - place_[begin]);
        r_.file->read_at(at, c.stored_bytes, c.file_offset);
        std::size_t size = 0;  // the bytes the codec decodes
        try {
          size = codec_bytes(r_.filters, c.stored_bytes);
        } catch (const RuntimeError& e) {
          throw chunk_error(i, fmt::format("cannot be decoded: {}", e.what()));
        }
        try {
          split_stored_chunk(r_.filters.codec, at, size, chunk_bytes_, pieces[i - first]);
        } catch (const RuntimeError& e) {
          if (auto mismatch = fletcher32_error(at, c.stored_bytes); !mismatch.empty()) throw chunk_error(i, mismatch);
          throw chunk_error(i, fmt::format("cannot be decoded: {}: {}", codec_name(r_.filters.codec), e.what()));
        }
        if (checks_adler32()) trailers[i - first] = zlib_trailer(at, size);
        if (checks_fletcher32()) g.fletcher32_stored[i - first] = fletcher32_trailer(at, c.stored_bytes);
      });
      phases_.read += seconds_since(read_start);
      const std::size_t bytes = place_[stop - 1] + r_.chunks[stop - 1].stored_bytes - place_[begin];
      phases_.stored_bytes += bytes;
      const auto copy = d_.copy.get();
      p.start.record(copy);
      cuda_check(cudaMemcpyAsync(g.in.data() + place_[begin], p.data.data(), bytes, cudaMemcpyHostToDevice, copy),
                 "cudaMemcpyAsync");
      p.end.record(copy);
      p.pending = true;
      begin = stop;
    }
    g.arrived.record(d_.copy.get());
  }

  // Reads batch [first, end) and queues its decoding on `g`'s stream.
  void submit(Region& g, std::size_t first, std::size_t end) {
    const auto count = end - first;
    std::vector<std::vector<StoredPiece>> pieces(count);
    std::vector<std::uint32_t> trailers(count);
    g.fletcher32_stored.assign(checks_fletcher32() ? count : 0, 0);
    read_batch(g, first, end, pieces, trailers);
    ++phases_.batches;
    phases_.chunks += count;

    std::size_t n = 0;  // pieces nvCOMP decodes (not the raw lz4 blocks, copied)
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
    if (checks_adler32() && n != count) {
      throw RuntimeError(fmt::format("GPU decoding of {}: {} deflate pieces for {} chunks", r_.where, n, count));
    }
    // The table: nvCOMP's four arrays, then per chunk where it is decoded and where it is
    // unshuffled, and with fletcher32 where its stored bytes are and how many the checksum covers.
    const std::size_t table_bytes = 32 * n + (checks_fletcher32() ? 32 : 16) * count;
    // The results: per piece its size and status, then per chunk its Adler-32 and its Fletcher-32.
    const std::size_t results_bytes = 12 * n + 8 * count;
    const std::size_t results_back = checks_fletcher32() ? results_bytes : 12 * n + (checks_adler32() ? 4 * count : 0);
    g.table.reserve(table_bytes);
    g.results.reserve(results_bytes);
    const auto stream = g.stream.get();
    std::byte* table = g.table_d.reserve(std::max<std::size_t>(table_bytes, 1), stream);
    std::byte* results = g.results_d.reserve(std::max<std::size_t>(results_bytes, 1), stream);
    const auto [temp_ptr, temp_bytes] = temp(g, n, most, total);
    auto* in_ptrs = reinterpret_cast<const void**>(g.table.data());
    auto* in_bytes = reinterpret_cast<std::size_t*>(g.table.data() + 8 * n);
    auto* out_capacity = reinterpret_cast<std::size_t*>(g.table.data() + 16 * n);
    auto* out_ptrs = reinterpret_cast<void**>(g.table.data() + 24 * n);
    auto* decoded_at = reinterpret_cast<std::byte**>(g.table.data() + 32 * n);
    auto* unshuffled_at = reinterpret_cast<std::byte**>(g.table.data() + 32 * n + 8 * count);
    auto* stored_at = reinterpret_cast<const std::byte**>(g.table.data() + 32 * n + 16 * count);
    auto* summed_bytes = reinterpret_cast<std::uint64_t*>(g.table.data() + 32 * n + 24 * count);
    struct RawCopy {
      std::byte* dst;
      const std::byte* src;
      std::size_t bytes;
    };
    std::vector<RawCopy> raw;
    g.checks.clear();
    std::size_t j = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const auto i = first + k;
      // Decoded into place where it is a run there and needs no unshuffling, else into scratch.
      std::byte* decoded = direct_[i] && !shuffled_ ? place_of(i) : g.decoded.data() + k * stride_;
      decoded_at[k] = decoded;
      unshuffled_at[k] = direct_[i] ? place_of(i) : g.unshuffled.data() + k * stride_;
      if (checks_fletcher32()) {
        stored_at[k] = g.in.data() + place_[i];
        summed_bytes[k] = r_.chunks[i].stored_bytes - 4;  // read_batch has checked there are 4
      }
      for (const auto& p : pieces[k]) {
        const std::byte* src = g.in.data() + place_[i] + p.offset;
        if (p.raw) {
          raw.push_back({decoded + p.out_offset, src, p.decoded});
          continue;
        }
        in_ptrs[j] = src;
        in_bytes[j] = p.size;
        out_capacity[j] = p.decoded;
        out_ptrs[j] = decoded + p.out_offset;
        g.checks.push_back({i, p.decoded, trailers[k]});
        ++j;
      }
    }
    g.first = first;
    g.count = count;

    // In order on the batch's stream, once its bytes are in: the table, the decoding, the checksums
    // (the Adler-32s of the decoded chunks, the Fletcher-32s of the stored ones), the unshuffling,
    // the copies into place, the results back.
    cuda_check(cudaStreamWaitEvent(stream, g.arrived.get(), 0), "cudaStreamWaitEvent");
    g.marks[0].record(stream);
    cuda_check(cudaMemcpyAsync(table, g.table.data(), table_bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    if (n > 0) {
      const auto s = codec_.decompress(
          reinterpret_cast<const void* const*>(table), reinterpret_cast<const std::size_t*>(table + 8 * n),
          reinterpret_cast<const std::size_t*>(table + 16 * n), reinterpret_cast<std::size_t*>(results), n, temp_ptr,
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
    g.marks[1].record(stream);
    const auto* decoded_list = reinterpret_cast<const std::byte* const*>(table + 32 * n);
    if (checks_adler32()) {
      adler32_listed(decoded_list, chunk_bytes_, count, reinterpret_cast<std::uint32_t*>(results + 12 * n),
                     g.adler32_scratch.data(), stream);
    }
    if (checks_fletcher32()) {
      fletcher32_listed(reinterpret_cast<const std::byte* const*>(table + 32 * n + 16 * count),
                        reinterpret_cast<const std::uint64_t*>(table + 32 * n + 24 * count), largest_stored_, count,
                        reinterpret_cast<std::uint32_t*>(results + 12 * n + 4 * count), g.fletcher32_scratch.data(),
                        stream);
    }
    g.marks[2].record(stream);
    if (shuffled_) {
      unshuffle_listed(decoded_list, reinterpret_cast<std::byte* const*>(table + 32 * n + 8 * count), chunk_bytes_,
                       count, r_.filters.shuffle_bytes, stream);
    }
    g.marks[3].record(stream);
    std::uint64_t placed = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const auto i = first + k;
      const auto& c = r_.chunks[i];
      if (!direct_[i]) {
        const std::byte* ready = shuffled_ ? unshuffled_at[k] : decoded_at[k];
        copy_box(place_of(i), out_shape_, ready + linear(c.part.offset, r_.chunk) * es_, r_.chunk, c.part.extent, es_,
                 stream);
      }
      placed += c.part.count() * es_;
    }
    g.marks[4].record(stream);
    if (results_back > 0) {
      cuda_check(cudaMemcpyAsync(g.results.data(), results, results_back, cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync");
    }
    g.done.record(stream);
    g.pending = true;
    if (progress_ != nullptr) progress_->add(placed);
  }

  // Waits for the batch last submitted on `g`, then checks fletcher32's checksums (first, as the CPU
  // path checks them: a chunk whose stored bytes are damaged fails the read with fletcher32's
  // reason), nvCOMP's statuses and sizes, and deflate's Adler-32s.
  void finish(Region& g) {
    if (!g.pending) return;
    const auto waited = std::chrono::steady_clock::now();
    cuda_check(cudaEventSynchronize(g.done.get()), "cudaEventSynchronize");
    phases_.wait += seconds_since(waited);
    g.pending = false;
    phases_.decode += elapsed_ms(g.marks[0].get(), g.marks[1].get()) / 1000.0;
    phases_.check += elapsed_ms(g.marks[1].get(), g.marks[2].get()) / 1000.0;
    phases_.unshuffle += elapsed_ms(g.marks[2].get(), g.marks[3].get()) / 1000.0;
    phases_.scatter += elapsed_ms(g.marks[3].get(), g.marks[4].get()) / 1000.0;
    const auto n = g.checks.size();
    const auto* sizes = reinterpret_cast<const std::size_t*>(g.results.data());
    const auto* statuses = reinterpret_cast<const nvcomp_abi::Status*>(g.results.data() + 8 * n);
    const auto* adler32s = reinterpret_cast<const std::uint32_t*>(g.results.data() + 12 * n);
    const auto* fletcher32s = reinterpret_cast<const std::uint32_t*>(g.results.data() + 12 * n + 4 * g.count);
    for (std::size_t k = 0; k < g.fletcher32_stored.size(); ++k) {
      if (const auto mismatch = fletcher32_mismatch(g.fletcher32_stored[k], fletcher32s[k]); !mismatch.empty()) {
        throw chunk_error(g.first + k, "cannot be decoded: fletcher32: " + mismatch);
      }
    }
    std::size_t last_redone = r_.chunks.size();  // a chunk of several pieces is decoded again once
    for (std::size_t i = 0; i < n; ++i) {
      const auto chunk = g.checks[i].chunk;
      std::string why;
      if (statuses[i] != 0 || sizes[i] != g.checks[i].decoded) {
        why = fmt::format("cannot be decoded on the GPU: {}: {}", codec_name(r_.filters.codec),
                          statuses[i] != 0 ? nvcomp_.describe(statuses[i])
                                           : fmt::format("decodes to {} bytes, not {}", sizes[i], g.checks[i].decoded));
      } else if (checks_adler32()) {
        // As the CPU path words a damaged chunk (layout/source.cpp, with the filter's name).
        // The deflate stream: the stored bytes but fletcher32's checksum (read_batch checked there are 4).
        const auto stream_bytes = codec_bytes(r_.filters, r_.chunks[chunk].stored_bytes);
        if (const auto mismatch = adler32_mismatch(g.checks[i].trailer, adler32s[i], stream_bytes); !mismatch.empty()) {
          why = fmt::format("cannot be decoded: {}: {}", codec_name(r_.filters.codec), mismatch);
        }
      }
      if (!why.empty() && chunk != last_redone) {
        decode_again_on_cpu(g, chunk, why);
        last_redone = chunk;
      }
    }
  }

  // A chunk the GPU did not decode, or whose Adler-32 disagrees (`why`): the CPU's decoder reads
  // its stored bytes (copied back from `g.in`) as HDF5 would, for example a zlib stream with bytes
  // after its end, whose last four bytes are then not its Adler-32; its part is copied over what
  // the GPU put in place. A chunk the CPU cannot decode either fails the read with the CPU's reason.
  void decode_again_on_cpu(Region& g, std::size_t chunk, const std::string& why) {
    const auto& c = r_.chunks[chunk];
    if (!r_.cpu) throw chunk_error(chunk, why);
    const auto stream = g.stream.get();
    ByteBuffer data;
    ByteBuffer scratch;
    data.resize(c.stored_bytes);
    cuda_check(
        cudaMemcpyAsync(data.data(), g.in.data() + place_[chunk], c.stored_bytes, cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync");
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    try {
      r_.cpu->decode(data, scratch, 0, chunk_bytes_);  // the GPU decodes chunks with no filter skipped only
    } catch (const RuntimeError& e) {
      throw chunk_error(chunk, fmt::format("cannot be decoded: {}", e.what()));
    }
    std::byte* redone = d_.redone.reserve(chunk_bytes_, stream);
    // On the stream, before the copy into place: a cudaMemcpy from pageable memory may return
    // before its bytes arrive, and this stream does not wait for the default one.
    cuda_check(cudaMemcpyAsync(redone, data.data(), chunk_bytes_, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    copy_box(place_of(chunk), out_shape_, redone + linear(c.part.offset, r_.chunk) * es_, r_.chunk, c.part.extent, es_,
             stream);
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");  // `data` and `redone` free again
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
  bool shuffled_ = false;
  std::size_t batch_chunks_ = 0;
  std::size_t largest_stored_ = 0;  // the most bytes a chunk of the read has stored
  std::size_t pinned_bytes_ = 0;
  std::size_t slot_ = 0;            // the pinned buffer the next piece goes through (mod kPinned)
  std::vector<bool> direct_;        // per chunk: decoded or unshuffled straight into place
  std::vector<std::size_t> place_;  // per chunk: where it lies in its batch's device buffer
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

std::uint64_t decoder_pinned_bytes() { return Pinned::total(); }

}  // namespace h5tile::detail::gpu
