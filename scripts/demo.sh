#!/usr/bin/env bash
# The main job: installs what is missing, builds, writes a generated array (2 GiB by default)
# with several worker ranks, reads it back whole and in batches, checks it with h5tile and
# with h5py, and prints sizes, times and GB/s. Arguments go to `h5tile demo` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
  if [ "$arg" = "--help" ] || [ "$arg" = "-h" ]; then
    # Help at once: nothing is installed or built for it.
    cat <<'USAGE'
Usage: scripts/demo.sh [h5tile demo options]

Installs what is missing (scripts/install_deps.sh), builds h5tile (scripts/build.sh), runs
`h5tile demo` with the options given, then checks the file with h5py (scripts/check_demo.py).
USAGE
    binary="${H5TILE_BUILD_DIR:-build}/cli/h5tile"
    if [ -x "$binary" ]; then
      echo
      "$binary" demo --help
    else
      echo "The options of 'h5tile demo' (--size, --ranks, --path, --layout, ...) are listed by"
      echo "'h5tile demo --help' once it is built."
    fi
    exit 0
  fi
done
scripts/install_deps.sh
scripts/build.sh >/dev/null
path="h5tile-demo/demo.h5"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[$i]}" = "--path" ] && path="${args[$((i + 1))]}"
  [[ "${args[$i]}" == --path=* ]] && path="${args[$i]#--path=}"
done
"${H5TILE_BUILD_DIR:-build}/cli/h5tile" demo "$@"
python3 scripts/check_demo.py "$path" /data
