#!/usr/bin/env bash
# Everything the GPU machine runs, in one go: build with CUDA, the GPU tests, the CPU tests
# there, the GPU benchmark with its peers, and the MPI runs if MPI is there. Logs go to
# $OUT (or ./gpu-out); a short table is printed last. Run scripts/prepare_gpu_deps.sh first
# and carry .deps/ (headers, GoogleTest sources and KvikIO wheels the machine lacks).
#   usage: scripts/gpu_machine.sh [xarray|dask|gpus|legate-gpus|remote|cn-part|full|quick|tests|vds|peers|bench|cpu-bench|legate|legate-tests|legate-writes|s3-write|legate-bench|engine-bench|cold-probe|cold-phases|legate-cold|cold-peers|nvcomp|gpu-check|compressed]
#   full: everything; tests: build and tests only; quick: tests plus the single-file write probe
#   (a few more minutes of device time); vds: tests plus the virtual-dataset benchmarks (4096
#   tiles of 2 MiB and of 256 KiB, early reads on and off and their parts, HDF5's mapping floor); peers: tests and benchmarks (with the KvikIO head-to-head
#   of bench/gpu_tuning.py), no MPI; bench: build and GPU benchmarks only; cpu-bench: build and
#   the CPU benchmark (bench/peers.py) at H5TILE_BENCH_GIB, warm then cold; legate: build, then
#   h5tile.legate's tests on one GPU (the GPU variant at H5TILE_BENCH_GIB against the CPU variant
#   and h5py; cuPyNumeric's tests too where cn-part brought it) and its warm read benchmark
#   against legate.io.hdf5; legate-tests: the same without the benchmark; legate-writes: writes of
#   H5TILE_BENCH_GIB from the framebuffer, h5tile.legate against legate.io.hdf5; legate-bench: build, then the
#   cold reads, the writes, reads at Legate's default --zcmem, and the machine's CPUs alone
#   (legate from .deps/legate-site.tar.xz, which scripts/prepare_gpu_deps.sh packs); engine-bench:
#   build, then issue 20's cases at H5TILE_BENCH_GIB: cold reads by mode, a loop of from_file
#   calls against read_into and legate.io.hdf5 (16 CPUs), writes from one rank and from all;
#   cold-probe: cold file -> GPU strategies, h5tile's device modes, an h5tile.legate read at the
#   default --zcmem; cold-phases: the phases of a cold device read (bench/cold_device_phases.py);
#   gpu-check: the GPU tests alone, one rank's writes, h5tile.legate's writes from the framebuffer;
#   legate-cold: cold reads into one GPU, h5tile.legate against legate.io.hdf5, h5tile, h5py and dd;
#   cold-peers: issue 28's cold target in one run (bench/cold_patterns.py --gib 4 --rounds 3
#   --drop-caches): h5tile's default into device memory against h5py, KvikIO and legate.io.hdf5
#   (and h5tile.legate), into host memory against dd iflag=direct, each read in its own process;
#   carry .deps/include, .deps/googletest, .deps/wheels and .deps/legate-site.tar.xz;
#   nvcomp: build, then GPU decoding (issue 19) with nvCOMP from .deps-nvcomp/libnvcomp.so.6.xz
#   (scripts/prepare_gpu_deps.sh --nvcomp; carry .deps-nvcomp, with .deps or in a run of its own):
#   every GPU test (CTest label gpu), the CuPy tests, and bench/compressed_read.py --device at
#   H5TILE_BENCH_GIB (cold and warm; GPU decode on, off and auto; the uncompressed file)
#   compressed: build, then the CPU side of issue 19 on the machine's cores: bench/compressed_read.py
#   (H5TILE_BENCH_GIB, default here 2; cold and warm, against h5py + hdf5plugin and TensorStore),
#   bench/compressed_write.py (half that size) and bench/many_chunks.py, with the peers from
#   .deps-bench/site.tar.xz (scripts/prepare_gpu_deps.sh --bench; carry it with .deps/include
#   and .deps/googletest, not the rest of .deps)
#   dask: build, then h5tile.dask's tests (and the xarray backend's, where present) there, CuPy
#   blocks included (carry .deps/include, .deps/googletest and .deps-bench/py312-dask)
#   xarray: build, then issue 29's benchmarks with the wheels of .deps-bench/py312-dask (as dask;
#   netCDF4 among them): bench/xarray_read.py (engine="h5tile" against h5netcdf and netcdf4,
#   threaded and on a LocalCluster; da.from_array(h5py) against h5tile.dask) and
#   bench/dask_write.py at H5TILE_BENCH_GIB (default here 2; gzip writes at an eighth; fsync, then
#   the uncompressed case again without), then
#   bench/xarray_gpu.py at H5TILE_GPU_GIB (default 8). Carry .deps/include, .deps/googletest and
#   .deps-bench/py312-dask. About 6 minutes after the build: each benchmark starts no round that
#   would end past its share of H5TILE_XARRAY_BUDGET (default 450 s from the start).
#   probe: build, then each argument as one probe and its arguments ("bench/probes/x.py --gib 2"),
#   with nvCOMP and the Dask wheels where carried (.deps-nvcomp, .deps-bench/py312-dask)
#   remote: build, then remote reads into device memory from nginx on loopback (issue 27:
#   bench/remote_read.py --device 0 against KvikIO's RemoteFile; carry .deps/include,
#   .deps/googletest, .deps/wheels, .deps-bench and .deps-nvcomp)
#   legate-gpus: build, then h5tile.legate's tests and bench/legate_read.py (reads and writes
#   against legate.io.hdf5) on 1, 2, 4 and 8 GPUs, as many as there are (issue 44; carry as legate)
#   gpus: build (no C++ tests), then one Dask worker per GPU (issue 44): tests/python/test_dask_gpus.py
#   and bench/gpus_read.py (carry .deps/include and .deps-bench/dask-cuda: scripts/prepare_gpu_deps.sh
#   --dask-cuda, which copies nginx into .deps-bench/nginx too; .deps/libdeflate too where prepared)
#   s3-write: build (no C++ tests), then tests/python/test_s3_writes.py -k "device or mpi4py or short_runs" and
#   bench/s3_write.py --device 0 --mpi 4 (issue 43): to_file into s3:// (SeaweedFS on loopback)
#   from device memory against host memory, 4 MPI processes, and boto3 (carry .deps/include
#   and .deps-bench/s3: scripts/prepare_gpu_deps.sh --s3)
#   cn-part: keep one carried part of cuPyNumeric (scripts/prepare_gpu_deps.sh --cupynumeric) in
#   /tmp for the legate modes, which unpack it once every part is there
set -uo pipefail
cd "$(dirname "$0")/.."
cn_parts=/tmp/h5tile-cn-parts
if [ "${1:-}" = "cn-part" ]; then
  # cuPyNumeric's packed site travels in parts of 60 MiB (scripts/prepare_gpu_deps.sh --cupynumeric),
  # one per call (carry .deps-cn/SHA256SUMS and one .deps-cn/part-*): each call keeps its part in
  # /tmp, which a warm machine keeps, until a legate run unpacks them. No build.
  mkdir -p "$cn_parts" && cp .deps-cn/SHA256SUMS .deps-cn/part-* "$cn_parts"/ &&
    (cd "$cn_parts" && sha256sum -c --ignore-missing SHA256SUMS) &&
    echo "$(cd "$cn_parts" && awk '{print $2}' SHA256SUMS | xargs ls 2>/dev/null | wc -l) of" \
      "$(wc -l < "$cn_parts/SHA256SUMS") parts here"
  exit $?
