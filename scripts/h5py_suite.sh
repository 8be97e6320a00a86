#!/usr/bin/env bash
# h5py's own high-level tests, with reads answered by h5tile (issue 40, "Measured by h5py's own
# tests"). Takes the tests from the sdist of the h5py installed (downloaded once into
# $build/h5py-suite/, reused after), runs them with tests/h5py_suite/h5tile_swap.py (writes
# through h5py, reads through h5tile: tests/h5py_suite/README.md) against the built package
# ($build/python), prints a table per test file and the read-side pass rate, and writes it to
# $build/h5py-suite/report.md. Fails where a test fails that tests/h5py_suite/known_failures.txt
# does not list; prints listed tests that pass now. Leaves nothing in TMPDIR (or /tmp).
#
#   scripts/h5py_suite.sh                        # build/ (H5TILE_BUILD_DIR for another build)
#   H5PY_SUITE_READER=h5py scripts/h5py_suite.sh # check the harness itself (README.md)
#   H5PY_SUITE_WRITES=h5tile scripts/h5py_suite.sh
#       # the write side (issue 41): the tests' writes through h5tile too; outputs named *-writes
#       # (report-writes.md: pass rate, failures by category); no gate, exits 0 once the tests ran
set -euo pipefail
cd "$(dirname "$0")/.."
build="${H5TILE_BUILD_DIR:-build}"
cache="$build/h5py-suite"
writes="${H5PY_SUITE_WRITES:-h5py}"
case "$writes" in
    h5py) suffix="" ;;
    h5tile) suffix="-writes" ;;
    *) echo "h5py_suite.sh: H5PY_SUITE_WRITES must be h5py or h5tile, not '$writes'"; exit 1 ;;
esac
# The test files of h5py's high-level API that the issue names (those of them this sdist has).
tests=(test_file.py test_group.py test_dataset.py test_dataset_getitem.py test_attrs.py
       test_attribute_create.py test_slicing.py test_selections.py test_dimension_scales.py
       test_dims_dimensionproxy.py test_vds test_datatype.py test_base.py)

if [ ! -f "$build/python/h5tile/__init__.py" ]; then
    echo "h5py_suite.sh: no built package in $build/python (scripts/build.sh)"
    exit 1
fi
package=$(cd "$build/python" && pwd)
version=$(python3 -c "import h5py; print(h5py.__version__)")
sdist="$cache/h5py-$version"
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/h5py-suite.XXXXXX")
trap 'rm -rf "$run_tmp"' EXIT
mkdir -p "$cache"

# The sdist, once: `--no-binary h5py` (not `:all:`) takes h5py's source but its build
# dependencies (numpy, Cython), which pip installs to read the sdist's metadata, as wheels;
# `:all:` would build numpy from source for that. Only h5py/tests/ and h5py/__init__.py are
# extracted: the __init__.py makes pytest name the tests h5py.tests.* (as their relative imports
# need); h5tile_swap then imports them from here, not from the installed wheel's tests.
if [ ! -f "$sdist/h5py/tests/__init__.py" ]; then
    if [ ! -f "$cache/h5py-$version.tar.gz" ]; then
        TMPDIR="$run_tmp" python3 -m pip download --quiet --disable-pip-version-check --no-deps \
            --no-binary h5py "h5py==$version" -d "$run_tmp/download"
        mv "$run_tmp/download/h5py-$version.tar.gz" "$cache/"
    fi
    tar -xzf "$cache/h5py-$version.tar.gz" -C "$run_tmp" "h5py-$version/h5py/__init__.py" "h5py-$version/h5py/tests"
    rm -rf "$sdist"
    mv "$run_tmp/h5py-$version" "$sdist"
fi
sdist=$(cd "$sdist" && pwd)

paths=()
for t in "${tests[@]}"; do
    if [ -e "$sdist/h5py/tests/$t" ]; then paths+=("$sdist/h5py/tests/$t"); fi
done
results="$cache/results$suffix.json"
log="$cache/pytest$suffix.log"
rm -f "$results"
start=$(date +%s)
status=0
# Deterministic: a fixed order, no cache, no network tests (h5py's --no-network), temporary
# files under this run's folder (removed on exit), no bytecode written beside the sources.
TMPDIR="$run_tmp" PYTHONDONTWRITEBYTECODE=1 \
    PYTHONPATH="$package:$PWD/tests/h5py_suite${PYTHONPATH:+:$PYTHONPATH}" \
    python3 -m pytest -c tests/h5py_suite/pytest.ini --rootdir "$sdist" -p h5tile_swap -p no:cacheprovider \
    --basetemp "$run_tmp/pytest" --no-network --h5tile-results "$results" -q --tb=short -rN "${paths[@]}" \
    >"$log" 2>&1 || status=$?
seconds=$(( $(date +%s) - start ))
echo "h5py_suite.sh: pytest ($log): $(tail -n 1 "$log")"
if [ "$status" -gt 1 ] || [ ! -f "$results" ]; then
    tail -n 40 "$log"
    echo "h5py_suite.sh: pytest did not run the tests (exit status $status)"
    exit 1
fi
if [ "$writes" = h5tile ]; then
    # The write side: the pass rate and the failures by category (write_categories.txt), no gate.
    python3 tests/h5py_suite/report.py "$results" --writes tests/h5py_suite/write_categories.txt \
        --markdown "$cache/report$suffix.md" --seconds "$seconds" --h5py-version "$version"
    exit 0
fi
python3 tests/h5py_suite/report.py "$results" tests/h5py_suite/known_failures.txt \
    --markdown "$cache/report.md" --seconds "$seconds" --h5py-version "$version"
