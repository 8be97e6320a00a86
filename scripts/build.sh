#!/usr/bin/env bash
# Configures (once) and builds h5tile into build/ (or $H5TILE_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${H5TILE_BUILD_DIR:-build}"
if [ ! -f "$build/build.ninja" ]; then
  python=OFF
  python3 -c "import nanobind" 2>/dev/null && python=ON
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH5TILE_BUILD_PYTHON=$python "$@" >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
