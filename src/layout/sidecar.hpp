#pragma once
// Where the files of one write live. For target `out.h5` and dataset `/grp/x`, write
// generation G puts tile i in `out.h5.tiles/grp/x/G/tile-<i>.h5` and builds the new main file
// as `.out.h5.G.tmp` beside the target, then renames it over the target. Everything of
// other generations is stale once the rename is done.

#include <cstdint>
#include <filesystem>
#include <string>

namespace h5tile::detail {

// A fresh, unique write generation ("4f3a9c0d12e87b65").
[[nodiscard]] std::string new_generation();

// `out.h5.tiles`, beside the target.
[[nodiscard]] std::filesystem::path sidecar_dir(const std::filesystem::path& target);
// The folder of one dataset's tiles in the sidecar (`grp/x`), relative to the sidecar.
[[nodiscard]] std::filesystem::path dataset_dir(const std::string& dataset);
// The tile file, relative to the target's folder (as stored in the virtual dataset).
[[nodiscard]] std::filesystem::path tile_relative(const std::filesystem::path& target, const std::string& dataset,
                                                  const std::string& generation, std::uint64_t index);
// The temporary name of the new main file.
[[nodiscard]] std::filesystem::path temp_main(const std::filesystem::path& target, const std::string& generation);

// Removes what earlier writes left: with `whole_file` every generation in the sidecar but
// `keep` (a generation folder, or empty for none); otherwise only within the dataset's folder.
// Removes the sidecar when nothing is left in it. Errors are ignored: stale tiles are never
// mapped, so failing to remove one loses nothing.
void remove_stale(const std::filesystem::path& target, const std::string& dataset, const std::string& keep_generation,
                  bool whole_file) noexcept;

// Makes the complete file at `temp` the target with one rename (after fsync of the file, and
// followed by fsync of the folder, when `sync`): readers see the old file or the new one.
void publish_file(const std::filesystem::path& temp, const std::filesystem::path& target, bool sync);

// Removes the dataset's folder and the sidecar if they are empty.
void remove_empty_folders(const std::filesystem::path& target, const std::string& dataset) noexcept;

}  // namespace h5tile::detail
