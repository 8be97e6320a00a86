#!/usr/bin/env python3
# Decided (CPU machine, 2 cores, 2026-12-02): freed results from 128 KiB up are kept by the host pool (was: from 32 MiB), since a 1 MiB read into memory that glibc had just trimmed cost 0.57-0.73 ms against 0.20-0.22 ms with glibc told not to trim; numbers below in BENCHMARKS.md.
"""One 1 MiB chunk read again and again through h5tile.File (as each task of a Dask or xarray
graph over 1 MiB chunks reads one), each result freed before the next read: milliseconds per read
with the host pool off (H5TILE_HOST_POOL=0: every result is new memory from malloc), with the pool
on (the default), and with the pool off but glibc told to neither trim its heap nor mmap these
sizes (GLIBC_TUNABLES; what the pool does for h5tile without changing the program's malloc).
Each case runs in its own process; cases alternate over the rounds; medians.

    python3 bench/probes/small_result_memory.py [--reads 2000] [--rounds 3] [--mib 1]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PACKAGE = os.path.join(ROOT, os.environ.get("H5TILE_BUILD_DIR", "build"), "python")

READS = """
import sys, time
sys.path.insert(0, {package!r})
import numpy as np
import h5tile
with h5tile.File({path!r}) as f:
    ds = f["x"]
    rows = {rows}
    chunks = ds.shape[0] // rows
    expected = ds[0:rows].copy()
    t0 = time.perf_counter()
    for k in range({reads}):
        i = k % chunks
        block = ds[i * rows:(i + 1) * rows]
    s = time.perf_counter() - t0
    assert np.array_equal(ds[0:rows], expected)
print(s / {reads} * 1e3)
"""

CASES = {
    "pool off (H5TILE_HOST_POOL=0)": {"H5TILE_HOST_POOL": "0"},
    "pool on (default)": {},
    "pool off, glibc neither trims nor maps": {
        "H5TILE_HOST_POOL": "0",
        "GLIBC_TUNABLES": "glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=33554432"},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mib", type=int, default=1, help="size of one chunk (one read)")
    args = parser.parse_args()
    sys.path.insert(0, PACKAGE)
    import numpy as np
    import h5tile

    cols = 4096
    rows = args.mib * (1 << 20) // (4 * cols)
    with tempfile.TemporaryDirectory() as where:
        path = os.path.join(where, "x.h5")
        a = np.random.default_rng(0).random((rows * 64, cols), dtype=np.float32)
        h5tile.to_file(a, path, "/x", layout="chunked", chunks=(rows, cols)).wait()
        times = {name: [] for name in CASES}
        for _ in range(args.rounds):
            for name, env in CASES.items():
                code = READS.format(package=PACKAGE, path=path, rows=rows, reads=args.reads)
                out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, check=True,
                                     capture_output=True, text=True).stdout
                times[name].append(float(out.split()[-1]))
    print(f"{args.reads} reads of one {args.mib} MiB chunk through h5tile.File, {os.cpu_count()} CPUs, "
          f"medians of {args.rounds} processes per case")
    base = statistics.median(times["pool off (H5TILE_HOST_POOL=0)"])
    for name, values in times.items():
        m = statistics.median(values)
        print(f"  {name:42} {m:6.3f} ms a read  ({', '.join(f'{v:.3f}' for v in values)})  {base / m:5.2f}x pool off")


if __name__ == "__main__":
    main()
