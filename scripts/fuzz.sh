#!/usr/bin/env bash
# Fuzzes h5tile's opening, layout and mapping code with libFuzzer (clang, ASan+UBSan) for a
# bounded time, starting from the seed corpus in tests/fuzz/corpus, after replaying every
# input in tests/fuzz/regressions (findings fixed earlier). The test command runs it for 60 s;
# run it longer by hand:  scripts/fuzz.sh 3600
#
# A finding whose innermost frame of h5tile's process is in h5tile (or anything but the HDF5
# library) fails the run: the input is left in build-fuzz/findings/; fix it and add the input
# to tests/fuzz/regressions/. A finding inside Debian's HDF5 library itself (a hang or crash in
# its decoders on a damaged file, which h5tile cannot prevent) is reported, its input kept in
# build-fuzz/findings/hdf5/, and fuzzing goes on with the next seed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH5TILE_SANITIZE=fuzzer \
    -DH5TILE_WITH_CUDA=OFF -DH5TILE_WITH_MPI=OFF -DH5TILE_BUILD_TESTS=OFF -DH5TILE_BUILD_CLI=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target h5tile_open_fuzzer >/dev/null
fuzzer="$PWD/$build/tests/fuzz/h5tile_open_fuzzer"
export H5TILE_FUZZ_SOURCES="$PWD/tests/fuzz/sources"
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
work="$build/corpus"
rm -rf "$work" "$build/findings" "$build"/fuzz-*.log && mkdir -p "$work" "$build/findings/hdf5"
cp tests/fuzz/corpus/* "$work/"

if compgen -G "tests/fuzz/regressions/*" >/dev/null; then
  echo "== replaying $(ls tests/fuzz/regressions | wc -l) regression input(s)"
  "$fuzzer" tests/fuzz/regressions/* > "$build/regressions.log" 2>&1 ||
    { tail -40 "$build/regressions.log"; echo "a regression input fails again"; exit 1; }
fi

# The innermost frame of the report in the HDF5 library or in h5tile's own sources (frames in
# the sanitizer, libFuzzer, libc and allocation interceptors carry neither).
innermost_frame() {
  grep -E '^ +#[0-9]+ ' "$1" | grep -E 'libhdf5|/(src|include/h5tile|tests/fuzz)/[^ ]+\.(cpp|hpp):[0-9]+' | head -1
}

echo "== fuzzing for ${seconds} s from $(ls tests/fuzz/corpus | wc -l) seeds"
end=$((SECONDS + seconds))
seed=1 runs=0 hdf5_findings=0 status=0
while [ $((end - SECONDS)) -gt 0 ]; do
  log="$build/fuzz-$seed.log"
  set +e
  "$fuzzer" -seed=$seed -max_total_time=$((end - SECONDS)) -timeout=3 -rss_limit_mb=4096 -max_len=16384 \
    -artifact_prefix="$build/findings/" -print_final_stats=1 "$work" > "$log" 2>&1
  code=$?
  set -e
  runs=$((runs + $(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)))
  [ $code -eq 0 ] && break
  input=$(sed -n 's/.*Test unit written to //p' "$log" | tail -1)
  frame=$(innermost_frame "$log")
  if [ -n "$input" ] && [[ "$frame" == *libhdf5* ]]; then
    hdf5_findings=$((hdf5_findings + 1))
    echo "HDF5 library finding (not in h5tile): $(grep -m1 -oE 'ERROR: [A-Za-z]+: [A-Za-z -]+' "$log")"
    echo "   innermost frame: $(echo "$frame" | sed -E 's/ \(BuildId.*//; s/^ +//')"
    mv "$input" "$build/findings/hdf5/"
    seed=$((seed + 1))
    continue
  fi
  echo "h5tile finding (exit $code); input: ${input:-none}; log: $log"
  grep -E "ERROR|SUMMARY|^ +#[0-9]+ " "$log" | head -40
  status=1
  break
done
echo "executed ${runs} inputs in ${seconds} s; corpus grew from $(ls tests/fuzz/corpus | wc -l) to $(ls "$work" | wc -l);" \
  "findings in h5tile: ${status}, in the HDF5 library: ${hdf5_findings}"
exit $status
