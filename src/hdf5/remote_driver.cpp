#include "hdf5/remote_driver.hpp"

#include <hdf5.h>
#if H5_VERSION_GE(1, 14, 0)
#include <H5FDdevelop.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/btree_node.hpp"
#include "hdf5/driver_class.hpp"
#include "io/block_cache.hpp"

namespace h5tile::detail {
namespace {

thread_local std::exception_ptr driver_failure;

// What the file access property list carries to the driver's open.
struct DriverConfig {
  std::shared_ptr<const ByteSource> source;
  std::uint64_t block_size = 0;
  std::uint64_t cache_bytes = 0;
  RunParallel run{};
};

// The largest read that may be a B-tree node worth reading ahead from: a chunk node of 2K = 64
// children (HDF5's default) of a rank-32 dataset is about 35 KiB.
constexpr std::size_t kMaxBtreeNode = std::size_t{1} << 20;

struct RemoteFile {
  H5FD_t pub;  // first: HDF5 sees a RemoteFile as its H5FD_t
  std::shared_ptr<const ByteSource> source;
  DriverConfig config;
  std::unique_ptr<BlockCache> cache;
  haddr_t eoa = 0;
  // The B-tree nodes whose subtrees were read ahead (HDF5 calls the driver under its lock: no mutex).
  std::unordered_set<haddr_t> read_ahead;
};

// HDF5 walks a v1 B-tree of chunks one node at a time, each node a round trip where the nodes lie
// between the chunks (as h5py writes them). On HDF5's read of an inner node, the nodes below it are
// fetched into the cache a level at a time, each level's nodes side by side: then HDF5's walk
// finds them there. Every node of a tree has the size of the one read. A level is fetched only while
// the nodes fetched ahead stay within half the cache's bytes (past that, HDF5's read of each node
// of the last level fetched reads its own subtree ahead); a node that does not read as a chunk node
// stops the walk below it. Only requests are at stake: the cache holds the object's own bytes
// (checked as every response is), whatever HDF5 later reads there.
void read_subtree_ahead(RemoteFile& f, haddr_t addr, std::span<const std::byte> node) {
  if (f.read_ahead.count(addr) != 0) return;
  const auto size = f.source->size();
  const auto parsed = parse_chunk_btree_node(node, size);
  if (!parsed || parsed->level == 0) return;
  std::uint64_t budget = f.config.cache_bytes / 2;
  std::vector<haddr_t> parents = {addr};
  std::vector<std::uint64_t> wave = parsed->children;
  for (unsigned level = parsed->level; !wave.empty(); --level) {
    if (wave.size() * node.size() > budget) return;
    budget -= wave.size() * node.size();
    std::vector<BlockCache::Extent> extents;
    extents.reserve(wave.size());
    for (const auto child : wave) extents.push_back({child, node.size()});
    const auto nodes = f.cache->prefetch(extents, f.config.run);
    f.read_ahead.insert(parents.begin(), parents.end());
    if (level == 1) return;  // leaves: their children are chunks, which h5tile reads itself
    parents.clear();
    std::vector<std::uint64_t> next;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto child = parse_chunk_btree_node(nodes[i], size);
      if (!child || child->level != level - 1 || f.read_ahead.count(wave[i]) != 0) continue;
      parents.push_back(wave[i]);
      next.insert(next.end(), child->children.begin(), child->children.end());
    }
    wave = std::move(next);
  }
}

// Records the failure for take_driver_failure, and puts it on HDF5's error stack too.
void push_failure(const char* function, const std::string& message) {
  H5Epush2(H5E_DEFAULT, __FILE__, function, __LINE__, H5E_ERR_CLS, H5E_VFL, H5E_READERROR, "%s", message.c_str());
}

void* fapl_get(H5FD_t* file) {
  const auto* f = reinterpret_cast<RemoteFile*>(file);
  return new DriverConfig(f->config);
}

H5FD_t* open(const char* name, unsigned flags, hid_t fapl, haddr_t /*maxaddr*/) {
  const auto* config = static_cast<const DriverConfig*>(H5Pget_driver_info(fapl));
  if (config == nullptr || !config->source) {
    push_failure(__func__, "h5tile's remote driver was given no object to read");
    return nullptr;
  }
  if ((flags & (H5F_ACC_RDWR | H5F_ACC_TRUNC | H5F_ACC_CREAT | H5F_ACC_EXCL)) != 0) {
    push_failure(__func__, fmt::format("'{}' is remote: remote writes are not supported yet", config->source->name()));
    return nullptr;
  }
  if (name == nullptr || config->source->name() != name) {
    // HDF5 opening another file with the object's access properties: an external link or a
    // virtual source that HDF5 itself follows. Only the object itself is read.
    push_failure(__func__, fmt::format("'{}' refers to '{}', which h5tile does not open from a remote file",
                                       config->source->name(), name != nullptr ? name : ""));
    return nullptr;
  }
  try {
    auto file = std::make_unique<RemoteFile>();
    std::memset(&file->pub, 0, sizeof(file->pub));
    file->source = config->source;
    file->config = *config;
    file->cache = std::make_unique<BlockCache>(config->source, config->block_size, config->cache_bytes);
    return &file.release()->pub;
  } catch (const std::exception& e) {
    push_failure(__func__, e.what());
    return nullptr;
  }
}

herr_t close(H5FD_t* file) {
  delete reinterpret_cast<RemoteFile*>(file);
  return 0;
}

int compare(const H5FD_t* a, const H5FD_t* b) {
  const auto* x = reinterpret_cast<const RemoteFile*>(a)->source.get();
  const auto* y = reinterpret_cast<const RemoteFile*>(b)->source.get();
  return x < y ? -1 : (x > y ? 1 : 0);
}

herr_t query(const H5FD_t* /*file*/, unsigned long* flags) {
  if (flags != nullptr) *flags = H5FD_FEAT_DATA_SIEVE;  // read-only: no aggregation of writes
  return 0;
}

haddr_t get_eoa(const H5FD_t* file, H5FD_mem_t /*type*/) { return reinterpret_cast<const RemoteFile*>(file)->eoa; }

herr_t set_eoa(H5FD_t* file, H5FD_mem_t /*type*/, haddr_t addr) {
  reinterpret_cast<RemoteFile*>(file)->eoa = addr;
  return 0;
}

haddr_t get_eof(const H5FD_t* file, H5FD_mem_t /*type*/) {
  return reinterpret_cast<const RemoteFile*>(file)->source->size();
}

herr_t get_handle(H5FD_t* file, hid_t /*fapl*/, void** handle) {
  *handle = reinterpret_cast<RemoteFile*>(file);
  return 0;
}

herr_t read(H5FD_t* file, H5FD_mem_t type, hid_t /*dxpl*/, haddr_t addr, size_t size, void* buffer) {
  auto* f = reinterpret_cast<RemoteFile*>(file);
  std::size_t inside = 0;
  try {
    // Past the end of the object HDF5 reads zeros, as from its own drivers (its speculative
    // reads of object headers may reach past the end of a small file).
    const std::uint64_t end = f->source->size();
    inside = addr >= end ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(size, end - addr));
    std::memset(static_cast<std::byte*>(buffer) + inside, 0, size - inside);
    f->cache->read(buffer, inside, addr);
  } catch (const std::exception& e) {
    driver_failure = std::current_exception();
    push_failure(__func__, e.what());
    return -1;
  }
  if (type == H5FD_MEM_BTREE && f->config.run && inside == size && size <= kMaxBtreeNode) {
    try {
      read_subtree_ahead(*f, addr, std::span(static_cast<const std::byte*>(buffer), size));
    } catch (...) {  // reading ahead failed (no memory, no thread): HDF5's read has its bytes all the same
    }
  }
  return 0;
}

