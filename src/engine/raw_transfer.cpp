#include "engine/raw_transfer.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

// Runs at least this long move straight between file and memory.
constexpr std::uint64_t kDirectRun = 64 * 1024;
// Bounce buffer for coalesced short runs; gaps up to kMaxGap are read and discarded.
constexpr std::uint64_t kBounceBytes = 4 * 1024 * 1024;
constexpr std::uint64_t kMaxGap = 64 * 1024;

template <std::size_t N>
void copy_fixed(std::byte* dst, std::int64_t ds, const std::byte* src, std::int64_t ss, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    std::memcpy(dst, src, N);
    dst += ds;
    src += ss;
  }
}

// One run: `elems` elements, contiguous in the file at `file_offset`, in memory from `mem`
// with `mem_stride` bytes between elements.
struct Run {
  std::uint64_t file_offset;
  std::byte* mem;
  std::int64_t mem_stride;
  std::uint64_t elems;
};

// Calls visit(run) for every run of `box`, in increasing file offset.
template <class Visit>
void for_each_run(const RawDataset& file, const Box& box, const StridedBytes& mem, Visit&& visit) {
  const std::size_t rank = box.rank();
  const auto es = static_cast<std::int64_t>(file.elem_size);
  if (rank == 0) {
    visit(Run{file.base, mem.ptr, es, 1});
    return;
  }
  if (box.count() == 0) {
    return;
  }
  const auto fstrides = rowmajor_strides(file.shape, file.elem_size);
  // First axis of a run: merge inner axes while both file and memory stay contiguous.
  std::size_t k = rank - 1;
  const bool mem_packed_inner = mem.strides[rank - 1] == es;
  while (k > 0 && mem_packed_inner && box.extent[k] == file.shape[k] &&
         mem.strides[k - 1] == mem.strides[k] * static_cast<std::int64_t>(box.extent[k])) {
    --k;
  }
  std::uint64_t run_elems = 1;
  for (std::size_t a = k; a < rank; ++a) {
    run_elems *= box.extent[a];
  }
  std::uint64_t start = file.base;
  for (std::size_t a = 0; a < rank; ++a) {
    start += box.offset[a] * static_cast<std::uint64_t>(fstrides[a]);
  }
  std::vector<std::uint64_t> idx(k, 0);
  for (;;) {
    std::uint64_t off = start;
    std::byte* ptr = mem.ptr;
    for (std::size_t a = 0; a < k; ++a) {
      off += idx[a] * static_cast<std::uint64_t>(fstrides[a]);
      ptr += static_cast<std::int64_t>(idx[a]) * mem.strides[a];
    }
    visit(Run{off, ptr, mem_packed_inner ? es : mem.strides[rank - 1], run_elems});
    std::size_t a = k;
    while (a > 0 && ++idx[a - 1] == box.extent[a - 1]) {
      idx[a - 1] = 0;
      --a;
    }
    if (a == 0) {
      return;
    }
  }
}

// Groups runs for one bounce-buffer transfer at a time.
class Coalescer {
 public:
  Coalescer(const RawDataset& file, bool writing) : file_(file), writing_(writing) {}

  void add(const Run& run) {
    const auto es = file_.elem_size;
    const auto bytes = run.elems * es;
    const bool packed = run.mem_stride == static_cast<std::int64_t>(es);
    if (packed && bytes >= kDirectRun) {
      flush();
      move_packed(run.mem, bytes, run.file_offset);
      return;
    }
    // A strided run longer than the bounce buffer goes through it in pieces.
    const std::uint64_t max_elems = std::max<std::uint64_t>(1, kBounceBytes / es);
    for (std::uint64_t done = 0; done < run.elems; done += max_elems) {
      const auto n = std::min(max_elems, run.elems - done);
      add_piece(Run{run.file_offset + done * es, run.mem + static_cast<std::int64_t>(done) * run.mem_stride,
                    run.mem_stride, n});
    }
  }

