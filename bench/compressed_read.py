#!/usr/bin/env python3
"""gzip + shuffle chunked data: h5tile decoding chunks on its own workers (default), h5tile
through HDF5 (H5TILE_RAW_IO=0) and h5py, on one float32 file (a smooth field plus noise, which
compresses 2-4x) with chunks of 1 MiB, warm page cache. Each h5tile run is a fresh process (the
setting is read once); one warm-up read, then the best of REPEATS timed reads. Prints the ratio
of h5tile's time to h5py's. Uses the package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/compressed_read.py [MiB (default 512)] [gzip level (default 4)]
"""
import os
import subprocess
import sys
import time

import h5py
import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PACKAGE = os.path.join(ROOT, os.environ.get("H5TILE_BUILD_DIR", "build"), "python")
PATH = "/tmp/h5tile-compressed-read.h5"
REPEATS = 3
TIMED_READ = f"""
import sys, time
sys.path.insert(0, {PACKAGE!r})
import h5tile
times = []
for i in range({REPEATS} + 1):  # the first read warms up
    t0 = time.perf_counter()
    h5tile.from_file({PATH!r}, "/x")
    times.append(time.perf_counter() - t0)
print(min(times[1:]))
"""


def field(rows, cols):
    """A smooth field plus noise: compresses 2-4x with gzip + shuffle."""
    y = np.linspace(0, 8 * np.pi, rows, dtype=np.float32)[:, None]
    x = np.linspace(0, 8 * np.pi, cols, dtype=np.float32)[None, :]
    noise = np.random.default_rng(0).normal(0, 0.01, (rows, cols)).astype(np.float32)
    return (np.sin(y) * np.cos(x) + noise).astype(np.float32)


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    level = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    cols = 4096
    rows = mib * (1 << 20) // (4 * cols)
    a = field(rows, cols)
    with h5py.File(PATH, "w") as f:
        f.create_dataset("x", data=a, chunks=(64, 4096), compression="gzip", compression_opts=level, shuffle=True)
    stored = os.path.getsize(PATH)
    print(f"{a.nbytes / 2**20:.0f} MiB float32 {a.shape}, chunks (64, 4096) = 1 MiB, gzip {level} + shuffle: "
          f"{stored / 2**20:.0f} MiB on disk ({a.nbytes / stored:.2f}x), {os.cpu_count()} CPUs")
    with h5py.File(PATH) as f:
        times = []
        for _ in range(REPEATS + 1):  # the first read warms up
            t0 = time.perf_counter()
            f["x"][...]
            times.append(time.perf_counter() - t0)
        h5py_s = min(times[1:])
    print(f"h5py:                           {h5py_s:7.3f} s  {a.nbytes / h5py_s / 1e9:6.2f} GB/s")
    for label, raw in (("h5tile (decodes itself)", "1"), ("h5tile H5TILE_RAW_IO=0 (HDF5)", "0")):
        env = dict(os.environ, H5TILE_RAW_IO=raw)
        s = float(subprocess.run([sys.executable, "-c", TIMED_READ], env=env, check=True, capture_output=True,
                                 text=True).stdout)
        print(f"{label + ':':32}{s:7.3f} s  {a.nbytes / s / 1e9:6.2f} GB/s  {h5py_s / s:5.2f}x h5py")
    os.unlink(PATH)


if __name__ == "__main__":
    main()
