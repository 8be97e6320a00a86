#include "hdf5/upload_driver.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include <h5tile/error.hpp>

#include "hdf5/driver_class.hpp"

namespace h5tile::detail {
namespace {

thread_local unsigned skipping_raw_writes = 0;

struct DriverConfig {
  std::shared_ptr<ObjectUpload> upload;
};

struct UploadFile {
  H5FD_t pub;  // first: HDF5 sees an UploadFile as its H5FD_t
  std::shared_ptr<ObjectUpload> upload;
  bool writable = false;
  haddr_t eoa = 0;
};

// Puts the failure on HDF5's error stack, which h5tile's message then quotes.
void push_failure(const char* function, const std::string& message) {
  H5Epush2(H5E_DEFAULT, __FILE__, function, __LINE__, H5E_ERR_CLS, H5E_VFL, H5E_WRITEERROR, "%s", message.c_str());
}

void* fapl_get(H5FD_t* file) { return new DriverConfig{reinterpret_cast<UploadFile*>(file)->upload}; }

H5FD_t* open(const char* name, unsigned flags, hid_t fapl, haddr_t /*maxaddr*/) {
  const auto* config = static_cast<const DriverConfig*>(H5Pget_driver_info(fapl));
  if (config == nullptr || !config->upload) {
    push_failure(__func__, "h5tile's upload driver was given no upload");
    return nullptr;
  }
  if (name == nullptr || config->upload->name() != name) {
    // HDF5 opening another file with the same access (an external link): not this upload's.
    push_failure(__func__, fmt::format("'{}' is being uploaded: h5tile opens no other file '{}' with it",
                                       config->upload->name(), name != nullptr ? name : ""));
    return nullptr;
  }
  try {
    auto file = std::make_unique<UploadFile>();
    std::memset(&file->pub, 0, sizeof(file->pub));
    file->upload = config->upload;
    file->writable = (flags & (H5F_ACC_RDWR | H5F_ACC_TRUNC | H5F_ACC_CREAT)) != 0;
    if ((flags & H5F_ACC_TRUNC) != 0) file->upload->set_end(0);
    return &file.release()->pub;
  } catch (const std::exception& e) {
    push_failure(__func__, e.what());
    return nullptr;
  }
}

herr_t close(H5FD_t* file) {
  auto* f = reinterpret_cast<UploadFile*>(file);
  try {
    // The object ends where HDF5's file does: bytes it allocated but never wrote (the end of a
    // dataset's space) are zeros, not missing.
    if (f->writable) f->upload->set_end(std::max<std::uint64_t>(f->upload->end(), f->eoa));
  } catch (...) {
  }
  delete f;
  return 0;
}

int compare(const H5FD_t* a, const H5FD_t* b) {
  const auto* x = reinterpret_cast<const UploadFile*>(a)->upload.get();
  const auto* y = reinterpret_cast<const UploadFile*>(b)->upload.get();
  return x < y ? -1 : (x > y ? 1 : 0);
}

herr_t query(const H5FD_t* /*file*/, unsigned long* flags) {
  if (flags != nullptr) {
    // As the sec2 driver: metadata gathered into blocks (H5Pset_meta_block_size), so that it
    // holds few parts of the upload in memory.
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
  }
  return 0;
}

haddr_t get_eoa(const H5FD_t* file, H5FD_mem_t /*type*/) { return reinterpret_cast<const UploadFile*>(file)->eoa; }

herr_t set_eoa(H5FD_t* file, H5FD_mem_t /*type*/, haddr_t addr) {
  reinterpret_cast<UploadFile*>(file)->eoa = addr;
  return 0;
}

haddr_t get_eof(const H5FD_t* file, H5FD_mem_t /*type*/) {
  return reinterpret_cast<const UploadFile*>(file)->upload->end();
}

herr_t get_handle(H5FD_t* file, hid_t /*fapl*/, void** handle) {
  *handle = reinterpret_cast<UploadFile*>(file);
  return 0;
}

herr_t read(H5FD_t* file, H5FD_mem_t /*type*/, hid_t /*dxpl*/, haddr_t addr, size_t size, void* buffer) {
  try {
    reinterpret_cast<UploadFile*>(file)->upload->read_at(buffer, size, addr);
    return 0;
  } catch (const std::exception& e) {
    push_failure(__func__, e.what());
    return -1;
  }
}

herr_t write(H5FD_t* file, H5FD_mem_t type, hid_t /*dxpl*/, haddr_t addr, size_t size, const void* buffer) {
  auto* f = reinterpret_cast<UploadFile*>(file);
  try {
    if (type == H5FD_MEM_DRAW) {
      if (skipping_raw_writes == 0) f->upload->write_at(buffer, size, addr);
    } else {
      f->upload->write_held(buffer, size, addr);
    }
    return 0;
  } catch (const std::exception& e) {
    push_failure(__func__, e.what());
    return -1;
  }
}

herr_t truncate(H5FD_t* file, hid_t /*dxpl*/, hbool_t /*closing*/) {
  auto* f = reinterpret_cast<UploadFile*>(file);
  try {
    f->upload->set_end(f->eoa);
    return 0;
  } catch (const std::exception& e) {
    push_failure(__func__, e.what());
    return -1;
  }
}

H5FD_class_t make_class() {
  H5FD_class_t c = driver_class<DriverConfig>("h5tile_upload", 0x1f8);
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
  c.truncate = truncate;
  return c;
}

// The driver's ID, registered at first use (and again where HDF5 was closed and restarted).
hid_t driver_id() {
  static const H5FD_class_t cls = make_class();
  static hid_t id = H5I_INVALID_HID;
  (void)register_driver(cls, id);
  return check(id, "cannot register h5tile's upload file driver with HDF5");
}

// `fapl` copied, on the driver, with metadata gathered into blocks (ObjectUpload::meta_block_bytes).
PlistHandle upload_access(const std::shared_ptr<ObjectUpload>& upload, hid_t fapl) {
  PlistHandle access(check(fapl == H5P_DEFAULT ? H5Pcreate(H5P_FILE_ACCESS) : H5Pcopy(fapl), "H5Pcopy(file access)"));
  const DriverConfig config{upload};
  check(H5Pset_driver(access.get(), driver_id(), &config), "cannot set h5tile's upload file driver");
  check(H5Pset_meta_block_size(access.get(), upload->meta_block_bytes()), "H5Pset_meta_block_size");
  return access;
}

}  // namespace

FileHandle create_upload_file(const std::shared_ptr<ObjectUpload>& upload, hid_t fapl) {
  const Hdf5Lock lock;
  const auto access = upload_access(upload, fapl);
  const hid_t id = H5Fcreate(upload->name().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
  if (id < 0) {
    throw_hdf5_failure<Hdf5Error>(fmt::format("cannot create HDF5 file '{}'", upload->name()));
  }
  return FileHandle(id);
}

FileHandle open_upload_file(const std::shared_ptr<ObjectUpload>& upload, hid_t fapl, bool writable) {
  const Hdf5Lock lock;
  const auto access = upload_access(upload, fapl);
  const hid_t id = H5Fopen(upload->name().c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, access.get());
  if (id < 0) {
    throw_hdf5_failure<Hdf5Error>(fmt::format("cannot open '{}' again", upload->name()));
  }
  return FileHandle(id);
}

SkippedRawWrites::SkippedRawWrites() noexcept { ++skipping_raw_writes; }
SkippedRawWrites::~SkippedRawWrites() { --skipping_raw_writes; }

}  // namespace h5tile::detail