  void flush() {
    if (runs_.empty()) {
      return;
    }
    const auto es = file_.elem_size;
    const auto span = end_ - start_;
    if (runs_.size() == 1 && runs_[0].mem_stride == static_cast<std::int64_t>(es)) {
      move_packed(runs_[0].mem, span, start_);  // a lone short run needs no bounce buffer
      runs_.clear();
      return;
    }
    // One buffer per thread, kept: a fresh one per transfer would fault in (and the kernel
    // zero) new pages every time.
    thread_local std::vector<std::byte> bounce;
    if (bounce.size() < span) {
      bounce.resize(span);
    }
    if (writing_) {
      for (const auto& r : runs_) {
        copy_elements(bounce.data() + (r.file_offset - start_), static_cast<std::int64_t>(es), r.mem, r.mem_stride,
                      r.elems, es);
      }
      writable().write_at(bounce.data(), span, start_);
    } else {
      file_.file->read_at(bounce.data(), span, start_);
      for (const auto& r : runs_) {
        copy_elements(r.mem, r.mem_stride, bounce.data() + (r.file_offset - start_), static_cast<std::int64_t>(es),
                      r.elems, es);
      }
    }
    runs_.clear();
  }

 private:
  // One packed run straight between the file and memory.
  void move_packed(std::byte* mem, std::uint64_t bytes, std::uint64_t offset) const {
    if (writing_) {
      writable().write_at(mem, bytes, offset);
    } else {
      file_.file->read_at(mem, bytes, offset);
    }
  }

  void add_piece(const Run& run) {
    const auto bytes = run.elems * file_.elem_size;
    if (!runs_.empty()) {
      // Writes must not cover bytes outside the box, so they only join adjacent runs.
      const std::uint64_t gap = run.file_offset - end_;
      const bool joinable = writing_ ? gap == 0 : gap <= kMaxGap;
      if (!joinable || run.file_offset + bytes - start_ > kBounceBytes) {
        flush();
      }
    }
    if (runs_.empty()) {
      start_ = run.file_offset;
    }
    end_ = run.file_offset + bytes;
    runs_.push_back(run);
  }

  // Where writes go (write_raw checked there is a sink).
  [[nodiscard]] const ByteSink& writable() const { return *file_.writable(); }

  const RawDataset& file_;
  bool writing_;
  std::vector<Run> runs_;
  std::uint64_t start_ = 0;
  std::uint64_t end_ = 0;
};

void transfer(const RawDataset& file, const Box& box, const StridedBytes& mem, bool writing) {
  Coalescer coalescer(file, writing);
  for_each_run(file, box, mem, [&](const Run& run) { coalescer.add(run); });
  coalescer.flush();
}

}  // namespace

void copy_elements(std::byte* dst, std::int64_t dst_stride, const std::byte* src, std::int64_t src_stride,
                   std::uint64_t count, std::size_t elem_size) {
  const auto es = static_cast<std::int64_t>(elem_size);
  if (dst_stride == es && src_stride == es) {
    std::memcpy(dst, src, count * elem_size);
    return;
  }
  switch (elem_size) {
    case 1: copy_fixed<1>(dst, dst_stride, src, src_stride, count); return;
    case 2: copy_fixed<2>(dst, dst_stride, src, src_stride, count); return;
    case 4: copy_fixed<4>(dst, dst_stride, src, src_stride, count); return;
    case 8: copy_fixed<8>(dst, dst_stride, src, src_stride, count); return;
    case 16: copy_fixed<16>(dst, dst_stride, src, src_stride, count); return;
    default:
      for (std::uint64_t i = 0; i < count; ++i) {
        std::memcpy(dst + static_cast<std::int64_t>(i) * dst_stride, src + static_cast<std::int64_t>(i) * src_stride,
                    elem_size);
      }
  }
}

void copy_box(const StridedBytes& dst, const StridedBytes& src, const Shape& extent, std::size_t elem_size) {
  const auto rank = extent.size();
  if (rank == 0) {
    std::memcpy(dst.ptr, src.ptr, elem_size);
    return;
  }
  if (element_count(extent) == 0) {
    return;
  }
  // Odometer over all axes but the last; each row is one copy_elements.
  Shape index(rank - 1, 0);
  for (;;) {
    std::byte* d = dst.ptr;
    const std::byte* s = src.ptr;
    for (std::size_t a = 0; a + 1 < rank; ++a) {
      d += static_cast<std::int64_t>(index[a]) * dst.strides[a];
      s += static_cast<std::int64_t>(index[a]) * src.strides[a];
    }
    copy_elements(d, dst.strides[rank - 1], s, src.strides[rank - 1], extent[rank - 1], elem_size);
    std::size_t a = rank - 1;
    while (a > 0 && ++index[a - 1] == extent[a - 1]) {
      index[a - 1] = 0;
      --a;
    }
    if (a == 0) return;
  }
}

