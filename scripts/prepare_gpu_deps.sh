#!/usr/bin/env bash
# Fills .deps/ (git-ignored) with what the GPU machine lacks and cannot download: the headers
# of fmt, CLI11 and nlohmann-json and GoogleTest's sources (from this machine's Debian
# packages), and KvikIO's wheels for the benchmark. Run it here before a device run that
# carries .deps (see scripts/gpu_machine.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
mkdir -p .deps/include .deps/wheels
cp -r /usr/include/fmt /usr/include/CLI /usr/include/nlohmann /usr/include/xxhash.h .deps/include/
rm -rf .deps/googletest && cp -r /usr/src/googletest .deps/
python3 -m pip download -q --no-deps -d .deps/wheels libkvikio-cu13 kvikio-cu13 "rapids-logger==0.3.*"
du -sh .deps
