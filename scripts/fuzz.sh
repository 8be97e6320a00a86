#!/usr/bin/env bash
# Fuzzes h5tile's opening, layout and mapping code with libFuzzer (clang, ASan+UBSan).
#
#   scripts/fuzz.sh [SECONDS]          replay, then fuzz for SECONDS (default 60)
#   scripts/fuzz.sh replay             replay only
#   scripts/fuzz.sh fuzz SECONDS       fuzz only; run it longer by hand: scripts/fuzz.sh fuzz 3600
#
# Replay (the gate, deterministic): every input in tests/fuzz/regressions (findings fixed
# earlier) and in the seed corpus tests/fuzz/corpus runs once. Any failure fails the script.
#
# Fuzzing (timed, random): from the seed corpus, for a bounded time. A finding whose innermost
# frame of h5tile's process is in h5tile (or anything but the HDF5 library) fails the run: the
# input is left in build-fuzz/findings/; fix it and add the input to tests/fuzz/regressions/. A
# finding inside Debian's HDF5 library itself (a hang or crash in its decoders on a damaged
# file, which h5tile cannot prevent) is reported, its input kept in build-fuzz/findings/hdf5/,
# and fuzzing goes on with the next seed. A failure of the fuzzing machinery itself (a
# sanitizer's own "fatal error", a run that wrote no input and no stack) is reported as an
# infrastructure error and does not fail the script: it says nothing about h5tile.
#
# H5TILE_FUZZER names a fuzzer binary to use instead of building one, H5TILE_FUZZ_BUILD_DIR the
# folder for the build, logs and findings (build-fuzz) (tests/python/test_fuzz_script.py).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=all seconds=60
case "${1:-}" in
  replay) mode=replay ;;
  fuzz) mode=fuzz seconds="${2:-60}" ;;
  "") ;;
  *) seconds="$1" ;;
esac
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "fuzz.sh: SECONDS must be a whole number, not '$seconds'" >&2
  exit 2
fi
build="${H5TILE_FUZZ_BUILD_DIR:-build-fuzz}"
if [ -n "${H5TILE_FUZZER:-}" ]; then
  fuzzer="$H5TILE_FUZZER"
else
  if [ ! -f "$build/build.ninja" ]; then
    CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH5TILE_SANITIZE=fuzzer \
      -DH5TILE_WITH_CUDA=OFF -DH5TILE_WITH_MPI=OFF -DH5TILE_BUILD_TESTS=OFF -DH5TILE_BUILD_CLI=OFF >/dev/null ||
      { echo "fuzz.sh: cannot configure $build"; exit 1; }
  fi
  cmake --build "$build" -j "$(nproc)" --target h5tile_open_fuzzer >/dev/null ||
    { echo "fuzz.sh: cannot build the fuzzer"; exit 1; }
  fuzzer="$PWD/$build/tests/fuzz/h5tile_open_fuzzer"
fi
mkdir -p "$build"
# The run's temporary files (each fuzzer process makes a scratch folder where TMPDIR says) go
# to a folder of the run's own inside $build, removed on every way out: the end, an error, and
# SIGINT or SIGTERM (the fuzzer then running is stopped first). A run leaves nothing in /tmp.
run_tmp=$(mktemp -d "$build/tmp.XXXXXX") && run_tmp=$(cd "$run_tmp" && pwd) ||
  { echo "fuzz.sh: cannot create a temporary folder in $build"; exit 1; }
