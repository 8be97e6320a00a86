#!/usr/bin/env bash
# Checks that a test run left nothing of h5tile's behind in the temporary folders.
#
#   scripts/check_tmp_clean.sh snapshot                  the h5tile entries of /tmp now, one a line
#   scripts/check_tmp_clean.sh check SNAPSHOT [RUN_TMP]  fails if the run left any
#
# `check` fails when /tmp holds an h5tile entry that the file SNAPSHOT (taken as the run began)
# does not list, or when RUN_TMP (the run's own TMPDIR: scripts/test.sh points every stage at
# one) holds one at its top level. Only the names that this project's tests and scripts make are
# looked at (h5tile*: h5tile_it_*, h5tile_raw_*, h5tile-fuzz-*, h5tile-perm-*, ...), so that what
# other programs on the machine make never fails the check; the folders of other scripts/test.sh
# runs (h5tile-test.*, each removed by its own run) are left out too. What else is left in
# RUN_TMP (the tools' own: pytest's kept tmp_path folders, Open MPI's session folders) is listed
# for information; scripts/test.sh removes RUN_TMP with it.
set -euo pipefail
tmp_root="${H5TILE_CHECK_TMP_ROOT:-/tmp}"  # another folder for its own test (test_check_tmp_clean.py)

h5tile_entries() {
  local entry name
  for entry in "$1"/h5tile*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    name=$(basename "$entry")
    case "$name" in h5tile-test.*) continue ;; esac
    echo "$name"
  done
}

case "${1:-}" in
  snapshot)
    h5tile_entries "$tmp_root"
    ;;
  check)
    [ $# -ge 2 ] || { echo "usage: $0 check SNAPSHOT [RUN_TMP]" >&2; exit 2; }
    snapshot="$2" run_tmp="${3:-}"
    status=0
    new=$(h5tile_entries "$tmp_root" | grep -vxF -f "$snapshot" || true)
    if [ -n "$new" ]; then
      echo "check_tmp_clean: the run left these in $tmp_root (a test or script that writes there and does not" \
        "clean up, or another h5tile run on this machine at the same time):"
      echo "$new" | sed "s#^#  $tmp_root/#"
      status=1
    fi
    if [ -n "$run_tmp" ] && [ -d "$run_tmp" ]; then
      left=$(h5tile_entries "$run_tmp")
      if [ -n "$left" ]; then
        echo "check_tmp_clean: the run left these in its temporary folder (TMPDIR):"
        echo "$left" | sed "s#^#  $run_tmp/#"
        status=1
      fi
      others=$(find "$run_tmp" -mindepth 1 -maxdepth 1 ! -name 'h5tile*' -printf '%f ' 2>/dev/null || true)
      [ -z "$others" ] || echo "check_tmp_clean: the tools' own, removed with the run's folder: $others"
    fi
    [ $status = 0 ] && echo "check_tmp_clean: nothing of h5tile's left in $tmp_root${run_tmp:+ or $run_tmp}"
    exit $status
    ;;
  *)
    echo "usage: $0 snapshot | check SNAPSHOT [RUN_TMP]" >&2
    exit 2
    ;;
esac
