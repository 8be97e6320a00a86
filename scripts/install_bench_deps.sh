#!/usr/bin/env bash
# Installs the optional peers of the remote benchmarks (bench/remote_read.py, bench/s3_write.py),
# skipping what is already there: nginx (Debian) to serve the files over HTTP, h5coro and KvikIO
# (kvikio-cu13, whose RemoteFile is the raw byte-range limit) and TensorStore (Zarr v3 writes to
# S3) from PyPI. The test command does not need them;
# what the tests need (SeaweedFS, boto3, s3fs) is in scripts/install_deps.sh, run first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
if ! dpkg-query -W -f='${Status}' nginx 2>/dev/null | grep -q "install ok installed"; then
  echo "install_bench_deps: installing nginx"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nginx >/dev/null
fi
python_packages=(h5coro kvikio-cu13 tensorstore)
if ! python3 -c "import h5coro, kvikio, tensorstore" 2>/dev/null; then
  echo "install_bench_deps: installing ${python_packages[*]}"
  python3 -m pip install -q "${python_packages[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${python_packages[@]}"
fi
