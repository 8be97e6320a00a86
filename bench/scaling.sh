#!/usr/bin/env bash
# Metadata scaling (docs/SCALING.md): (1) mpirun -n N writers (oversubscribed) writing a small
# array, virtual and contiguous; (2) virtual datasets of 16, 256 and 4096 tiles opened and read
# by h5tile and by h5py (HDF5's own VDS path).
#   bench/scaling.sh [DIR (default /tmp/h5tile-scaling)] [MAX_RANKS (default 64)] [TILE_ROWS (default 64)]
# MAX_RANKS: the largest writer count of (1) (1, 2, 4, ... up to it); TILE_ROWS: rows of 1024
# float32 per tile in (2) (64: 256 KiB tiles).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${H5TILE_BUILD_DIR:-build}"
dir="${1:-/tmp/h5tile-scaling}"
max_ranks="${2:-64}"
tile_rows="${3:-64}"
rm -rf "$dir" && mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "== mpirun -n N: each rank writes 64 rows x 4096 uint32 (1 MiB); slowest rank's write_tiles time"
printf "%6s %12s %12s %12s\n" ranks layout "seconds" "files"
for n in 1 2 4 8 16 32 64; do
  [ "$n" -le "$max_ranks" ] || break
  for layout in virtual contiguous; do
    out=$(mpirun --oversubscribe -n "$n" "$build/tests/h5tile_mpi_tool" write "$dir/m.h5" "$layout" $((64 * n)) 4096)
    t=$(echo "$out" | sed -n 's/.* in \([0-9.]*\) s/\1/p' | sort -g | tail -1)
    files=$(find "$dir" -name '*.h5' | wc -l)
    printf "%6s %12s %12s %12s\n" "$n" "$layout" "$t" "$files"
  done
done
rm -rf "$dir"/m.h5*
echo "== virtual datasets of many tiles (h5tile)"
"$build/bench/h5tile_vds_scaling" "$dir" "$tile_rows"
echo "== the same files read by h5py (HDF5's VDS path)"
python3 - "$dir" <<'PY'
import sys, time, h5py
for t in (16, 256, 4096):
    for kind in ("vds", "contiguous"):
        path = f"{sys.argv[1]}/{kind}-{t}.h5"
        with h5py.File(path, "r") as f:
            f["data"][...]
        t0 = time.perf_counter()
        with h5py.File(path, "r") as f:
            a = f["data"][...]
        dt = time.perf_counter() - t0
        print(f"{t:8d} {kind:>10}  h5py read {dt:8.3f} s  {a.nbytes / dt / 1e9:6.2f} GB/s")
PY
