#!/usr/bin/env bash
# h5tile against a current HDF5 (1.14.x), besides Debian's 1.10.8 that the other stages use:
# builds that HDF5 once (scripts/install_hdf5_current.sh, kept in build-hdf5-1.14/prefix), a
# second h5tile in build-hdf5-1.14/h5tile against it (library, CLI, Python module and tests; no
# benchmarks), checks that this build runs with that HDF5 and no other, then runs the C++ tests
# (CTest) and the pytest suite with it. H5TILE_HDF5_CURRENT=0 skips the stage.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${H5TILE_HDF5_CURRENT:-1}" = 0 ]; then
  echo "test_hdf5_current: skipped (H5TILE_HDF5_CURRENT=0)"
  exit 0
fi
start=$SECONDS
fail() { echo "test_hdf5_current: $*" >&2; exit 1; }
prefix=$(scripts/install_hdf5_current.sh)
[ -f "$prefix/cmake/hdf5-config.cmake" ] || fail "no HDF5 install in '$prefix'"
installed=$SECONDS

build=build-hdf5-1.14/h5tile
python=OFF
python3 -c "import nanobind" 2>/dev/null && python=ON
# HDF5_ROOT: FindHDF5 then searches that prefix alone and takes its hdf5-config.cmake. Configured
# every time (seconds), so that these options hold in a folder configured before.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHDF5_ROOT="$prefix" -DH5TILE_BUILD_BENCH=OFF \
  -DH5TILE_BUILD_PYTHON=$python >"build-hdf5-1.14/configure.log" 2>&1 ||
  { cat build-hdf5-1.14/configure.log; fail "configuring $build failed"; }
cmake --build "$build" -j "$(nproc)" >"build-hdf5-1.14/build.log" 2>&1 ||
  { grep -E -B 5 -A 20 "error|FAILED" build-hdf5-1.14/build.log | head -n 200; fail "building $build failed"; }
built=$SECONDS
found=$(sed -n 's/^HDF5_DIR:PATH=//p' "$build/CMakeCache.txt")
[ "$found" = "$prefix/cmake" ] || fail "the build found HDF5 in '$found', not in $prefix"
version=$("$build/tests/h5tile_interop" hdf5-version | sed -n 's/.*"hdf5": "\([0-9.]*\)".*/\1/p')
[[ "$version" == 1.14.* ]] || fail "the build runs with HDF5 '$version', not 1.14"
for binary in "$build"/tests/h5tile_interop "$build"/cli/h5tile "$build"/python/h5tile/_h5tile*.so; do
  [ -e "$binary" ] || continue
  libs=$(ldd "$binary" | grep -i hdf5 || true)
  # The Python extension links HDF5 statically where that HDF5 has a usable static library
  # (cmake/h5tile_hdf5.cmake): then it loads none.
  [[ "$binary" == *_h5tile* && -z "$libs" ]] && continue
  [ "$(echo "$libs" | grep -c .)" = 1 ] && [[ "$libs" == *"$prefix/lib/"* ]] ||
    fail "$binary does not load HDF5 from $prefix alone: $libs"
done
echo "test_hdf5_current: h5tile built against HDF5 $version ($((built - installed)) s)"

status=0
# The whole CTest log is in build-hdf5-1.14/ctest.log; its failures are shown.
if ! (cd "$build" && ctest --output-on-failure -j "$(nproc)") >build-hdf5-1.14/ctest.log 2>&1; then
  grep -E -A 40 "\*\*\*Failed|\(Failed\)|Timeout|Exception" build-hdf5-1.14/ctest.log | head -n 200 || true
  status=1
fi
grep -E "tests passed" build-hdf5-1.14/ctest.log || status=1
tested=$SECONDS
H5TILE_BUILD_DIR="$build" python3 -m pytest -q -rs tests/python || status=1
echo "test_hdf5_current: HDF5 $version: install $((installed - start)) s, build $((built - installed)) s," \
  "ctest $((tested - built)) s, pytest $((SECONDS - tested)) s"
exit $status
