#!/usr/bin/env python3
"""Unfiltered chunked data: h5tile reading chunks with pread (H5TILE_RAW_IO=1) and through HDF5
(H5TILE_RAW_IO=0), and h5py, on one 256 MiB (--mib) float32 file with (256, 1024) chunks in the
temporary folder (TMPDIR, else /tmp), warm page cache. Each h5tile run is a fresh process (the
setting is read once); one warm-up read, then one timed read. Uses the package in
$H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/chunked_read.py [--mib 256]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

from common import PACKAGE

PATH = os.path.join(tempfile.gettempdir(), "h5tile-chunked-read.h5")
TIMED_READ = f"""
import sys, time
sys.path.insert(0, {PACKAGE!r})
import h5tile
h5tile.from_file({PATH!r}, "/x")
t0 = time.perf_counter()
h5tile.from_file({PATH!r}, "/x")
print(time.perf_counter() - t0)
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mib", type=int, default=256, help="size of the file's dataset (rows of 8192 float32)")
    args = p.parse_args()
    a = np.random.default_rng(0).random((args.mib * 2**20 // (4 * 8192), 8192), dtype=np.float32)
    with h5py.File(PATH, "w") as f:
        f.create_dataset("x", data=a, chunks=(256, 1024))
    for raw in ("1", "0"):
        env = dict(os.environ, H5TILE_RAW_IO=raw)
        seconds = float(subprocess.run([sys.executable, "-c", TIMED_READ], env=env, check=True, capture_output=True,
                                       text=True).stdout)
        print(f"h5tile H5TILE_RAW_IO={raw}: {a.nbytes / seconds / 1e9:.2f} GB/s")
    with h5py.File(PATH) as f:
        f["x"][...]
        t0 = time.perf_counter()
        f["x"][...]
        print(f"h5py: {a.nbytes / (time.perf_counter() - t0) / 1e9:.2f} GB/s")
    os.remove(PATH)


if __name__ == "__main__":
    main()
