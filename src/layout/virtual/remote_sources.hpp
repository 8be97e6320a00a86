#pragma once
// The sources of a virtual dataset in a remote file: each relative source name resolves against
// the folder of the file's URL (and must stay inside it: no absolute path, "..", other host or
// local file), and each source object is opened as a byte source of its own, many at once. HDF5
// never opens them itself: its driver refuses every file but the one object it was given
// (hdf5/remote_driver.hpp), and HDF5 reads a source it cannot open as fill values.

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hdf5/handle.hpp"
#include "io/byte_source.hpp"
#include "io/http/url.hpp"
#include "io/remote_options.hpp"
#include "layout/opened_dataset.hpp"

namespace h5tile::detail {

struct TileIndex;

// The virtual dataset `opened` (its file, dataset and info in place) with dataset creation
// property list `dcpl`, in a remote file: its sources, objects beside the file, opened (tiles
// h5tile wrote at their tile table's offsets; others by HDF5 on h5tile's driver, each on its own
// object) and mapped. Throws VirtualSourceError naming a source outside the folder, unusable,
// or of a mapping h5tile does not read from a remote file (not box to box, reshaped, nested).
void open_remote_virtual(OpenedDataset& opened, hid_t dcpl);

// For an early read of the remote file `opened` (open_from_tile_index): the tiles of `index`,
// each its own object beside the file, opened and checked (size and identity) and mapped; false
// where the index is unusable (a tile outside the folder, two tiles in one object, a tile that
// is not the file the index names).
[[nodiscard]] bool open_remote_tiles(OpenedDataset& opened, const TileIndex& index);

// Source `name` of the virtual dataset `where` (a message prefix) in the file at `base`: the URL
// of its object, or nullopt for "." (the file itself). Throws VirtualSourceError for a name
// that resolve_inside refuses, naming it (as a URL without its query string where it is one).
[[nodiscard]] std::optional<Url> remote_source_url(const Url& base, const std::string& name, const std::string& where);

// The options that source objects are opened with: the file's, with a first request of at most
// 64 KiB (a tile's metadata and the start of its data; thousands of objects each keep theirs).
[[nodiscard]] RemoteOptions source_object_options(const RemoteOptions& options);

// One object of open_remote_objects: opened, or what opening it threw.
struct OpenedObject {
  std::shared_ptr<const ByteSource> source;
  std::exception_ptr error;
};

// Opens every one of `urls` (open_remote), up to `options.connections` at once.
[[nodiscard]] std::vector<OpenedObject> open_remote_objects(const std::vector<Url>& urls, const RemoteOptions& options);

// Whether `object` is the tile file a tile table row describes: of `file_size` bytes, with the
// identity (engine/checksum.hpp: tile_identity) recorded when `data_bytes` were written at
// `raw_offset`. Then its bytes at `raw_offset` are the dataset HDF5 would read; the object's
// version is checked on every later response, so a replaced object is an error, never mixed data.
[[nodiscard]] bool is_remote_tile(const ByteSource& object, std::uint64_t raw_offset, std::uint64_t file_size,
                                  std::uint64_t identity, std::uint64_t data_bytes);

}  // namespace h5tile::detail
