#pragma once
// Helpers for collective operations: a small byte packer for what ranks exchange, and
// agreement on errors so that one rank failing makes every rank throw the same error.

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <h5tile/communicator.hpp>

namespace h5tile::detail {

class Packer {
 public:
  Packer& u64(std::uint64_t v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Packer& str(std::string_view s) {
    u64(s.size());
    bytes_ += s;
    return *this;
  }
  Packer& u64s(const std::vector<std::uint64_t>& v) {
    u64(v.size());
    for (const auto x : v) {
      u64(x);
    }
    return *this;
  }
  [[nodiscard]] const std::string& bytes() const noexcept { return bytes_; }

 private:
  std::string bytes_;
};

class Unpacker {
 public:
  explicit Unpacker(const std::string& bytes) : bytes_(bytes) {}
  std::uint64_t u64();
  std::string str();
  std::vector<std::uint64_t> u64s();

 private:
  const std::string& bytes_;
  std::size_t pos_ = 0;
};

// The exception `error` as bytes (its h5tile type, message and errno); empty for none.
[[nodiscard]] std::string encode_error(const std::exception_ptr& error);
// Throws the exception that `encoded` describes, as its original h5tile type.
[[noreturn]] void throw_encoded(const std::string& encoded);

// Runs `step` (which may throw) on this rank, then agrees across ranks: if any rank failed,
// every rank throws the error of the lowest failing rank. Collective.
void agree(Communicator& comm, const std::function<void()>& step);

// As agree(), but only `root` runs `step`; its result string reaches every rank.
[[nodiscard]] std::string on_root(Communicator& comm, int root, const std::function<std::string()>& step);

}  // namespace h5tile::detail
