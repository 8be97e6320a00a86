#include "comm/collective.hpp"

#include <h5tile/error.hpp>

namespace h5tile::detail {
namespace {

enum class Kind : std::uint64_t {
  Invalid,
  Unsupported,
  DatasetMissing,
  NotDataset,
  Directory,
  Runtime,
  Missing,
  Exists,
  NotHdf5,
  VirtualSource,
  Hdf5,
  Io,
  Cancelled,
  Other,
  ProbeFailed,
};

}  // namespace

std::uint64_t Unpacker::u64() {
  if (pos_ + sizeof(std::uint64_t) > bytes_.size()) {
    throw RuntimeError("collective message is truncated");
  }
  std::uint64_t v = 0;
  std::memcpy(&v, bytes_.data() + pos_, sizeof v);
  pos_ += sizeof v;
  return v;
}

std::string Unpacker::str() {
  const auto n = u64();
  if (pos_ + n > bytes_.size()) {
    throw RuntimeError("collective message is truncated");
  }
  std::string s = bytes_.substr(pos_, n);
  pos_ += n;
  return s;
}

std::vector<std::uint64_t> Unpacker::u64s() {
  std::vector<std::uint64_t> v(u64());
  for (auto& x : v) {
    x = u64();
  }
  return v;
}

std::string encode_error(const std::exception_ptr& error) {
  if (!error) {
    return {};
  }
  auto pack = [](Kind kind, const char* message, int err = 0) {
    return Packer().u64(static_cast<std::uint64_t>(kind)).u64(static_cast<std::uint64_t>(err)).str(message).bytes();
  };
  // Most derived types first.
  try {
    std::rethrow_exception(error);
  } catch (const UnsupportedType& e) {
    return pack(Kind::Unsupported, e.what());
  } catch (const DatasetNotFound& e) {
    return pack(Kind::DatasetMissing, e.what());
  } catch (const NotADataset& e) {
    return pack(Kind::NotDataset, e.what());
  } catch (const IsADirectory& e) {
    return pack(Kind::Directory, e.what());
  } catch (const InvalidArgument& e) {
    return pack(Kind::Invalid, e.what());
  } catch (const FileNotFound& e) {
    return pack(Kind::Missing, e.what());
  } catch (const FileExists& e) {
    return pack(Kind::Exists, e.what());
  } catch (const ProbeFailed& e) {
    return pack(Kind::ProbeFailed, e.what());
  } catch (const NotHdf5File& e) {
    return pack(Kind::NotHdf5, e.what());
  } catch (const Cancelled& e) {
    return pack(Kind::Cancelled, e.what());
  } catch (const VirtualSourceError& e) {
    return pack(Kind::VirtualSource, e.what());
  } catch (const Hdf5Error& e) {
    return pack(Kind::Hdf5, e.what());
  } catch (const IoError& e) {
    return pack(Kind::Io, e.what(), e.error_number());
  } catch (const RuntimeError& e) {
    return pack(Kind::Runtime, e.what());
  } catch (const std::invalid_argument& e) {
    return pack(Kind::Invalid, e.what());
  } catch (const std::exception& e) {
    return pack(Kind::Other, e.what());
  } catch (...) {
    return pack(Kind::Other, "unknown exception");
  }
}

void throw_encoded(const std::string& encoded) {
  Unpacker in(encoded);
  const auto kind = static_cast<Kind>(in.u64());
  const auto err = static_cast<int>(in.u64());
  const auto message = in.str();
  switch (kind) {
    case Kind::Invalid: throw InvalidArgument(message);
    case Kind::Unsupported: throw UnsupportedType(message);
    case Kind::DatasetMissing: throw DatasetNotFound(message);
    case Kind::NotDataset: throw NotADataset(message);
    case Kind::Directory: throw IsADirectory(message);
    case Kind::Missing: throw FileNotFound(message);
    case Kind::Exists: throw FileExists(message);
    case Kind::NotHdf5: throw NotHdf5File(message);
    case Kind::ProbeFailed: throw ProbeFailed(message);
    case Kind::VirtualSource: throw VirtualSourceError(message);
    case Kind::Hdf5: throw Hdf5Error(message);
    case Kind::Io: throw IoError(message, err);
    case Kind::Cancelled: throw Cancelled(message);
    case Kind::Runtime:
    case Kind::Other:
    default: throw RuntimeError(message);
  }
}

void agree(Communicator& comm, const std::function<void()>& step) {
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  const auto all = comm.all_gather(encode_error(error));
  for (const auto& e : all) {
    if (!e.empty()) {
      throw_encoded(e);
    }
  }
}

std::string on_root(Communicator& comm, int root, const std::function<std::string()>& step) {
  std::string message;
  if (comm.rank() == root) {
    try {
      message = Packer().u64(1).str(step()).bytes();
    } catch (...) {
      message = Packer().u64(0).str(encode_error(std::current_exception())).bytes();
    }
  }
  const auto received = comm.broadcast(message, root);
  Unpacker in(received);
  const bool ok = in.u64() == 1;
  auto payload = in.str();
  if (!ok) {
    throw_encoded(payload);
  }
  return payload;
}

}  // namespace h5tile::detail
