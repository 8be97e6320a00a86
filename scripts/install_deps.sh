#!/usr/bin/env bash
# Installs what h5tile needs to build and test, skipping what is already there.
# Debian/Ubuntu packages with apt-get; Python packages for the tests with pip.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config libhdf5-dev hdf5-tools libfmt-dev
          libcli11-dev libgtest-dev libopenmpi-dev openmpi-bin python3 python3-pip clang-format)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! python3 -c "import h5py, numpy, pytest" 2>/dev/null; then
  echo "install_deps: installing h5py, numpy, pytest"
  python3 -m pip install -q h5py numpy pytest 2>/dev/null ||
    python3 -m pip install -q --break-system-packages h5py numpy pytest
fi
