#pragma once
// Where the files of one write live. For target `out.h5` and dataset `/grp/x`, write
// generation G puts tile i in `out.h5.tiles/grp/x/G/tile-<i>.h5` and builds the new main file
// as `.out.h5.G.tmp` beside the target, then renames it over the target. Everything of
// other generations is stale once the rename is done.

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

namespace h5tile::detail {

// A fresh, unique write generation: 16 random hex digits, the writer's pid and a hash of its
// host name ("4f3a9c0d12e87b65-4711-9c1e2f03"), so that a later writer on the same host can
// tell a killed writer's leftovers from a live writer's work.
[[nodiscard]] std::string new_generation();

// False only when the generation's writer ran on this host and its process is gone.
[[nodiscard]] bool writer_alive(const std::string& generation);

// Creates the generation's folder (and the sidecar and dataset folders on the way), refusing
// to go through a symbolic link or to reuse an existing generation folder.
void make_generation_folder(const std::filesystem::path& target, const std::string& dataset,
                            const std::string& generation);

// Creates the generation folder (see above), records the dataset it is for, and marks it as
// being written (so that concurrent writers leave it alone); clears the mark once the main
// file that maps it is in place.
void mark_in_progress(const std::filesystem::path& target, const std::string& dataset, const std::string& generation);
void clear_in_progress(const std::filesystem::path& target, const std::string& dataset,
                       const std::string& generation) noexcept;

// Serialises the commit (rename) and clean-up of one target among processes on this host:
// an exclusive flock on the target's folder (commits of other files in that folder wait too,
// for the few milliseconds a commit takes). Where the file system cannot lock a folder, on
// `.<name>.lock` beside the target instead (left in place).
class CommitLock {
 public:
  explicit CommitLock(const std::filesystem::path& target);
  CommitLock(const CommitLock&) = delete;
  CommitLock& operator=(const CommitLock&) = delete;
  ~CommitLock();

 private:
  int fd_ = -1;
};

// Removes temporary main files that writers killed on this host left beside `target`.
void remove_dead_temps(const std::filesystem::path& target) noexcept;

// `out.h5.tiles`, beside the target.
[[nodiscard]] std::filesystem::path sidecar_dir(const std::filesystem::path& target);
// The folder of one dataset's tiles in the sidecar, relative to the sidecar: the dataset's
// normalised path without its leading slash (`grp/x` for `/grp/x`, `a%b` for `/a%b`), so that
// no two datasets share one.
[[nodiscard]] std::filesystem::path dataset_dir(const std::string& dataset);
// The legacy folder of a dataset's tiles, with '%' replaced by '_' (`a_b` for `/a%b`, as for
// `/a_b`), as earlier versions of h5tile named it: remove_stale cleans it up too.
[[nodiscard]] std::filesystem::path legacy_dataset_dir(const std::string& dataset);
// The tile file, relative to the target's folder (as stored in the virtual dataset).
[[nodiscard]] std::filesystem::path tile_relative(const std::filesystem::path& target, const std::string& dataset,
                                                  const std::string& generation, std::uint64_t index);
// The temporary name of the new main file.
[[nodiscard]] std::filesystem::path temp_main(const std::filesystem::path& target, const std::string& generation);

// Removes what earlier writes left: with `whole_file` every generation in the sidecar but
// `keep` (a generation folder, or empty for none); otherwise only the dataset's own generations
// (and those of datasets below it), in its folder and in its legacy folder: a generation
// records its dataset (`.dataset`), and one that does not is removed only when the committed
// file maps none of its files.
// Generations still being written by a live process are left alone; those of writers that
// died on this host go, unless named in `mapped_by_replaced` (dead_writers_mapped_by): those
// are treated as the generation this commit replaces. With `keep_previous`, a generation that
// this commit replaces stays (marked `.superseded`) until the next commit, so that readers
// which opened the old file before the rename (h5py among them) still find its tiles. Call
// under CommitLock. Removes the sidecar when nothing is left in it. Never follows a symbolic
// link. Errors are ignored: stale tiles are never mapped, so failing to remove one loses nothing.
// `vds_prefix` (HDF5_VDS_PREFIX, "" where unset) resolves the committed file's sources as HDF5 does.
void remove_stale(const std::filesystem::path& target, const std::string& dataset, const std::string& keep_generation,
                  bool whole_file, bool keep_previous, const std::string& vds_prefix,
                  const std::set<std::string>& mapped_by_replaced = {}) noexcept;

// The generations in `target`'s sidecar that are still marked in progress, whose writer died
// on this host, and that `target` maps: writers killed after the rename of their commit,
// before they cleared the mark (in the fsync of the folder, or the unlink of the mark). Their
// file is complete and may be open in readers; only a generation that no file maps is a dead
// writer's leftover. Call under CommitLock, before a commit renames its file over `target`.
// The virtual mapping in `target` decides, as HDF5 reads it (not h5tile's tile index, a copy
// that another program could change alone). Where `target` cannot be read, every such
// generation is returned: kept one commit longer rather than removed while it may be in use.
// Reads `target` with HDF5 only where such a generation exists; `vds_prefix` as for remove_stale.
[[nodiscard]] std::set<std::string> dead_writers_mapped_by(const std::filesystem::path& target,
                                                           const std::string& vds_prefix) noexcept;

// Makes the complete file at `temp` the target with one rename (after fsync of the file when
// `sync`): readers see the old file or the new one. The caller flushes the folder.
void publish_file(const std::filesystem::path& temp, const std::filesystem::path& target, bool sync);

// Removes the dataset's folder and the sidecar if they are empty.
void remove_empty_folders(const std::filesystem::path& target, const std::string& dataset) noexcept;

}  // namespace h5tile::detail