fi
out="${OUT:-gpu-out}"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
gib="${H5TILE_BENCH_GIB:-8}"
{
  nvidia-smi -L; nproc; free -g | head -2; df -h /tmp | tail -1
  echo "memory limit (cgroup): $(cat /sys/fs/cgroup/memory.max 2>/dev/null || echo unknown)"
  python3 -c "import h5py, cupy; print('h5py', h5py.__version__, 'cupy', cupy.__version__)"
} > "$out/machine.txt" 2>&1

python=OFF
python3 -c "import nanobind" 2>/dev/null && python=ON
tests=ON
case "${1:-}" in s3-write | gpus) tests=OFF ;; esac  # the library and its Python module only (no GoogleTest carried)
# libdeflate, as the CPU machines and CI build with, where carried (.deps/libdeflate: the machine has
# only zlib, which deflates about half as fast).
deflate=()
[ -f .deps/libdeflate/libdeflate.so.0 ] &&
  deflate=(-DLibdeflate_INCLUDE_DIR="$PWD/.deps/libdeflate" -DLibdeflate_LIBRARY="$PWD/.deps/libdeflate/libdeflate.so.0")
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DH5TILE_WITH_CUDA=ON -DH5TILE_BUILD_PYTHON=$python \
  -DH5TILE_BUILD_TESTS=$tests "${deflate[@]}" > "$out/build.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" >> "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

export H5TILE_GPU_TEST_DIR=/tmp
mode="${1:-full}"
python3 -c "import legate.io.hdf5" > "$out/legate.txt" 2>&1 && echo "legate.io.hdf5 imports" >> "$out/legate.txt"
legate_setup() {
  # Legate from the packed wheel, with NCCL from the machine's Python and CUDA's own libraries.
  rm -rf /tmp/legate-site && mkdir -p /tmp/legate-site && tar -C /tmp/legate-site -xJf .deps/legate-site.tar.xz
  local nccl cuda
  nccl="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))')"
  cuda="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")/targets/x86_64-linux/lib"
  export PYTHONPATH="/tmp/legate-site${PYTHONPATH:+:$PYTHONPATH}"
  export LD_LIBRARY_PATH="$nccl:$cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LEGATE_AUTO_CONFIG=0 LEGATE_SHOW_CONFIG=0 H5TILE_BUILD_DIR=build-gpu
  # cuPyNumeric, where every part came (cn-part); its CUDA math libraries are the toolkit's.
  if [ -f "$cn_parts/SHA256SUMS" ] && (cd "$cn_parts" && sha256sum -c --quiet SHA256SUMS 2>/dev/null); then
    # Exactly the parts SHA256SUMS names, in its order (a part left from an earlier pack is not one).
    rm -rf /tmp/cn-site && mkdir -p /tmp/cn-site &&
      (cd "$cn_parts" && awk '{print $2}' SHA256SUMS | xargs cat) | xz -dc | tar -C /tmp/cn-site -xf - &&
      export PYTHONPATH="/tmp/cn-site:$PYTHONPATH" &&
      python3 -c "import h5py, cupynumeric; print('cupynumeric', cupynumeric.__version__)" >> "$out/machine.txt" 2>&1
  else
    echo "cupynumeric: not carried (scripts/gpu_machine.sh cn-part)" >> "$out/machine.txt"
  fi
}
if [ "$mode" = "legate" ] || [ "$mode" = "legate-tests" ] || [ "$mode" = "legate-bench" ] ||
   [ "$mode" = "legate-writes" ] || [ "$mode" = "legate-gpus" ]; then
  legate_setup
  gpu_config="--gpus 1 --cpus 4 --sysmem 40000 --fbmem 60000 --zcmem 12288"
  mib=$((gib * 1024))
  if [ "$mode" = "legate-gpus" ]; then
    # Issue 44: h5tile.legate's tests and its reads and writes against legate.io.hdf5 on 1, 2, 4
    # and 8 GPUs (as many as the machine has), each point task on its own GPU.
    gpus=$(nvidia-smi -L | wc -l)
    for n in 1 2 4 8; do
      [ "$n" -le "$gpus" ] || break
      config="--gpus $n --cpus $((4 * n)) --sysmem 40000 --fbmem 60000 --zcmem 12288"
      echo "== $n GPU(s): $config"
      LEGATE_CONFIG="$config" H5TILE_LEGATE_GPU_GIB="$gib" python3 -m pytest -q -rs -p no:cacheprovider \
        tests/legate/test_gpu_variant.py tests/legate/test_h5tile_legate.py 2>&1 | tail -3
      LEGATE_CONFIG="$config" python3 bench/legate_read.py --mib "$mib" --repeat 3 --no-tiny --write-mib "$mib" \
        --dir /tmp/h5tile-legate-bench 2>&1 | grep -vE "^\[[0-9]"
    done > "$out/legate_bench.log" 2>&1
  fi
  if [ "$mode" = "legate-writes" ]; then
    LEGATE_CONFIG="$gpu_config" python3 bench/legate_read.py --mib 256 --repeat 3 --no-tiny --write-mib "$mib" \
      --dir /tmp/h5tile-legate-bench > "$out/legate_bench.log" 2>&1
  fi
  if [ "$mode" = "legate" ] || [ "$mode" = "legate-tests" ]; then
    LEGATE_CONFIG="$gpu_config" H5TILE_LEGATE_GPU_GIB="$gib" python3 -m pytest -q -rs -p no:cacheprovider \
      tests/legate/test_gpu_variant.py tests/legate/test_h5tile_legate.py > "$out/legate_tests.log" 2>&1
    [ "$mode" = "legate" ] && LEGATE_CONFIG="$gpu_config" python3 bench/legate_read.py --mib "$mib" --repeat 3 \
      --dir /tmp/h5tile-legate-bench > "$out/legate_bench.log" 2>&1
  elif [ "$mode" = "legate-bench" ]; then
    { LEGATE_CONFIG="$gpu_config" python3 bench/legate_read.py --mib "$mib" --repeat 3 --cold --no-tiny \
        --write-mib 4096 --dir /tmp/h5tile-legate-bench
      # Legate's default --zcmem: legate.io.hdf5 stages reads there; h5tile.legate does not.
      # Each engine in its own process: legate.io.hdf5 aborts the process when ZCMEM is too small.
      for engine in h5tile.legate legate.io.hdf5; do
        LEGATE_CONFIG="--gpus 1 --cpus 4 --sysmem 40000 --fbmem 60000" python3 bench/legate_read.py --mib "$mib" \
          --repeat 2 --no-tiny --only "$engine" --dir /tmp/h5tile-legate-bench 2>&1 | grep -E "^[^[]|RESOURCE" | cut -c1-300
      done
      LEGATE_CONFIG="--gpus 0 --cpus $(nproc) --sysmem 40000" python3 bench/legate_read.py --mib "$mib" \
        --repeat 3 --no-tiny --dir /tmp/h5tile-legate-bench
    } > "$out/legate_bench.log" 2>&1
  fi
  rm -rf /tmp/h5tile-legate-bench
  echo "== machine"; cat "$out/machine.txt"
  [ -f "$out/legate_tests.log" ] && { echo "== h5tile.legate tests on a GPU"; tail -15 "$out/legate_tests.log"; }
  [ -f "$out/legate_bench.log" ] && { echo "== h5tile.legate benchmark"; grep -vE "^\[[0-9]" "$out/legate_bench.log" | tail -40; }
  exit 0
