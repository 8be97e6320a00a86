// The codecs h5tile decodes filtered chunks with, checked against HDF5's own encoding: chunks
// written by the HDF5 library with shuffle, fletcher32 and deflate, read back raw
// (H5Dread_chunk), must decode to the data written; shuffle must write what HDF5 writes.
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <h5tile/error.hpp>

#include "engine/codecs/codec.hpp"
#include "engine/codecs/pipeline.hpp"

namespace h5tile::detail {
namespace {

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(Shuffle, TransposesBytesAndKeepsTheTail) {
  // Three 4-byte elements and two trailing bytes that do not make an element.
  const auto in = bytes({0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 98, 99});
  std::vector<std::byte> out(in.size());
  shuffle(in.data(), out.data(), in.size(), 4);
  EXPECT_EQ(out, bytes({0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23, 98, 99}));
  std::vector<std::byte> back(in.size());
  unshuffle(out.data(), back.data(), out.size(), 4);
  EXPECT_EQ(back, in);
}

class ShuffleSizes : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ShuffleSizes, UnshuffleUndoesShuffle) {
  const std::size_t es = GetParam();
  for (const std::size_t size : {std::size_t{0}, es, 7 * es + 3, 1000 * es + es / 2}) {
    std::vector<std::byte> in(size);
    for (std::size_t i = 0; i < size; ++i) in[i] = static_cast<std::byte>(i * 7 + i / 5);
    std::vector<std::byte> shuffled(size);
    std::vector<std::byte> back(size);
    shuffle(in.data(), shuffled.data(), size, es);
    unshuffle(shuffled.data(), back.data(), size, es);
    EXPECT_EQ(back, in) << "size " << size;
  }
}

// unshuffle_runs writes each run's elements where it goes, as unshuffle then a copy would: runs
// of every length around the 16-element blocks, at every offset, aligned or not, none touching
// memory between runs; with streaming stores too.
TEST_P(ShuffleSizes, UnshuffleRunsWritesTheRunsOfUnshuffle) {
  const std::size_t es = GetParam();
  const std::size_t n = 1000;
  std::vector<std::byte> in(n * es);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::byte>(i * 7 + i / 5);
  std::vector<std::byte> shuffled(in.size());
  shuffle(in.data(), shuffled.data(), in.size(), es);
  const std::size_t gap = 3;  // elements left alone after each run in `out`
  for (const bool streaming : {false, true}) {
    for (const std::size_t length : {1, 15, 16, 17, 33, 250}) {
      const auto said = testing::Message() << "length " << length << (streaming ? ", streaming" : "");
      std::vector<ElementRun> runs;
      std::vector<std::byte> out(n / length * (length + gap) * es, std::byte{0x5a});
      for (std::size_t first = length / 3; first + length <= n; first += length + 1) {
        runs.push_back({first, out.data() + runs.size() * (length + gap) * es});
      }
      unshuffle_runs(shuffled.data(), n,
                     ChunkRuns{.runs = runs, .length = length, .element_size = es, .streaming = streaming});
      for (std::size_t r = 0; r < runs.size(); ++r) {
        const auto at = out.begin() + static_cast<std::ptrdiff_t>(r * (length + gap) * es);
        const auto from = in.begin() + static_cast<std::ptrdiff_t>(runs[r].first * es);
        const auto end = at + static_cast<std::ptrdiff_t>(length * es);
        EXPECT_TRUE(std::equal(at, end, from)) << said << ", run " << r;
        EXPECT_TRUE(std::all_of(end, end + static_cast<std::ptrdiff_t>(gap * es),
                                [](std::byte b) { return b == std::byte{0x5a}; }))
            << said << ", run " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ElementSizes, ShuffleSizes, ::testing::Values(1, 2, 3, 4, 8, 12, 16, 32));

// Every element count around the 16-element blocks of the vectorised paths, against the definition.
TEST(Shuffle, IsTheByteTransposeForEveryCount) {
  for (const std::size_t es : {std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    for (std::size_t n = 0; n <= 70; ++n) {
      const std::size_t size = n * es + (n % 3) % es;  // and a tail that is not an element
      std::vector<std::byte> in(size);
      for (std::size_t i = 0; i < size; ++i) in[i] = static_cast<std::byte>(i * 37 + 11);
      std::vector<std::byte> expected = in;
      if (n > 1) {
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t k = 0; k < es; ++k) expected[k * n + i] = in[i * es + k];
      }
      std::vector<std::byte> out(size);
      shuffle(in.data(), out.data(), size, es);
      EXPECT_EQ(out, expected) << "element size " << es << ", " << n << " elements";
      std::vector<std::byte> back(size);
      unshuffle(out.data(), back.data(), size, es);
      EXPECT_EQ(back, in) << "element size " << es << ", " << n << " elements";
    }
  }
}

TEST(Fletcher32, KnownValues) {
  // By hand from HDF5's definition: big-endian 16-bit words, sums folded mod 65535.
  EXPECT_EQ(fletcher32(nullptr, 0), 0U);
  const auto ab = bytes({0x01, 0x02});  // one word 0x0102: sum1 = sum2 = 0x0102
  EXPECT_EQ(fletcher32(ab.data(), ab.size()), 0x01020102U);
  const auto odd = bytes({0x01, 0x02, 0x03});  // then 0x0300: sum1 = 0x0402, sum2 = 0x0504
  EXPECT_EQ(fletcher32(odd.data(), odd.size()), 0x05040402U);
}

// A 1-D dataset of `n` int32 written by HDF5 with `filters` in one chunk; the chunk's raw bytes.
struct Hdf5Chunk {
  std::vector<std::int32_t> data;
  std::vector<std::byte> stored;
  unsigned filter_mask = 0;
};

Hdf5Chunk written_by_hdf5(const std::string& name, bool with_shuffle, int deflate_level, bool with_fletcher32) {
  // The process ID in the name: other builds' tests share the temporary folder (HDF5 locks files).
  const auto path = std::filesystem::path(::testing::TempDir()) / (name + "-" + std::to_string(::getpid()) + ".h5");
  Hdf5Chunk chunk;
  const hsize_t n = 4099;  // not a multiple of anything, so sums and shuffle see odd sizes
  chunk.data.resize(n);
  for (hsize_t i = 0; i < n; ++i) chunk.data[i] = static_cast<std::int32_t>(i * i % 1000 - 300);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &n);
  if (with_shuffle) H5Pset_shuffle(dcpl);
  if (deflate_level >= 0) H5Pset_deflate(dcpl, static_cast<unsigned>(deflate_level));
  if (with_fletcher32) H5Pset_fletcher32(dcpl);
  const hid_t dataset = H5Dcreate2(file, "x", H5T_NATIVE_INT32, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  EXPECT_GE(H5Dwrite(dataset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, chunk.data.data()), 0);
  H5Fflush(file, H5F_SCOPE_LOCAL);
  hsize_t stored_size = 0;
  const hsize_t origin = 0;
  EXPECT_GE(H5Dget_chunk_storage_size(dataset, &origin, &stored_size), 0);
  chunk.stored.resize(stored_size);
  EXPECT_GE(H5Dread_chunk(dataset, H5P_DEFAULT, &origin, &chunk.filter_mask, chunk.stored.data()), 0);
  H5Dclose(dataset);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  std::filesystem::remove(path);
  return chunk;
}

FilterPipeline pipeline_of(const std::vector<FilterSpec>& filters) {
  auto made = FilterPipeline::make(filters, 4);
  EXPECT_TRUE(std::holds_alternative<FilterPipeline>(made));
  return std::move(std::get<FilterPipeline>(made));
}

std::vector<std::byte> decoded(const FilterPipeline& pipeline, const Hdf5Chunk& chunk) {
  ByteBuffer data;
  ByteBuffer scratch;
  data.resize(chunk.stored.size());
  std::memcpy(data.data(), chunk.stored.data(), chunk.stored.size());
  pipeline.decode(data, scratch, chunk.filter_mask, chunk.data.size() * 4);
  return {data.data(), data.data() + data.size()};
}

std::vector<std::byte> as_bytes(const std::vector<std::int32_t>& v) {
  std::vector<std::byte> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// `n` bytes that compress (runs of one value between others).
std::vector<std::byte> compressible(std::size_t n) {
  std::vector<std::byte> plain(n);
  for (std::size_t i = 0; i < n; ++i) plain[i] = static_cast<std::byte>(i % 251 < 100 ? 7 : i * 13);
  return plain;
}

// Puts the first `count` of `bytes` (all where npos) in `buffer`, as a chunk read from a file.
void load(ByteBuffer& buffer, const std::vector<std::byte>& bytes, std::size_t count = std::string::npos) {
  buffer.resize(std::min(count, bytes.size()));
  std::memcpy(buffer.data(), bytes.data(), buffer.size());
}

TEST(Codecs, ShuffleWritesWhatHdf5Writes) {
  const auto chunk = written_by_hdf5("shuffle", true, -1, false);
  const auto plain = as_bytes(chunk.data);
  std::vector<std::byte> shuffled(plain.size());
  shuffle(plain.data(), shuffled.data(), plain.size(), 4);
  EXPECT_EQ(shuffled, chunk.stored);
  EXPECT_EQ(decoded(pipeline_of({{2, {4}}}), chunk), plain);
}

TEST(Codecs, Fletcher32IsWhatHdf5Appends) {
  const auto chunk = written_by_hdf5("fletcher32", false, -1, true);
  const auto plain = as_bytes(chunk.data);
  ASSERT_EQ(chunk.stored.size(), plain.size() + 4);
  const std::uint32_t sum = fletcher32(plain.data(), plain.size());
  std::vector<std::byte> tail(4);
  for (int i = 0; i < 4; ++i) tail[i] = static_cast<std::byte>(sum >> (8 * i));  // little-endian
  EXPECT_EQ(std::vector<std::byte>(chunk.stored.end() - 4, chunk.stored.end()), tail);
  EXPECT_EQ(decoded(pipeline_of({{3, {}}}), chunk), plain);
}

TEST(Codecs, ShuffleDeflateFletcher32DecodeWhatHdf5Wrote) {
  for (const int level : {1, 6, 9}) {
    const auto chunk = written_by_hdf5("all" + std::to_string(level), true, level, true);
    const auto pipeline = pipeline_of({{2, {4}}, {1, {static_cast<unsigned>(level)}}, {3, {}}});
    EXPECT_EQ(decoded(pipeline, chunk), as_bytes(chunk.data)) << "level " << level;
  }
}

TEST(Codecs, CorruptChunkIsAnError) {
  auto chunk = written_by_hdf5("corrupt", true, 6, true);
  const auto pipeline = pipeline_of({{2, {4}}, {1, {6}}, {3, {}}});
  chunk.stored[chunk.stored.size() / 2] ^= std::byte{0x5a};
  EXPECT_THROW((void)decoded(pipeline, chunk), RuntimeError);
  // Without fletcher32, a corrupt deflate stream (or one of the wrong length) is still refused.
  auto deflated = written_by_hdf5("corrupt_deflate", false, 6, false);
  deflated.stored.resize(deflated.stored.size() / 2);
  EXPECT_THROW((void)decoded(pipeline_of({{1, {6}}}), deflated), RuntimeError);
}

// Chunks h5tile encodes, written raw (H5Dwrite_chunk) into a dataset with the same filters, must
// read back through HDF5's own pipeline as the data; and h5tile's decoder must undo them too.
TEST(Codecs, EncodedChunksAreWhatHdf5Reads) {
  const auto path = std::filesystem::path(::testing::TempDir()) / ("encoded-" + std::to_string(::getpid()) + ".h5");
  const hsize_t n = 4099;
  std::vector<std::int32_t> data(n);
  for (hsize_t i = 0; i < n; ++i) data[i] = static_cast<std::int32_t>(i * 7 % 1000 - 500);
  for (const int level : {0, 1, 6, 9}) {
    const std::vector<FilterSpec> filters{{2, {4}}, {1, {static_cast<unsigned>(level)}}, {3, {}, false}};
    const auto pipeline = pipeline_of(filters);
    ByteBuffer chunk;
    ByteBuffer scratch;
    chunk.resize(n * 4);
    std::memcpy(chunk.data(), data.data(), n * 4);
    pipeline.encode(chunk, scratch);
    const std::vector<std::byte> encoded(chunk.data(), chunk.data() + chunk.size());

    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &n);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, static_cast<unsigned>(level));
    H5Pset_fletcher32(dcpl);
    const hid_t dataset = H5Dcreate2(file, "x", H5T_NATIVE_INT32, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    const hsize_t origin = 0;
    EXPECT_GE(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, &origin, encoded.size(), encoded.data()), 0);
    std::vector<std::int32_t> back(n);
    EXPECT_GE(H5Dread(dataset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
    EXPECT_EQ(back, data) << "level " << level;
    H5Dclose(dataset);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(file);

    Hdf5Chunk stored{data, encoded, 0};
    EXPECT_EQ(decoded(pipeline, stored), as_bytes(data)) << "level " << level;
  }
  std::filesystem::remove(path);
}

TEST(Codecs, SkippedFiltersAreNotUndone) {
  const auto chunk = written_by_hdf5("skip", false, -1, true);
  auto skipped = chunk;
  skipped.filter_mask = 0b01;  // "shuffle skipped": the stored bytes are not shuffled
  EXPECT_EQ(decoded(pipeline_of({{2, {4}}, {3, {}}}), skipped), as_bytes(chunk.data));
}

// hdf5plugin's compressors: what h5tile encodes it decodes, for odd sizes and in blocks (lz4);
// a garbled or cut chunk is an error, never other bytes. (The Python tests check both ways
// against hdf5plugin itself.)
class PluginCodecs : public ::testing::TestWithParam<FilterSpec> {};

TEST_P(PluginCodecs, EncodeThenDecodeGivesTheChunkBack) {
  if (!codec_built(GetParam().id)) GTEST_SKIP() << "h5tile was built without filter " << GetParam().id;
  const auto pipeline = pipeline_of({GetParam()});
  for (const std::size_t n : {std::size_t{4}, std::size_t{1000}, std::size_t{40001}}) {
    const auto plain = compressible(n);
    ByteBuffer data;
    ByteBuffer scratch;
    load(data, plain);
    pipeline.encode(data, scratch);
    std::vector<std::byte> encoded(data.data(), data.data() + data.size());
    pipeline.decode(data, scratch, 0, n);
    EXPECT_EQ(std::vector<std::byte>(data.data(), data.data() + data.size()), plain) << n;
    if (n < 1000) continue;
    EXPECT_LT(encoded.size(), n) << "compressible data stays as large";
    // Flipped bytes: an error, or (lz4 and zstd frames carry no checksum: fletcher32 is for that)
    // other bytes of the chunk's size; never more, never a crash (the sanitizer builds run this).
    encoded[encoded.size() / 2] ^= std::byte{0x5a};
    encoded.back() ^= std::byte{0x5a};
    load(data, encoded);
    try {
      pipeline.decode(data, scratch, 0, n);
      EXPECT_EQ(data.size(), n);
    } catch (const RuntimeError&) {
    }
    load(data, encoded, encoded.size() / 3);
    EXPECT_THROW(pipeline.decode(data, scratch, 0, n), RuntimeError) << "cut short, " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Filters, PluginCodecs,
                         ::testing::Values(FilterSpec{32015, {3}}, FilterSpec{32015, {}},
                                           FilterSpec{32015, {static_cast<unsigned>(-5)}}, FilterSpec{32004, {0}},
                                           FilterSpec{32004, {100}}, FilterSpec{32001, {2, 2, 4, 0, 5, 1, 1}},
                                           FilterSpec{32001, {2, 2, 1, 0, 9, 2, 5}}),
                         [](const ::testing::TestParamInfo<FilterSpec>& param) {
                           std::string name = std::to_string(param.param.id);
                           for (const auto v : param.param.params) name += "_" + std::to_string(v);
                           return name;
                         });

// The paths without a copy: encode_from (the first filter reads the caller's memory) and
// decode_into (the last filter undone writes into it) give the bytes of encode and decode, for
// every codec first or last, an in-place filter (fletcher32) first, and filters skipped.
class CopyFreePaths : public ::testing::TestWithParam<std::vector<FilterSpec>> {};

TEST_P(CopyFreePaths, GiveTheBytesOfEncodeAndDecode) {
  for (const auto& f : GetParam()) {
    if (!codec_built(f.id)) GTEST_SKIP() << "h5tile was built without filter " << f.id;
  }
  const auto pipeline = pipeline_of(GetParam());
  for (const std::size_t n : {std::size_t{4}, std::size_t{6}, std::size_t{40000}}) {
    const auto plain = compressible(n);
    ByteBuffer data;
    ByteBuffer scratch;
    load(data, plain);
    pipeline.encode(data, scratch);
    const std::vector<std::byte> encoded(data.data(), data.data() + data.size());
    pipeline.encode_from(plain.data(), n, data, scratch);
    EXPECT_EQ(std::vector<std::byte>(data.data(), data.data() + data.size()), encoded) << n;

    std::vector<std::byte> out(n + 8, std::byte{0x77});  // the bytes past the chunk must stay
    pipeline.decode_into(data, scratch, 0, n, out.data());
    EXPECT_EQ(std::vector<std::byte>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n)), plain) << n;
    EXPECT_EQ(out[n], std::byte{0x77});
    // A chunk that decodes to fewer bytes than the chunk's is refused, as decode refuses it.
    load(data, encoded);
    EXPECT_THROW(pipeline.decode_into(data, scratch, 0, n + 8, out.data()), RuntimeError) << n;

    // Runs of the chunk where they go (shuffle last undone writes them; else they are copied),
    // in elements of the shuffle's size: every other run of 37 elements, from element 3.
    std::size_t es = 4;
    for (const auto& f : GetParam()) {
      if (f.id == 2) es = f.params.at(0);
    }
    const std::size_t elements = n / es;
    const std::size_t length = std::min<std::size_t>(37, elements);
    std::vector<std::byte> packed(n + 8, std::byte{0x77});
    std::vector<ElementRun> runs;
    for (std::size_t first = elements > length ? 3 : 0; length > 0 && first + length <= elements; first += 2 * length) {
      runs.push_back({first, packed.data() + runs.size() * length * es});
    }
    load(data, encoded);
    pipeline.decode_into(data, scratch, 0, n, ChunkRuns{.runs = runs, .length = length, .element_size = es});
    std::vector<std::byte> expected;
    for (const auto& run : runs) {
      const auto from = plain.begin() + static_cast<std::ptrdiff_t>(run.first * es);
      expected.insert(expected.end(), from, from + static_cast<std::ptrdiff_t>(length * es));
    }
    EXPECT_EQ(std::vector<std::byte>(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(expected.size())),
              expected)
        << n;
    EXPECT_EQ(packed[expected.size()], std::byte{0x77}) << n;
    load(data, encoded);
    EXPECT_THROW(
        pipeline.decode_into(data, scratch, 0, n + 8, ChunkRuns{.runs = runs, .length = length, .element_size = es}),
        RuntimeError)
        << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, CopyFreePaths,
                         ::testing::Values(std::vector<FilterSpec>{{2, {4}}}, std::vector<FilterSpec>{{1, {6}}},
                                           std::vector<FilterSpec>{{2, {4}}, {1, {4}}, {3, {}}},
                                           std::vector<FilterSpec>{{3, {}}, {2, {4}}}, std::vector<FilterSpec>{{3, {}}},
                                           std::vector<FilterSpec>{{2, {2}}, {32015, {3}}},
                                           std::vector<FilterSpec>{{2, {8}}, {32004, {0}}},
                                           std::vector<FilterSpec>{{32001, {2, 2, 4, 0, 5, 1, 1}}}),
                         [](const ::testing::TestParamInfo<std::vector<FilterSpec>>& param) {
                           std::string name;
                           for (const auto& f : param.param) name += (name.empty() ? "" : "_") + std::to_string(f.id);
                           return name;
                         });

TEST(Codecs, DecodeIntoSkipsWhatHdf5Skipped) {
  const auto chunk = written_by_hdf5("skip_into", false, -1, true);
  ByteBuffer data;
  ByteBuffer scratch;
  data.resize(chunk.stored.size());
  std::memcpy(data.data(), chunk.stored.data(), chunk.stored.size());
  std::vector<std::byte> out(chunk.data.size() * sizeof(chunk.data[0]));
  // "shuffle skipped": fletcher32 (in place) is the last filter undone, so the bytes are copied.
  pipeline_of({{2, {4}}, {3, {}}}).decode_into(data, scratch, 0b01, out.size(), out.data());
  EXPECT_EQ(out, as_bytes(chunk.data));
}

TEST(Codecs, FiltersHdf5MustDecodeAreNamed) {
  EXPECT_EQ(std::get<std::string>(FilterPipeline::make({{4, {}}}, 4)), "szip");
  EXPECT_EQ(std::get<std::string>(FilterPipeline::make({{1, {6}}, {32100, {}}}, 4)),
            "filter 32100 (unknown to h5tile)");
  EXPECT_EQ(std::get<std::string>(FilterPipeline::make({{307, {}}}, 4)), "bzip2");
  if (codec_built(32015)) {
    EXPECT_EQ(std::get<std::string>(FilterPipeline::make({{32015, {3, 1}}}, 4)), "zstd with client data [3, 1]");
    EXPECT_EQ(std::get<FilterPipeline>(FilterPipeline::make({{1, {6}}, {32015, {}}}, 4)).names(),
              (std::vector<std::string>{"deflate", "zstd"}));
  }
  EXPECT_EQ(std::get<std::string>(FilterPipeline::make({{1, {6, 1}}}, 4)), "deflate with client data [6, 1]");
}

// h5py's LZF (32000): what it encodes decodes back; chunks LZF cannot shrink still encode (as
// literal runs, which h5py's filter decodes); a chunk HDF5 stored unfiltered (mask bit 0) is
// left as it is; a damaged stream is an error naming lzf.
TEST(Codecs, LzfRoundTripsAndRefusesDamage) {
  if (!codec_built(32000)) GTEST_SKIP() << "h5tile was built without liblzf";
  const auto lzf = std::get<FilterPipeline>(FilterPipeline::make({{32000, {4, 261, 4096}}}, 4));
  std::vector<std::byte> ramp(4096);
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<std::byte>(i % 13);
  std::vector<std::byte> noise(4096);
  std::uint32_t state = 12345;
  for (auto& b : noise) b = static_cast<std::byte>((state = state * 1664525U + 1013904223U) >> 24);
  for (const auto* chunk : {&ramp, &noise}) {
    ByteBuffer data;
    ByteBuffer scratch;
    lzf.encode_from(chunk->data(), chunk->size(), data, scratch);
    if (chunk == &ramp) {
      EXPECT_LT(data.size(), chunk->size() / 4);
    }
    std::vector<std::byte> out(chunk->size());
    lzf.decode_into(data, scratch, 0, out.size(), out.data());
    EXPECT_EQ(out, *chunk);
  }
  ByteBuffer stored;  // stored unfiltered, as HDF5 does where h5py's filter could not shrink it
  stored.resize(noise.size());
  std::memcpy(stored.data(), noise.data(), noise.size());
  ByteBuffer scratch;
  lzf.decode(stored, scratch, 0b1, noise.size());
  EXPECT_EQ(0, std::memcmp(stored.data(), noise.data(), noise.size()));
  ByteBuffer damaged;  // a back reference before the start of the output
  damaged.resize(3);
  std::memcpy(damaged.data(), bytes({0xE0, 0xFF, 0xFF}).data(), 3);
  EXPECT_THROW(
      {
        try {
          lzf.decode(damaged, scratch, 0, 4096);
        } catch (const RuntimeError& e) {
          EXPECT_NE(std::string(e.what()).find("lzf"), std::string::npos) << e.what();
          throw;
        }
      },
      RuntimeError);
}

}  // namespace
}  // namespace h5tile::detail