child=
cleanup() {
  if [ -n "$child" ]; then
    kill "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  rm -rf "$run_tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export TMPDIR="$run_tmp"

# Runs the fuzzer with the arguments after the first, its output to the file $1, and waits for
# it in the background: bash runs a trap only between commands, so a signal to this script is
# then handled at once rather than when a fuzzing run of many seconds ends.
run_fuzzer() {
  local log="$1" code
  shift
  "$fuzzer" "$@" >"$log" 2>&1 &
  child=$!
  wait "$child"
  code=$?
  child=
  return $code
}
export H5TILE_FUZZ_SOURCES="$PWD/tests/fuzz/sources"
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Whether a log shows the sanitizers' own machinery failing (not a finding in the code run).
infrastructure_error() {
  grep -qE 'Sanitizer has encountered a fatal error|Sanitizer: (CHECK failed|StopTheWorld|failed to)|Tracer caught signal' "$1"
}

# The innermost frame of the report in the HDF5 library or in h5tile's own sources (frames in
# the sanitizer, libFuzzer, libc and allocation interceptors carry neither); empty if none.
innermost_frame() {
  grep -E '^ +#[0-9]+ ' "$1" | grep -E 'libhdf5|/(src|include/h5tile|tests/fuzz)/[^ ]+\.(cpp|hpp):[0-9]+' | head -1 || true
}

# Replays the inputs given, one process each, so that a failure names its input; a sanitizer
# failing on its own is retried once without leak checks (the fuzzer's own check that no HDF5
# object stays open still runs).
replay() {
  local failed=0 input log
  for input in "$@"; do
    log="$build/replay-$(basename "$input").log"
    if run_fuzzer "$log" "$input"; then
      continue
    fi
    if infrastructure_error "$log"; then
      echo "infrastructure error replaying $input (the sanitizer failed, not h5tile): $(grep -m1 -E 'fatal error|CHECK failed' "$log")"
      echo "   replaying it again without LeakSanitizer"
      if ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 run_fuzzer "$log" "$input"; then
        continue
      fi
    fi
    echo "replay of $input fails (log: $log):"
    grep -E "ERROR|SUMMARY|^ +#[0-9]+ " "$log" | head -40
    failed=1
  done
  return $failed
}

status=0
if [ "$mode" != fuzz ]; then
  inputs=(tests/fuzz/regressions/* tests/fuzz/corpus/*)
  echo "== replaying $(ls tests/fuzz/regressions | wc -l) regression input(s) and $(ls tests/fuzz/corpus | wc -l) seed(s)"
  if replay "${inputs[@]}"; then
    echo "replay: ${#inputs[@]} input(s), no failure"
  else
    echo "replay: an input fails (a regression, or a seed that h5tile no longer handles)"
    exit 1
  fi
fi
[ "$mode" = replay ] && exit 0

work="$build/corpus"
rm -rf "$work" "$build/findings" "$build"/fuzz-*.log && mkdir -p "$work" "$build/findings/hdf5"
cp tests/fuzz/corpus/* "$work/"
echo "== fuzzing for ${seconds} s from $(ls tests/fuzz/corpus | wc -l) seeds"
end=$((SECONDS + seconds))
seed=1 runs=0 hdf5_findings=0 infrastructure=0
while [ $((end - SECONDS)) -gt 0 ]; do
  log="$build/fuzz-$seed.log"
  run_fuzzer "$log" -seed=$seed -max_total_time=$((end - SECONDS)) -timeout=3 -rss_limit_mb=4096 -max_len=16384 \
    -artifact_prefix="$build/findings/" -print_final_stats=1 "$work"
  code=$?
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  runs=$((runs + ${executed:-0}))
  [ $code -eq 0 ] && break
  input=$(sed -n 's/.*Test unit written to //p' "$log" | tail -1)
  frame=$(innermost_frame "$log")
  seed=$((seed + 1))
  if infrastructure_error "$log" || { [ -z "$input" ] && [ -z "$frame" ]; }; then
    infrastructure=$((infrastructure + 1))
    echo "infrastructure error (exit $code; not a finding in h5tile): $(grep -m1 -E 'ERROR|fatal|error' "$log" || echo 'no message')"
    echo "   log kept: $log; fuzzing goes on with seed $seed"
    if [ "$infrastructure" -ge 5 ]; then
      echo "   5 infrastructure errors: fuzzing stops early (the replay above is the gate)"
      break
    fi
    continue
  fi
  if [ -n "$input" ] && [[ "$frame" == *libhdf5* ]]; then
    hdf5_findings=$((hdf5_findings + 1))
    echo "HDF5 library finding (not in h5tile): $(grep -m1 -oE 'ERROR: [A-Za-z]+: [A-Za-z -]+' "$log" || echo "exit $code")"
    echo "   innermost frame: $(echo "$frame" | sed -E 's/ \(BuildId.*//; s/^ +//')"
    mv "$input" "$build/findings/hdf5/"
    continue
  fi
  echo "h5tile finding (exit $code); input: ${input:-none}; log: $log"
  grep -E "ERROR|SUMMARY|^ +#[0-9]+ " "$log" | head -40
  status=1
  break
done
echo "executed ${runs} inputs in ${seconds} s; corpus grew from $(ls tests/fuzz/corpus | wc -l) to $(ls "$work" | wc -l);" \
  "findings in h5tile: ${status}, in the HDF5 library: ${hdf5_findings}; infrastructure errors: ${infrastructure}"
exit $status