bool is_rowmajor_run(const StridedBytes& mem, const Shape& extent, std::size_t elem_size) {
  auto stride = static_cast<std::int64_t>(elem_size);
  for (std::size_t a = extent.size(); a-- > 0;) {
    if (extent[a] > 1 && mem.strides[a] != stride) return false;
    stride *= static_cast<std::int64_t>(extent[a]);
  }
  return true;
}

std::vector<std::int64_t> rowmajor_strides(const Shape& shape, std::size_t elem_size) {
  std::vector<std::int64_t> strides(shape.size());
  auto stride = static_cast<std::int64_t>(elem_size);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= static_cast<std::int64_t>(shape[i]);
  }
  return strides;
}

void read_raw(const RawDataset& src, const Box& box, const StridedBytes& dst) { transfer(src, box, dst, false); }

void write_raw(const RawDataset& dst, const Box& box, const StridedBytes& src) {
  if (dst.writable() == nullptr) {
    throw RuntimeError(fmt::format("cannot write to '{}': it is read-only here",
                                   dst.file != nullptr ? dst.file->name() : std::string("a byte source")));
  }
  transfer(dst, box, src, true);
}

FileSpan file_span(const RawDataset& file, const Box& box) {
  if (box.rank() == 0) {
    return {file.base, file.base + file.elem_size};
  }
  if (box.count() == 0) {
    return {file.base, file.base};
  }
  const auto fstrides = rowmajor_strides(file.shape, file.elem_size);
  std::uint64_t first = file.base;
  std::uint64_t last = file.base;
  for (std::size_t a = 0; a < box.rank(); ++a) {
    first += box.offset[a] * static_cast<std::uint64_t>(fstrides[a]);
    last += (box.offset[a] + box.extent[a] - 1) * static_cast<std::uint64_t>(fstrides[a]);
  }
  return {first, last + file.elem_size};
}

std::vector<Box> split_rowmajor(const Box& box, std::size_t elem_size, std::size_t max_bytes) {
  const std::size_t rank = box.rank();
  if (rank == 0) {
    return {box};
  }
  if (box.count() == 0) {
    return {};
  }
  // Axis d is the first whose trailing block fits in max_bytes; it is cut into runs of rows.
  std::size_t d = 0;
  std::uint64_t inner = 0;
  for (; d < rank; ++d) {
    inner = elem_size;
    for (std::size_t a = d + 1; a < rank; ++a) {
      inner *= box.extent[a];
    }
    if (inner <= max_bytes) {
      break;
    }
  }
  d = std::min(d, rank - 1);
  const std::uint64_t rows = std::max<std::uint64_t>(1, max_bytes / inner);
  std::vector<Box> parts;
  std::vector<std::uint64_t> idx(d, 0);
  for (;;) {
    for (std::uint64_t r = 0; r < box.extent[d]; r += rows) {
      Box part = box;
      for (std::size_t a = 0; a < d; ++a) {
        part.offset[a] += idx[a];
        part.extent[a] = 1;
      }
      part.offset[d] += r;
      part.extent[d] = std::min(rows, box.extent[d] - r);
      parts.push_back(std::move(part));
    }
    std::size_t a = d;
    while (a > 0 && ++idx[a - 1] == box.extent[a - 1]) {
      idx[a - 1] = 0;
      --a;
    }
    if (a == 0) {
      return parts;
    }
  }
}

StridedBytes sub_memory(const StridedBytes& mem, const Box& whole, const Box& part) {
  StridedBytes out{mem.ptr, mem.strides};
  for (std::size_t a = 0; a < whole.rank(); ++a) {
    out.ptr += static_cast<std::int64_t>(part.offset[a] - whole.offset[a]) * mem.strides[a];
  }
  return out;
}

}  // namespace h5tile::detail
