#!/usr/bin/env bash
# The C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (all of them, leaks
# included) and under ThreadSanitizer (unit and integration: the threaded engine and the
# thread communicator). Build folders: build-asan/, build-tsan/.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for kind in address thread; do
  dir=build-${kind/address/asan}
  dir=${dir/thread/tsan}
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DH5TILE_SANITIZE=$kind -DH5TILE_BUILD_PYTHON=OFF \
      $([ $kind = thread ] && echo -DH5TILE_WITH_CUDA=OFF) >/dev/null
  fi
  cmake --build "$dir" -j "$(nproc)" >/dev/null
  echo "== C++ tests under the $kind sanitizer"
  if [ $kind = address ]; then
    (cd "$dir" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest -j "$(nproc)" -LE gpu --output-on-failure | grep -E "tests passed|Failed|\*\*\*") || status=1
  else
    (cd "$dir" && TSAN_OPTIONS=halt_on_error=1 ctest -j "$(nproc)" -L 'unit|integration' --output-on-failure |
      grep -E "tests passed|Failed|\*\*\*") || status=1
  fi
done
exit $status
