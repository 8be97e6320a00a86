#!/usr/bin/env bash
# Installs Legate and cuPyNumeric from PyPI for the Legate tests, skipping what is already there.
# Pinned: the no-GPU driver stand-in (tests/tools/no_gpu_libcuda.c) is written against what
# this legate asks of the driver. cuPyNumeric brings about 2.5 GB of CUDA math-library wheels;
# H5TILE_LEGATE_CUPYNUMERIC=0 leaves it out (the cuPyNumeric tests then skip, saying why).
set -euo pipefail

legate_version=26.6.1
wanted=("legate==$legate_version")
[ "${H5TILE_LEGATE_CUPYNUMERIC:-1}" = 0 ] || wanted+=("nvidia-cupynumeric==$legate_version")

missing=()
for spec in "${wanted[@]}"; do
  name="${spec%%==*}"
  installed="$(python3 -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)"
  [ "$installed" = "$legate_version" ] || missing+=("$spec")
done
if ((${#missing[@]})); then
  echo "install_legate: installing ${missing[*]}"
  python3 -m pip install -q "${missing[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${missing[@]}"
fi
