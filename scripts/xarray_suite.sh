#!/usr/bin/env bash
# xarray's own backend tests with engine="h5tile" (reads: H5tileBackendEntrypoint; writes:
# to_netcdf(engine="h5tile") and H5tileWriteStore). Takes the tests from the sdist of the xarray
# installed (downloaded once into $build/xarray-suite/, reused after), runs xarray's netCDF-4 test
# classes through tests/xarray_suite/test_h5tile_backend.py (tests/xarray_suite/README.md) against
# the built package ($build/python), prints a table per test class and the pass rate, and writes it
# to $build/xarray-suite/report.md. Fails where a test fails that
# tests/xarray_suite/known_failures.txt does not list; prints listed tests that pass now. Leaves
# nothing in TMPDIR (or /tmp).
#
#   scripts/xarray_suite.sh                               # build/ (H5TILE_BUILD_DIR for another build)
#   XARRAY_SUITE_ENGINE=h5netcdf scripts/xarray_suite.sh  # check the harness itself: engine="h5netcdf",
#       # outputs named *-h5netcdf; fails on any failing test
set -euo pipefail
cd "$(dirname "$0")/.."
build="${H5TILE_BUILD_DIR:-build}"
cache="$build/xarray-suite"
engine="${XARRAY_SUITE_ENGINE:-h5tile}"
case "$engine" in
    h5tile) suffix="" known=(tests/xarray_suite/known_failures.txt) ;;
    h5netcdf) suffix="-h5netcdf" known=() ;;
    *) echo "xarray_suite.sh: XARRAY_SUITE_ENGINE must be h5tile or h5netcdf, not '$engine'"; exit 1 ;;
esac

if [ ! -f "$build/python/h5tile/__init__.py" ]; then
    echo "xarray_suite.sh: no built package in $build/python (scripts/build.sh)"
    exit 1
fi
package=$(cd "$build/python" && pwd)
version=$(python3 -c "import xarray; print(xarray.__version__)")
sdist="$cache/xarray-$version"
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/xarray-suite.XXXXXX")
trap 'rm -rf "$run_tmp"' EXIT
mkdir -p "$cache"

# The sdist, once (`--no-binary xarray`: xarray's source; its build dependencies, which pip
# installs to read the metadata, as wheels). Only xarray/tests/ (test_backends.py imports helpers
# from its siblings; its data files) and the root conftest.py are extracted: conftest.py points
# xarray.tests there, and every other module of xarray stays the installed one.
if [ ! -f "$sdist/xarray/tests/test_backends.py" ] || [ ! -f "$sdist/conftest.py" ]; then
    if [ ! -f "$cache/xarray-$version.tar.gz" ]; then
        TMPDIR="$run_tmp" python3 -m pip download --quiet --disable-pip-version-check --no-deps \
            --no-binary xarray "xarray==$version" -d "$run_tmp/download"
        mv "$run_tmp/download/xarray-$version.tar.gz" "$cache/"
    fi
    tar -xzf "$cache/xarray-$version.tar.gz" -C "$run_tmp" "xarray-$version/conftest.py" "xarray-$version/xarray/tests"
    rm -rf "$sdist"
    mv "$run_tmp/xarray-$version" "$sdist"
fi
sdist=$(cd "$sdist" && pwd)

results="$cache/results$suffix.json"
log="$cache/pytest$suffix.log"
rm -f "$results"
start=$(date +%s)
status=0
# Deterministic: xarray's own pytest settings (pytest.ini), a fixed order, no cache, no network
# or flaky tests (xarray's defaults), temporary files under this run's folder (removed on exit),
# no bytecode written beside the sources.
TMPDIR="$run_tmp" PYTHONDONTWRITEBYTECODE=1 XARRAY_SUITE_SDIST="$sdist" XARRAY_SUITE_ENGINE="$engine" \
    PYTHONPATH="$package${PYTHONPATH:+:$PYTHONPATH}" \
    timeout 1200 python3 -m pytest -c tests/xarray_suite/pytest.ini -p no:cacheprovider \
    --basetemp "$run_tmp/pytest" --xarray-suite-results "$results" -q --tb=short -rN \
    tests/xarray_suite/test_h5tile_backend.py >"$log" 2>&1 || status=$?
seconds=$(( $(date +%s) - start ))
echo "xarray_suite.sh: pytest ($log): $(tail -n 1 "$log")"
if [ "$status" -gt 1 ] || [ ! -f "$results" ]; then
    tail -n 40 "$log"
    echo "xarray_suite.sh: pytest did not run the tests (exit status $status)"
    exit 1
fi
python3 tests/xarray_suite/report.py "$results" "${known[@]}" --markdown "$cache/report$suffix.md" \
    --seconds "$seconds" --engine "$engine" --xarray-version "$version"
