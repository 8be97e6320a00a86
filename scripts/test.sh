#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs the C++ tests (CTest) and the
# Python cross-checks against h5py (pytest), h5py's own test suite over h5tile's reads
# (scripts/h5py_suite.sh), xarray's own backend tests over engine="h5tile" (scripts/xarray_suite.sh),
# every benchmark of bench/ at a tiny size (scripts/bench_smoke.sh),
# checks the formatting of the C++ sources, checks
# `cmake --install` + find_package(h5tile) from a consumer project, checks a plain `pip install`
# into a fresh venv, runs the C++ tests again under ASan+UBSan and TSan, and fuzzes the file
# opening and mapping code for 60 s (H5TILE_FUZZ_SECONDS). The C++ tests and pytest run against
# Debian's HDF5 1.10.8 and again against 1.14 (scripts/test_hdf5_current.sh; H5TILE_HDF5_CURRENT=0
# skips that). Every stage's temporary files go to a folder of the run's own (TMPDIR), removed at
# the end whatever happens; scripts/check_tmp_clean.sh then checks that nothing of h5tile's was
# left there or in /tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
run_dir=$(mktemp -d "${TMPDIR:-/tmp}/h5tile-test.XXXXXX")
trap 'rm -rf "$run_dir"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
scripts/check_tmp_clean.sh snapshot >"$run_dir/tmp-before"
mkdir "$run_dir/tmp"
export TMPDIR="$run_dir/tmp"
scripts/install_deps.sh
status=0
# Legate and cuPyNumeric for the Legate tests (CPU-only, through tests/tools/no_gpu_libcuda.c).
# A failed install fails the run (the Legate tests would only skip, saying why).
scripts/install_legate.sh || { echo "test.sh: legate could not be installed"; status=1; }
scripts/build.sh
build="${H5TILE_BUILD_DIR:-build}"
(cd "$build" && ctest --output-on-failure -j "$(nproc)") || status=1
H5TILE_BUILD_DIR="$build" python3 -m pytest -q -rs tests/python || status=1
# h5py's own high-level tests, writes through h5py and reads through h5tile (docs/H5PY.md).
H5TILE_BUILD_DIR="$build" scripts/h5py_suite.sh || status=1
# xarray's own backend tests with engine="h5tile", reads and writes (tests/xarray_suite/README.md).
H5TILE_BUILD_DIR="$build" scripts/xarray_suite.sh || status=1
H5TILE_BUILD_DIR="$build" scripts/bench_smoke.sh || status=1
# The same C++ tests and pytest suite against a current HDF5 (1.14, built once into build-hdf5-1.14/).
scripts/test_hdf5_current.sh || status=1
scripts/check_format.sh || status=1
H5TILE_BUILD_DIR="$build" scripts/check_consumer.sh || status=1
scripts/check_pip_install.sh || status=1
scripts/test_sanitizers.sh || status=1
scripts/fuzz.sh "${H5TILE_FUZZ_SECONDS:-60}" || status=1
scripts/check_tmp_clean.sh check "$run_dir/tmp-before" "$TMPDIR" || status=1
exit $status