herr_t write(H5FD_t* file, H5FD_mem_t /*type*/, hid_t /*dxpl*/, haddr_t /*addr*/, size_t /*size*/,
             const void* /*buffer*/) {
  push_failure(__func__, fmt::format("'{}' is remote: remote writes are not supported yet",
                                     reinterpret_cast<RemoteFile*>(file)->source->name()));
  return -1;
}

H5FD_class_t make_class() {
  H5FD_class_t c = driver_class<DriverConfig>("h5tile_remote", 0x1f7);
  c.fapl_get = fapl_get;
  c.open = open;
  c.close = close;
  c.cmp = compare;
  c.query = query;
  c.get_eoa = get_eoa;
  c.set_eoa = set_eoa;
  c.get_eof = get_eof;
  c.get_handle = get_handle;
  c.read = read;
  c.write = write;
  return c;
}

// Whether a remote file was ever opened in this process: until then no file is the driver's, and
// local reads ask HDF5 nothing about it.
std::atomic<bool> registered{false};

// The driver's ID, registered at first use (and again where HDF5 was closed and restarted).
hid_t driver_id() {
  static const H5FD_class_t cls = make_class();
  static hid_t id = H5I_INVALID_HID;
  if (register_driver(cls, id)) registered = true;
  return check(id, "cannot register h5tile's remote file driver with HDF5");
}

}  // namespace