fi
if [ "$mode" = "nvcomp" ]; then
  mkdir -p /tmp/h5tile-nvcomp
  xz -dc .deps-nvcomp/libnvcomp.so.6.xz > /tmp/h5tile-nvcomp/libnvcomp.so.6 ||
    { echo "no .deps-nvcomp/libnvcomp.so.6.xz: run scripts/prepare_gpu_deps.sh --nvcomp and carry .deps-nvcomp"; exit 1; }
  export H5TILE_NVCOMP_LIBRARY=/tmp/h5tile-nvcomp/libnvcomp.so.6
  (cd build-gpu && ctest -L gpu --output-on-failure -j 1) > "$out/gpu_tests.log" 2>&1
  ./build-gpu/tests/h5tile_gpu_tests --gtest_filter='Nvcomp*:*GpuDecode*' 2>&1 |
    grep -E "INFO|OK|FAILED|SKIPPED|Failure|Expected|Which|  " > "$out/nvcomp_gtest.log"
  H5TILE_BUILD_DIR=build-gpu python3 -m pytest -q -rs tests/python/test_gpu_decode.py tests/python/test_cupy.py \
    > "$out/python_tests.log" 2>&1
  (cd bench && H5TILE_BUILD_DIR=build-gpu python3 compressed_read.py --device $((gib * 1024)) --rounds 2) \
    > "$out/nvcomp_bench.log" 2>&1
  echo "== machine"; cat "$out/machine.txt"
  echo "== GPU tests"; grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/gpu_tests.log" | tail -20
  echo "== GPU decoding (gtest)"; grep -E "INFO|FAILED|SKIPPED" "$out/nvcomp_gtest.log" | tail -20
  echo "== Python (CuPy)"; grep -E "passed|failed|SKIPPED|Error" "$out/python_tests.log" | tail -10
  echo "== compressed reads into device memory"; cat "$out/nvcomp_bench.log"
  exit 0
