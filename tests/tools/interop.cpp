// Test tool: drives h5tile from the Python tests, with raw bytes in and out, so that pytest
// can compare h5tile with h5py and numpy as independent references.
//
//   h5tile_interop write RAW DTYPE SHAPE FILE DATASET [LAYOUT RANKS MODE]
//   h5tile_interop read FILE DATASET RAW            prints {"dtype": ..., "shape": [...]}
//   h5tile_interop box FILE DATASET OFFSET EXTENT RAW
//   h5tile_interop batched FILE DATASET CHUNK RAW   blocks appended to RAW; prints offsets
//   h5tile_interop hdf5-version                     prints {"hdf5": "1.14.5"}, the library in use
//
// SHAPE, OFFSET, EXTENT and CHUNK are comma-separated ("" for 0-d). Errors print
// {"error": TYPE, "message": ...} and exit 1.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <hdf5.h>
#include <h5tile/h5tile.hpp>

namespace {

h5tile::Shape parse_shape(const std::string& text) {
  h5tile::Shape shape;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto comma = std::min(text.find(',', pos), text.size());
    shape.push_back(std::stoull(text.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  return shape;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += c;
    }
  }
  return out;
}

void save(const std::string& path, const h5tile::Array& a, bool append = false) {
  std::ofstream out(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out.write(reinterpret_cast<const char*>(a.data()), static_cast<std::streamsize>(a.nbytes()));
}

void print_array(const h5tile::Array& a) {
  fmt::print("{{\"dtype\": \"{}\", \"shape\": [{}]}}\n", a.dtype().name(), fmt::join(a.shape(), ", "));
}

int run(const std::vector<std::string>& args) {
  const auto& cmd = args.at(0);
  if (cmd == "write") {
    std::ifstream in(args.at(1), std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    h5tile::ArrayView view{bytes.data(), h5tile::DType::from_name(args.at(2)), parse_shape(args.at(3)), {}};
    h5tile::WriteOptions options;
    if (args.size() > 6) {
      options.layout = h5tile::layout_from_name(args[6]);
    }
    if (args.size() > 7) {
      options.ranks = static_cast<unsigned>(std::stoul(args[7]));
    }
    if (args.size() > 8) {
      options.mode = args[8] == "append"      ? h5tile::Mode::Append
                     : args[8] == "exclusive" ? h5tile::Mode::Exclusive
                                              : h5tile::Mode::Overwrite;
    }
    h5tile::to_file(view, args.at(4), args.at(5), options).wait();
    fmt::print("{{\"written\": {}}}\n", view.nbytes());
    return 0;
  }
  if (cmd == "read") {
    const auto a = h5tile::from_file(args.at(1), args.at(2));
    save(args.at(3), a);
    print_array(a);
    return 0;
  }
  if (cmd == "box") {
    const h5tile::Box box{parse_shape(args.at(3)), parse_shape(args.at(4))};
    const auto a = h5tile::read_box(args.at(1), args.at(2), box);
    save(args.at(5), a);
    print_array(a);
    return 0;
  }
  if (cmd == "batched") {
    std::ofstream(args.at(4), std::ios::trunc);
    std::vector<std::string> blocks;
    for (auto& block : h5tile::from_file_batched(args.at(1), args.at(2), parse_shape(args.at(3)))) {
      save(args.at(4), block.data, true);
      blocks.push_back(fmt::format("{{\"offset\": [{}], \"shape\": [{}]}}", fmt::join(block.offset, ", "),
                                   fmt::join(block.data.shape(), ", ")));
    }
    fmt::print("{{\"blocks\": [{}]}}\n", fmt::join(blocks, ", "));
    return 0;
  }
  if (cmd == "hdf5-version") {
    unsigned major = 0;
    unsigned minor = 0;
    unsigned release = 0;
    H5get_libversion(&major, &minor, &release);
    fmt::print("{{\"hdf5\": \"{}.{}.{}\"}}\n", major, minor, release);
    return 0;
  }
  fmt::print(stderr, "unknown command '{}'\n", cmd);
  return 2;
}

std::string error_type() {
  try {
    throw;
  } catch (const h5tile::UnsupportedType&) {
    return "UnsupportedType";
  } catch (const h5tile::DatasetNotFound&) {
    return "DatasetNotFound";
  } catch (const h5tile::NotADataset&) {
    return "NotADataset";
  } catch (const h5tile::IsADirectory&) {
    return "IsADirectory";
  } catch (const h5tile::InvalidArgument&) {
    return "InvalidArgument";
  } catch (const h5tile::FileNotFound&) {
    return "FileNotFound";
  } catch (const h5tile::FileExists&) {
    return "FileExists";
  } catch (const h5tile::NotHdf5File&) {
    return "NotHdf5File";
  } catch (const h5tile::VirtualSourceError&) {
    return "VirtualSourceError";
  } catch (const h5tile::Error&) {
    return "Error";
  } catch (...) {
    return "other";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    fmt::print(stderr, "usage: see the comment at the top of tests/tools/interop.cpp\n");
    return 2;
  }
  try {
    return run(args);
  } catch (const std::exception& e) {
    const auto type = error_type();
    fmt::print("{{\"error\": \"{}\", \"message\": \"{}\"}}\n", type, json_escape(e.what()));
    return 1;
  }
}