FileHandle open_remote_file(std::shared_ptr<const ByteSource> source, std::uint64_t block_size,
                            std::uint64_t cache_bytes, RunParallel run) {
  const auto name = source->name();
  const Hdf5Lock lock;
  driver_failure = nullptr;
  const PlistHandle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
  const DriverConfig config{std::move(source), block_size, cache_bytes, std::move(run)};
  check(H5Pset_driver(fapl.get(), driver_id(), &config), "cannot set h5tile's remote file driver");
  const hid_t id = H5Fopen(name.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (id < 0) {
    throw_hdf5_failure<NotHdf5File>(fmt::format("cannot open '{}' as an HDF5 file", name));
  }
  return FileHandle(id);
}

namespace {

// The driver's state of `object`'s file, or nullptr where the driver does not read it; with the
// HDF5 lock held.
RemoteFile* remote_file_of(hid_t object) {
  if (!registered) {
    return nullptr;
  }
  const FileHandle file(check(H5Iget_file_id(object), "H5Iget_file_id"));
  const PlistHandle fapl(check(H5Fget_access_plist(file.get()), "H5Fget_access_plist"));
  if (H5Pget_driver(fapl.get()) != driver_id()) {
    return nullptr;
  }
  void* handle = nullptr;
  check(H5Fget_vfd_handle(file.get(), fapl.get(), &handle), "H5Fget_vfd_handle");
  return static_cast<RemoteFile*>(handle);
}

}  // namespace

std::shared_ptr<const ByteSource> remote_source_holding(hid_t object) {
  const Hdf5Lock lock;
  const auto* file = remote_file_of(object);
  return file != nullptr ? file->source : nullptr;
}

std::optional<CachedReads> cached_reads_of(hid_t object) {
  const Hdf5Lock lock;
  auto* file = remote_file_of(object);
  if (file == nullptr || !file->cache) return std::nullopt;
  BlockCache* cache = file->cache.get();
  const auto size = file->source->size();
  CachedReads reads;
  reads.size = size;
  reads.read = [cache, size](std::uint64_t offset, std::span<std::byte> into) {
    if (offset > size || into.size() > size - offset) return false;
    try {
      cache->read(into.data(), into.size(), offset);
      return true;
    } catch (const std::exception&) {  // the read that needs the bytes reports the failure
      return false;
    }
  };
  if (file->config.run) {
    reads.ahead_bytes = std::max<std::uint64_t>(1, file->config.cache_bytes / 2);  // as read_subtree_ahead
    reads.ahead = [cache, run = file->config.run](const std::vector<std::pair<std::uint64_t, std::uint64_t>>& extents) {
      std::vector<BlockCache::Extent> wanted;
      wanted.reserve(extents.size());
      for (const auto& [offset, bytes] : extents) wanted.push_back({offset, bytes});
      try {
        (void)cache->prefetch(wanted, run);
      } catch (...) {  // ahead of need: the reads fetch what they need
      }
    };
  }
  return reads;
}

void drop_cached_blocks(hid_t object) {
  const Hdf5Lock lock;
  auto* file = remote_file_of(object);
  if (file == nullptr) return;
  if (file->cache) file->cache->clear();
  file->read_ahead.clear();  // its nodes are gone with the blocks: read ahead again where HDF5 needs them
}

std::exception_ptr take_driver_failure() noexcept { return std::exchange(driver_failure, nullptr); }

}  // namespace h5tile::detail
