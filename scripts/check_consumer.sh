#!/usr/bin/env bash
# find_package(h5tile) as a user does it: installs the build tree that scripts/build.sh built
# ($H5TILE_BUILD_DIR, default build/; nothing is rebuilt) into a temporary prefix with
# `cmake --install`, then configures and builds the C++-only project tests/consumer against that
# prefix alone and runs its round trip. Also checks what the install holds: no absolute library
# paths in the exported targets, the Python package (with its command) under lib/pythonX.Y.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${H5TILE_BUILD_DIR:-build}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "check_consumer: no build in '$build': run scripts/build.sh first" >&2
  exit 1
fi
start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT  # the EXIT trap then runs too
trap 'exit 143' TERM
prefix="$work/prefix"
fail() { echo "check_consumer: $*" >&2; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install failed"; }
targets=$(find "$prefix" -name h5tileTargets.cmake)
[ -n "$targets" ] || fail "no h5tileTargets.cmake under $prefix"
if grep 'INTERFACE_LINK_LIBRARIES' "$targets" | grep -q '/'; then
  grep 'INTERFACE_LINK_LIBRARIES' "$targets" >&2
  fail "the exported target links absolute paths (of the machine it was built on)"
fi
if [ "$(cache H5TILE_BUILD_PYTHON)" = ON ]; then
  [ ! -e "$prefix/h5tile" ] && [ ! -e "$prefix/_h5tile.pyi" ] || fail "the Python package is at the root of the prefix"
  site=$(find "$prefix" -path '*/site-packages/h5tile/__init__.py' -printf '%h\n' | head -n 1)
  [ -n "$site" ] || fail "no Python package h5tile under $prefix/lib*/python*/site-packages"
  (cd "$work" && PYTHONPATH="$(dirname "$site")" python3 - "$prefix" <<'PY') || fail "the installed Python package does not work"
import sys, h5tile
assert h5tile.__file__.startswith(sys.argv[1]), h5tile.__file__
PY
  if [ "$(cache H5TILE_BUILD_CLI)" = ON ]; then
    [ -x "$site/_bin/h5tile" ] || fail "the Python package has no h5tile command ($site/_bin/h5tile)"
    version=$(cd "$work" && PYTHONPATH="$(dirname "$site")" python3 -m h5tile --version) ||
      fail "python -m h5tile --version failed with the installed package"
    [[ "$version" == "h5tile "* ]] || fail "python -m h5tile --version printed '$version'"
  fi
fi

# The consumer sees only the prefix (no package registry), and uses the compiler h5tile was built with.
cmake -S tests/consumer -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_CXX_COMPILER="$(cache CMAKE_CXX_COMPILER)" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configuring tests/consumer failed"; }
found=$(sed -n 's/^h5tile_DIR:PATH=//p' "$work/consumer/CMakeCache.txt")
case "$found" in "$prefix"/*) ;; *) fail "find_package(h5tile) found '$found', not the prefix $prefix" ;; esac
cmake --build "$work/consumer" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building tests/consumer failed"; }
mkdir "$work/data"
(cd "$work/data" && "$work/consumer/consumer" "$work/data") || fail "the consumer's round trip failed"
echo "check_consumer: cmake --install, find_package(h5tile) from a C++-only project, round trip: ok ($((SECONDS - start)) s)"
