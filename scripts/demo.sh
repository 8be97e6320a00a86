#!/usr/bin/env bash
# The main job: installs what is missing, builds, writes a generated array (2 GiB by default)
# with several worker ranks, reads it back whole and in batches, checks it with h5tile and
# with h5py, and prints sizes, times and GB/s. Arguments go to `h5tile demo` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh >/dev/null
path="h5tile-demo/demo.h5"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[$i]}" = "--path" ] && path="${args[$((i + 1))]}"
  [[ "${args[$i]}" == --path=* ]] && path="${args[$i]#--path=}"
done
"${H5TILE_BUILD_DIR:-build}/cli/h5tile" demo "$@"
case " $* " in *" --help "*|*" -h "*) exit 0 ;; esac
python3 scripts/check_demo.py "$path" /data