fi
# Dask, distributed, xarray, h5netcdf and pandas from the carried .deps-bench/py312-dask, on
# PYTHONPATH (removed again by the mode that installed them).
dask_site() {
  [ -d .deps-bench/py312-dask ] || return 0
  rm -rf /tmp/h5tile-dask-site && mkdir -p /tmp/h5tile-dask-site &&
    pip install -q --no-deps --target /tmp/h5tile-dask-site .deps-bench/py312-dask/*.whl >> "$out/build.log" 2>&1 ||
    { echo "dask: the carried wheels did not install"; tail -5 "$out/build.log"; }
  export PYTHONPATH="/tmp/h5tile-dask-site${PYTHONPATH:+:$PYTHONPATH}"
}
# nvCOMP from the carried .deps-nvcomp, where it came.
nvcomp_library() {
  [ -f .deps-nvcomp/libnvcomp.so.6.xz ] || return 0
  mkdir -p /tmp/h5tile-nvcomp && xz -dc .deps-nvcomp/libnvcomp.so.6.xz > /tmp/h5tile-nvcomp/libnvcomp.so.6 &&
    export H5TILE_NVCOMP_LIBRARY=/tmp/h5tile-nvcomp/libnvcomp.so.6
}
if [ "$mode" = "s3-write" ]; then
  # Issue 43's GPU target: to_file into s3:// from device memory against the same write from host
  # memory (and boto3's upload_file of the raw bytes), SeaweedFS on loopback; H5TILE_BENCH_GIB
  # (default 1 here); other arguments replace the benchmark's (scripts/gpu_machine.sh s3-write
  # --cases gzip --rounds 2). Carry .deps/include and .deps-bench/s3 (scripts/prepare_gpu_deps.sh --s3).
  s3_gib="${H5TILE_BENCH_GIB:-1}"
  rm -rf /tmp/h5tile-s3-site && mkdir -p /tmp/h5tile-s3-site &&
    xz -dc .deps-bench/s3/weed.xz > /tmp/h5tile-s3-site/weed && chmod +x /tmp/h5tile-s3-site/weed &&
    pip install -q --no-deps --target /tmp/h5tile-s3-site .deps-bench/s3/*.whl >> "$out/build.log" 2>&1 ||
    { echo "s3-write: .deps-bench/s3 did not unpack (scripts/prepare_gpu_deps.sh --s3)"; tail -5 "$out/build.log"; exit 1; }
  export PYTHONPATH="/tmp/h5tile-s3-site${PYTHONPATH:+:$PYTHONPATH}" H5TILE_WEED=/tmp/h5tile-s3-site/weed
  export H5TILE_BUILD_DIR=build-gpu
  # The device-memory tests of the S3 writes (skipped on machines without a GPU), and those of
  # MPI processes writing one object through mpi4py (host and device memory).
  python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_s3_writes.py -k "device or mpi4py or short_runs" \
    > "$out/s3_tests.log" 2>&1
  shift
  [ $# -gt 0 ] || set -- --rounds 3 --cases contiguous --engines h5tile,boto3 --device 0 --mpi 4 \
    --boto3-concurrency 8,16,32 --boto3-part-mib 8,64
  python3 bench/s3_write.py --gib "$s3_gib" --dir /tmp "$@" > "$out/s3_write.log" 2>&1
  echo "rc $?" >> "$out/s3_write.log"
  rm -rf /tmp/h5tile-s3-site
  echo "== machine"; cat "$out/machine.txt"
  echo "== S3 write tests from device memory"; tail -5 "$out/s3_tests.log"
  echo "== writes into S3 from device memory (bench/s3_write.py)"; tail -30 "$out/s3_write.log"
  exit 0
fi
if [ "$mode" = "probe" ]; then
  # One or more probes (bench/probes/), after the build, with nvCOMP and the Dask wheels where
  # carried: scripts/gpu_machine.sh probe "bench/probes/a.py --x 1" "bench/probes/b.py" (each
  # argument one probe and its arguments; output in $OUT/probe-N.log and printed).
  dask_site
  nvcomp_library
  shift
  n=0
  for probe in "$@"; do
    n=$((n + 1))
    echo "== $probe"
    # shellcheck disable=SC2086  # the probe's own arguments split as on a command line
    H5TILE_BUILD_DIR=build-gpu timeout 900 python3 $probe 2>&1 | tee "$out/probe-$n.log" | tail -60
  done
  rm -rf /tmp/h5tile-dask-site
  exit 0
fi
if [ "$mode" = "gpus" ]; then
  # Issue 44: one Dask worker per GPU (dask-cuda's LocalCUDACluster from the carried
  # .deps-bench/dask-cuda, else workers placed by CUDA_VISIBLE_DEVICES): the tests, then
  # bench/gpus_read.py with $H5TILE_GPUS_ARGS (default: 4 GiB, cold and remote too).
  site=/tmp/h5tile-dask-cuda-site
  if [ -d .deps-bench/dask-cuda ]; then
    rm -rf "$site" && mkdir -p "$site" &&
      pip install -q --no-deps --target "$site" .deps-bench/dask-cuda/*.whl >> "$out/build.log" 2>&1 &&
      export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" ||
      { echo "dask-cuda: the carried wheels did not install"; tail -5 "$out/build.log"; }
  fi
  [ -x .deps-bench/nginx/nginx ] && export H5TILE_NGINX="$PWD/.deps-bench/nginx/nginx"  # --remote's server
  python3 -c "import dask_cuda, distributed; print('dask-cuda', dask_cuda.__version__, 'distributed', distributed.__version__)" \
    >> "$out/machine.txt" 2>&1
  H5TILE_BUILD_DIR=build-gpu python3 -m pytest -q -rs -p no:cacheprovider -s tests/python/test_dask_gpus.py \
    tests/python/test_dask.py -k "gpu or device" > "$out/gpus_tests.log" 2>&1
  # shellcheck disable=SC2086  # the benchmark's own arguments split as on a command line
  H5TILE_BUILD_DIR=build-gpu timeout 900 python3 bench/gpus_read.py ${H5TILE_GPUS_ARGS:---gib 4 --cold --remote} \
    > "$out/gpus_read.log" 2>&1
  rm -rf "$site"
  echo "== machine"; cat "$out/machine.txt"
  echo "== tests/python/test_dask_gpus.py and test_dask.py's device tests"; grep -E "passed|failed|SKIP|Error|worker" "$out/gpus_tests.log" | tail -15
  echo "== bench/gpus_read.py"; tail -30 "$out/gpus_read.log"
  exit 0
fi
if [ "$mode" = "dask" ]; then
  # h5tile.dask and the xarray backend with device blocks (issue 29): Dask, distributed, xarray,
  # h5netcdf and pandas from .deps-bench/py312-dask (scripts/prepare_gpu_deps.sh --remote). Carry
  # .deps/include, .deps/googletest and .deps-bench/py312-dask (and .deps-nvcomp for gzip on the GPU).
  dask_site
  nvcomp_library
  tests=(tests/python/test_dask.py)
  [ -f tests/python/test_xarray.py ] && tests+=(tests/python/test_xarray.py)
  H5TILE_BUILD_DIR=build-gpu python3 -m pytest -q -rs -p no:cacheprovider "${tests[@]}" > "$out/dask_tests.log" 2>&1
  echo "== machine"; cat "$out/machine.txt"
  echo "== h5tile.dask (and xarray) tests on the GPU machine"; grep -E "passed|failed|SKIP|Error" "$out/dask_tests.log" | tail -15
  rm -rf /tmp/h5tile-dask-site
  exit 0
fi
if [ "$mode" = "xarray" ]; then
  # Issue 29's benchmarks: the CPU ones at H5TILE_BENCH_GIB (2 unless set), the GPU one at
  # H5TILE_GPU_GIB (8), all from the wheels of .deps-bench/py312-dask installed as the dask mode does.
  rm -rf /tmp/h5tile-xarray-site && mkdir -p /tmp/h5tile-xarray-site &&
    pip install -q --no-deps --target /tmp/h5tile-xarray-site .deps-bench/py312-dask/*.whl >> "$out/build.log" 2>&1 ||
    { echo "xarray: the carried wheels did not install"; tail -5 "$out/build.log"; }
  export PYTHONPATH="/tmp/h5tile-xarray-site${PYTHONPATH:+:$PYTHONPATH}" H5TILE_BUILD_DIR=build-gpu
  python3 -c "import dask, distributed, xarray, h5netcdf, netCDF4; print('dask', dask.__version__, 'xarray',
    xarray.__version__, 'h5netcdf', h5netcdf.__version__, 'netCDF4', netCDF4.__version__)" >> "$out/machine.txt" 2>&1
  cpu_gib="${H5TILE_BENCH_GIB:-2}"
  gpu_gib="${H5TILE_GPU_GIB:-8}"
  # Each script starts no round that would end past its share of the time left after the build
  # (less 60 s for making the files and starting the cluster; one round at least): 22% to each
  # case of the reads, 10% to each of the durable writes (fsync), 8% to the uncompressed writes
  # without fsync, 20% to the GPU.
  left=$(( ${H5TILE_XARRAY_BUDGET:-450} - SECONDS - 60 ))
  limit() { local t=$(( left * $1 / 100 )); [ "$t" -gt 1 ] && echo "$t" || echo 1; }
  bench_dir=/tmp/h5tile-xarray-bench && rm -rf "$bench_dir" && mkdir -p "$bench_dir"
  (cd bench && python3 xarray_read.py --gib "$cpu_gib" --rounds 3 --peer-rounds 2 --time-limit "$(limit 22)" \
    --dir "$bench_dir") > "$out/xarray_read.log" 2>&1
  (cd bench && python3 dask_write.py --gib "$cpu_gib" --gzip-gib "$(python3 -c "print($cpu_gib / 8)")" --rounds 3 \
    --time-limit "$(limit 10)" --dir "$bench_dir") > "$out/dask_write.log" 2>&1
  (cd bench && python3 dask_write.py --gib "$cpu_gib" --cases uncompressed --no-sync --rounds 3 \
    --time-limit "$(limit 8)" --dir "$bench_dir") > "$out/dask_write_nosync.log" 2>&1
  (cd bench && python3 xarray_gpu.py --gib "$gpu_gib" --rounds 3 --time-limit "$(limit 20)" --dir "$bench_dir") \
    > "$out/xarray_gpu.log" 2>&1
  rm -rf "$bench_dir" /tmp/h5tile-xarray-site
  echo "== machine"; cat "$out/machine.txt"
  echo "== xarray and Dask reads (bench/xarray_read.py --gib $cpu_gib)"; grep -vE "^\s+at |Traceback" "$out/xarray_read.log" | tail -40
  echo "== Dask writes (bench/dask_write.py --gib $cpu_gib)"; tail -16 "$out/dask_write.log"
  echo "== Dask writes without fsync"; tail -9 "$out/dask_write_nosync.log"
  echo "== GPU mean (bench/xarray_gpu.py --gib $gpu_gib)"; tail -8 "$out/xarray_gpu.log"
  echo "== summary ($SECONDS s in all)"
  grep -h -A12 "^== summary" "$out/xarray_read.log" "$out/dask_write.log" "$out/dask_write_nosync.log" \
    "$out/xarray_gpu.log" | grep -vE "^(== summary|load average|--)"
  exit 0
fi
if [ "$mode" = "remote" ]; then
  # Remote reads into device memory (issue 27): nginx (Debian's binary, carried in .deps-bench/nginx)
  # on this machine's loopback serving the file; h5tile.from_file(url, device=0) beside KvikIO's
  # RemoteFile into device memory at each thread count and h5py over fsspec -> CuPy (wheels for
  # this Python in .deps-bench/py312; scripts/prepare_gpu_deps.sh and --remote make both). Carry .deps/include, .deps/googletest, .deps/wheels,
  # .deps-bench and .deps-nvcomp (GPU decoding of the gzip case).
  rm -rf /tmp/h5tile-remote-site && mkdir -p /tmp/h5tile-remote-site &&
    pip install -q --no-deps --target /tmp/h5tile-remote-site .deps/wheels/*.whl .deps-bench/py312/*.whl \
      >> "$out/build.log" 2>&1 || { echo "remote: the carried wheels did not install"; tail -5 "$out/build.log"; }
  mkdir -p /tmp/h5tile-nvcomp && xz -dc .deps-nvcomp/libnvcomp.so.6.xz > /tmp/h5tile-nvcomp/libnvcomp.so.6 &&
    export H5TILE_NVCOMP_LIBRARY=/tmp/h5tile-nvcomp/libnvcomp.so.6
  export PYTHONPATH="/tmp/h5tile-remote-site${PYTHONPATH:+:$PYTHONPATH}" H5TILE_NGINX="$PWD/.deps-bench/nginx/nginx"
  H5TILE_BUILD_DIR=build-gpu python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_remote_device.py \
    > "$out/remote_tests.log" 2>&1
  H5TILE_BUILD_DIR=build-gpu python3 bench/remote_read.py --device 0 --size "${H5TILE_REMOTE_SIZE:-${gib}G}" \
    --cases "${H5TILE_REMOTE_CASES:-contiguous,gzip+shuffle}" --rounds 3 --kvikio-threads 1,8,16,32,64 \
    --nginx-workers "$(nproc)" --no-local --caches first,readahead --sweep-size 512M --dir /tmp/h5tile-remote-files \
    > "$out/remote_bench.log" 2>&1
  rm -rf /tmp/h5tile-remote-files /tmp/h5tile-remote-site
  echo "== machine"; cat "$out/machine.txt"
  echo "== remote reads into device memory (tests)"; tail -5 "$out/remote_tests.log"
  echo "== remote reads into device memory (bench/remote_read.py --device 0)"; cat "$out/remote_bench.log"
  exit 0
fi
if [ "$mode" = "compressed" ]; then
  rm -rf /tmp/h5tile-bench-site && mkdir -p /tmp/h5tile-bench-site &&
    tar -C /tmp/h5tile-bench-site -xJf .deps-bench/site.tar.xz ||
    { echo "no .deps-bench/site.tar.xz: run scripts/prepare_gpu_deps.sh --bench and carry .deps-bench"; exit 1; }
  export PYTHONPATH="/tmp/h5tile-bench-site${PYTHONPATH:+:$PYTHONPATH}" H5TILE_BUILD_DIR=build-gpu
  mib=$((${H5TILE_BENCH_GIB:-2} * 1024))
  python3 bench/compressed_read.py "$mib" > "$out/compressed_read.log" 2>&1
  python3 bench/compressed_write.py $((mib / 2)) > "$out/compressed_write.log" 2>&1
  python3 bench/many_chunks.py --build build-gpu > "$out/many_chunks.log" 2>&1
  echo "== machine"; cat "$out/machine.txt"
  echo "== compressed reads"; grep -vE "Cannot initialize filter" "$out/compressed_read.log" | tail -30
  echo "== compressed writes"; grep -vE "Cannot initialize filter" "$out/compressed_write.log" | tail -20
  echo "== many small chunks"; cat "$out/many_chunks.log"
  exit 0
fi
if [ "$mode" = "gpu-check" ]; then
  # The GPU tests alone (CTest label gpu, the CuPy tests; GPU decoding where .deps-nvcomp came),
  # then the writes from one rank and h5tile.legate's writes from the framebuffer.
  if [ -f .deps-nvcomp/libnvcomp.so.6.xz ]; then
    mkdir -p /tmp/h5tile-nvcomp && xz -dc .deps-nvcomp/libnvcomp.so.6.xz > /tmp/h5tile-nvcomp/libnvcomp.so.6 &&
      export H5TILE_NVCOMP_LIBRARY=/tmp/h5tile-nvcomp/libnvcomp.so.6
  fi
  (cd build-gpu && ctest -L gpu --output-on-failure -j 1) > "$out/gpu_tests.log" 2>&1
  H5TILE_BUILD_DIR=build-gpu python3 -m pytest -q -rs tests/python/test_cupy.py tests/python/test_gpu_decode.py \
    > "$out/python_tests.log" 2>&1
  ./build-gpu/cli/h5tile bench --dir /tmp/h5tile-bench --size 2G --ranks 1 --repeats 3 --writes-only \
    > "$out/writes.log" 2>&1
  rm -rf /tmp/h5tile-bench
  legate_setup
  # legate.io.hdf5 stages its writes in ZCMEM: 4 GiB need more than Legate's default (else it aborts the process).
  LEGATE_CONFIG="--gpus 1 --cpus 4 --sysmem 40000 --fbmem 60000 --zcmem 6144" python3 bench/legate_read.py --mib 64 \
    --write-mib 4096 --repeat 2 --no-tiny --only none --dir /tmp/h5tile-legate-bench 2>&1 |
    grep -vE "^\[[0-9].*(INFO|DEBUG|SPEW)" > "$out/legate_writes.log"
  rm -rf /tmp/h5tile-legate-bench
  echo "== machine"; cat "$out/machine.txt"
  echo "== GPU tests"; grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/gpu_tests.log" | tail -20
  echo "== Python (CuPy)"; grep -E "passed|failed|SKIPPED|Error" "$out/python_tests.log" | tail -8
  echo "== writes from one rank"; tail -25 "$out/writes.log"
  echo "== h5tile.legate writes"; cat "$out/legate_writes.log"
  exit 0
fi
if [ "$mode" = "legate-cold" ]; then
  # Cold reads into one GPU: h5tile.legate, legate.io.hdf5 (ZCMEM large enough for the file),
  # h5tile.from_file(device=0) and h5py in one Legate process, then dd of a file of the same size.
  legate_setup
  { LEGATE_CONFIG="--gpus 1 --cpus 4 --sysmem 40000 --fbmem 60000 --zcmem $((gib * 1024 + 2048))" \
      python3 bench/legate_read.py --mib $((gib * 1024)) --repeat 3 --cold --no-tiny --dir /tmp/h5tile-legate-bench \
      2>&1 | grep -vE "^\[[0-9]"
    for flag in "" iflag=direct; do
      sync; echo 3 > /proc/sys/vm/drop_caches
      echo "dd bs=16M $flag: $(dd if=/tmp/h5tile-legate-bench/x.h5 of=/dev/null bs=16M $flag 2>&1 | tail -1)"
    done
    # The standalone strategies of bench/cold_device_strategies.cpp on the same file.
    nvcc -O2 -std=c++17 -o build-gpu/cold_device_strategies bench/cold_device_strategies.cpp &&
      ./build-gpu/cold_device_strategies /tmp/h5tile-legate-bench/x.h5 --rounds 2 \
        ${H5TILE_PROBE_STRATEGIES:-pipe:16:4:b seqfa:16:4:b pipe:16:4:d pipe:8:32:d pipe:1:16:b}
  } > "$out/legate_cold.log" 2>&1
  rm -rf /tmp/h5tile-legate-bench
  echo "== machine"; cat "$out/machine.txt"; echo "== cold reads into one GPU"; cat "$out/legate_cold.log"
  exit 0
fi
if [ "$mode" = "cold-peers" ]; then
  # Issue 28's cold target in one run: a cold file of 4 GiB (H5TILE_COLD_GIB) into device memory
  # by h5tile's default against h5py -> CuPy, KvikIO's CuFile.pread (from .deps/wheels,
  # KVIKIO_NTHREADS threads, 16 unless set) and legate.io.hdf5 (Legate from
  # .deps/legate-site.tar.xz; h5tile.legate beside it), into host memory against dd iflag=direct:
  # bench/cold_patterns.py, each read in its own process after the page cache is dropped, 3
  # rounds, engines rotated. Carry .deps/include,
  # .deps/googletest, .deps/wheels and .deps/legate-site.tar.xz. The rounds stop where the next
  # would end past 7.5 minutes from the start of this script (build included).
  rm -rf /tmp/kvikio-site &&
    pip install -q --no-deps --target /tmp/kvikio-site .deps/wheels/*.whl >> "$out/build.log" 2>&1 ||
    echo "cold-peers: KvikIO's carried wheels did not install (.deps/wheels)" >> "$out/machine.txt"
  legate_setup
  export PYTHONPATH="/tmp/kvikio-site:$PYTHONPATH" KVIKIO_NTHREADS="${KVIKIO_NTHREADS:-16}"
  python3 -c "import kvikio, kvikio.defaults; d = kvikio.defaults
print('kvikio', kvikio.__version__, 'threads', d.get('num_threads'), 'compat_mode', d.get('compat_mode'))" \
    >> "$out/machine.txt" 2>&1
  budget=$((450 - SECONDS)); [ "$budget" -ge 1 ] || budget=1
  python3 bench/cold_patterns.py --gib "${H5TILE_COLD_GIB:-4}" --rounds 3 --drop-caches --default-only \
    --build build-gpu --dir /tmp/h5tile-cold-peers --budget "$budget" \
    --legate-config "--gpus 1 --cpus 1 --sysmem 16000 --fbmem 60000 --zcmem 12288" --json "$out/cold_peers.json" \
    > "$out/cold_peers.log" 2>&1
  rm -rf /tmp/h5tile-cold-peers
  echo "== machine"; cat "$out/machine.txt"; echo "== cold reads, issue 28's peers"; cat "$out/cold_peers.log"
  exit 0
fi
if [ "$mode" = "engine-bench" ]; then
  legate_setup
  {
    python3 bench/cold_read_modes.py --gib "$gib" --rounds 2 --build build-gpu --dir /tmp/h5tile-cold-modes
    LEGATE_CONFIG="--gpus 0 --cpus $(nproc) --sysmem 40000" python3 bench/repeated_reads.py --size 2G --calls 10 \
      --rounds 3 --legate --dir /tmp/h5tile-repeat 2>&1 | grep -vE "^\[[0-9]"
    rm -rf /tmp/h5tile-repeat
    for ranks in 1 0; do ./build-gpu/cli/h5tile bench --dir /tmp/h5tile-bench --size 2G --ranks $ranks --repeats 3; done
  } > "$out/engine_bench.log" 2>&1
  echo "== machine"; cat "$out/machine.txt"; echo "== engine benchmarks"; cat "$out/engine_bench.log"
  exit 0
fi
if [ "$mode" = "cold-phases" ]; then
  # Where a cold from_file(device=0) spends its time, next to dd and the standalone pipeline.
  nvcc -O2 -std=c++17 -o build-gpu/cold_device_strategies bench/cold_device_strategies.cpp > "$out/probe_build.log" 2>&1
  python3 bench/cold_device_phases.py --gib "$gib" --rounds 2 --build build-gpu > "$out/cold_phases.log" 2>&1
  # Warm reads by staging memory and task size, buffered and with O_DIRECT for what the cache lacks.
  pip install -q --no-deps --target /tmp/kvikio-site .deps/wheels/*.whl >> "$out/build.log" 2>&1
  for direct in auto on; do
    echo "-- H5TILE_DIRECT_IO=$direct"
    H5TILE_DIRECT_IO=$direct KVIKIO_NTHREADS=16 PYTHONPATH=/tmp/kvikio-site python3 bench/gpu_tuning.py --gib "$gib" \
      --rounds 3 --tasks 8M,16M --staging 128M,256M,512M --threads 16 --dir /tmp/h5tile-tune
  done > "$out/warm_grid.log" 2>&1
  echo "== machine"; cat "$out/machine.txt"; echo "== cold phases"; cat "$out/cold_phases.log"
  echo "== warm grid"; cat "$out/warm_grid.log"
  exit 0
fi
if [ "$mode" = "cold-probe" ]; then
  # Cold file -> GPU reads: the standalone strategies of bench/cold_device_strategies.cpp on one
  # file, then h5tile's device modes and dd (bench/cold_read_modes.py), then an h5tile.legate read
  # of H5TILE_BENCH_GIB at Legate's default --zcmem.
  nvcc -O2 -std=c++17 -o build-gpu/cold_device_strategies bench/cold_device_strategies.cpp > "$out/probe_build.log" 2>&1
  mkdir -p /tmp/h5tile-probe
  head -c "$((gib * 1024))M" /dev/urandom > /tmp/h5tile-probe/data.bin 2>/dev/null ||
    dd if=/dev/urandom of=/tmp/h5tile-probe/data.bin bs=16M count=$((gib * 64)) status=none
  sync
  ./build-gpu/cold_device_strategies /tmp/h5tile-probe/data.bin --rounds 2 \
    pipe:16:4:b pipe:16:4:d pipe:16:8:b pipe:16:16:d pipe:8:32:d pipe:4:64:d pipe:32:8:d pipe:1:16:b \
    split:16:8:b split:4:16:b ra:16:4:b:512 seqfa:16:8:b > "$out/cold_probe.log" 2>&1
  rm -rf /tmp/h5tile-probe
  python3 bench/cold_read_modes.py --device-only --gib "$gib" --rounds 2 --build build-gpu \
    --dir /tmp/h5tile-cold-modes > "$out/cold_modes.log" 2>&1
  legate_setup
  LEGATE_CONFIG="--gpus 1 --cpus 4 --sysmem 40000 --fbmem 60000" python3 bench/legate_read.py \
    --mib "${H5TILE_LEGATE_MIB:-8192}" --repeat 2 --no-tiny --only h5tile.legate --dir /tmp/h5tile-legate-bench \
    2>&1 | grep -E "^[^[]|RESOURCE" | cut -c1-300 > "$out/legate_default_zcmem.log"
  rm -rf /tmp/h5tile-legate-bench
  echo "== machine"; cat "$out/machine.txt"
  echo "== cold strategies"; cat "$out/cold_probe.log"
  echo "== cold modes"; cat "$out/cold_modes.log"
  echo "== h5tile.legate at the default --zcmem"; cat "$out/legate_default_zcmem.log"
  exit 0
fi
if [ "$mode" = "cpu-bench" ]; then
  rm -rf /tmp/h5tile-bench
  { python3 bench/peers.py --size "${gib}G" --dir /tmp/h5tile-bench --repeats 3 --build build-gpu
    H5TILE_DIRECT_IO=on python3 bench/peers.py --size "${gib}G" --dir /tmp/h5tile-bench --repeats 3 --build build-gpu --cold
  } > "$out/cpu_bench.log" 2>&1
  echo "== machine"; cat "$out/machine.txt"; echo "== legate"; tail -2 "$out/legate.txt"
  echo "== CPU benchmark"; cat "$out/cpu_bench.log"
  exit 0
fi
if [ "$mode" != "bench" ]; then
(cd build-gpu && ctest -L gpu --output-on-failure -j 1) > "$out/gpu_tests.log" 2>&1 ||
  { cmake --version | head -1; for f in build-gpu/tests/*_tests.cmake; do echo "$f"; sed -n 8p "$f" | cut -c1-300; done; } >> "$out/gpu_tests.log" 2>&1
(cd build-gpu && ctest -L 'unit|integration' -j "$(nproc)") > "$out/cpu_tests.log" 2>&1
./build-gpu/tests/h5tile_gpu_tests --gtest_filter='Gpu.*' 2>&1 | grep -E "INFO|OK|FAILED|SKIPPED" >> "$out/gpu_tests.log"
# Python with CuPy (the stub check is for CI's pinned nanobind, not this machine's).
H5TILE_BUILD_DIR=build-gpu python3 -m pytest -q -rs -s tests/python/test_cupy.py tests/python/test_package.py \
  tests/python/test_cupynumeric.py -k "not stubs" > "$out/python_tests.log" 2>&1
[ "$mode" = "tests" ] || [ "$mode" = "vds" ] ||
  ./build-gpu/bench/h5tile_single_file_write /tmp/h5tile-sfw "$gib" "$(nproc)" > "$out/single_file_write.log" 2>&1
fi

if [ "$mode" = "vds" ]; then
  { for rows in 512 64; do
      rm -rf /tmp/h5tile-vds && ./build-gpu/bench/h5tile_vds_scaling /tmp/h5tile-vds "$rows"
      ./build-gpu/bench/h5tile_vds_mapping_floor /tmp/h5tile-vds/vds-4096.h5
      ./build-gpu/bench/h5tile_vds_early_read /tmp/h5tile-vds/vds-4096.h5 /tmp/h5tile-vds/contiguous-4096.h5
    done
    rm -rf /tmp/h5tile-vds
  } > "$out/vds.log" 2>&1
fi
if [ "$mode" != "quick" ] && [ "$mode" != "tests" ] && [ "$mode" != "vds" ]; then
  pip install -q --no-deps --target /tmp/kvikio-site .deps/wheels/*.whl >> "$out/build.log" 2>&1
  ./build-gpu/bench/h5tile_gpu_bench --dir /tmp/h5tile-gpu-bench --gib "$gib" --repeats 3 > "$out/gpu_bench.log" 2>&1
  # KvikIO with as many threads as h5tile uses (its default pool has one thread).
  KVIKIO_NTHREADS=16 PYTHONPATH=/tmp/kvikio-site python3 bench/gpu_peers.py --repeats 3 /tmp/h5tile-gpu-bench/contiguous.h5 > "$out/gpu_peers.log" 2>&1
  # h5tile and KvikIO in turn on one file and one buffer (the fair comparison of the two).
  rm -rf /tmp/h5tile-gpu-bench
  KVIKIO_NTHREADS=16 PYTHONPATH=/tmp/kvikio-site python3 bench/gpu_tuning.py --gib "$gib" --rounds 9 --defaults-only \
    --dir /tmp/h5tile-tune > "$out/gpu_tuning.log" 2>&1
fi

# MPI with device tiles: 2 ranks sharing GPU 0, then one rank per GPU with 4 GiB per rank.
if command -v mpirun >/dev/null && [ "$mode" = "full" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  tool=./build-gpu/tests/h5tile_mpi_tool
  mdir=/tmp/h5tile-mpi && rm -rf $mdir && mkdir -p $mdir
  {
    echo "-- 2 ranks, one GPU (CUDA_VISIBLE_DEVICES=0), device tiles"
    CUDA_VISIBLE_DEVICES=0 mpirun -n 2 -x CUDA_VISIBLE_DEVICES $tool write $mdir/shared.h5 virtual 1001 257 --device
    CUDA_VISIBLE_DEVICES=0 mpirun -n 2 -x CUDA_VISIBLE_DEVICES $tool read $mdir/shared.h5 --device
    gpus=$(nvidia-smi -L | wc -l)
    rows_per_gpu=262144  # 4 GiB of float32-sized elements per rank, 4096 columns
    dd if=/dev/zero of=$mdir/dd.bin bs=16M count=256 conv=fdatasync 2>&1 | tail -1 | sed 's/^/dd write 4 GiB fdatasync: /'
    rm -f $mdir/dd.bin
    for g in 1 $gpus; do
      [ "$g" -gt 1 ] || [ "$gpus" -ge 1 ] || continue
      for layout in virtual contiguous; do
        echo "-- $g rank(s), one per GPU, 4 GiB per rank, layout $layout"
        mpirun -n $g $tool write $mdir/g$g-$layout.h5 $layout $((rows_per_gpu * g)) 4096 --device
        mpirun -n $g $tool read $mdir/g$g-$layout.h5 --device --no-whole --batched 32768
        rm -rf $mdir/g$g-$layout.h5 $mdir/g$g-$layout.h5.tiles
      done
      [ "$gpus" -gt 1 ] || break
    done
  } > "$out/mpi.log" 2>&1
fi

echo "== machine"; cat "$out/machine.txt"
echo "== GPU tests"; grep -E "tests passed|tests failed|Failed|Error|\*\*\*" "$out/gpu_tests.log" | tail -15
grep INFO "$out/gpu_tests.log"
echo "== CPU tests on the GPU machine"; grep -E "tests passed|tests failed|Failed|Error" "$out/cpu_tests.log" | tail -8
echo "== Python (CuPy)"; grep -E "passed|failed|SKIPPED|device I/O" "$out/python_tests.log" | tail -6
echo "== legate"; tail -2 "$out/legate.txt"
[ -f "$out/single_file_write.log" ] && { echo "== one shared file, writes"; cat "$out/single_file_write.log"; }
[ -f "$out/mpi.log" ] && { echo "== MPI"; grep -E "^--|^rank|^dd|error" "$out/mpi.log"; }
[ -f "$out/vds.log" ] && { echo "== virtual datasets"; cat "$out/vds.log"; }
if [ "$mode" != "quick" ] && [ "$mode" != "tests" ] && [ "$mode" != "vds" ]; then
  echo "== benchmark"; tail -14 "$out/gpu_bench.log"; cat "$out/gpu_peers.log"; cat "$out/gpu_tuning.log"
fi
