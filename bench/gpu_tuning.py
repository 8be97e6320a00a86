#!/usr/bin/env python3
"""Warm file -> GPU reads by h5tile setting (task size, staging memory, threads), each in its own
process (settings are read from the environment once), next to KvikIO on the same file in the
same run. Median of 3 synchronised reads after a warm-up, into a reused CuPy array and into a
new one.

    python3 bench/gpu_tuning.py [--gib 8] [--dir /tmp/h5tile-tune] [--build build-gpu]
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import cupy, h5tile
path = sys.argv[2]
info = h5tile.describe(path, "/x")
out = cupy.empty(tuple(info["shape"]), cupy.float32)
def timed(f):
    f(); cupy.cuda.runtime.deviceSynchronize()
    t = []
    for _ in range(3):
        t0 = time.perf_counter(); f(); cupy.cuda.runtime.deviceSynchronize(); t.append(time.perf_counter() - t0)
    return statistics.median(t)
print(json.dumps({"into": timed(lambda: h5tile.from_file(path, "/x", out=out)),
                  "new": timed(lambda: h5tile.from_file(path, "/x", device=0))}))
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=8)
    p.add_argument("--dir", default="/tmp/h5tile-tune")
    p.add_argument("--build", default=os.environ.get("H5TILE_BUILD_DIR", str(ROOT / "build-gpu")))
    p.add_argument("--defaults-only", action="store_true", help="only h5tile's default settings")
    a = p.parse_args()
    pkg = str(Path(a.build) / "python")
    sys.path.insert(0, pkg)
    import numpy as np
    import h5tile
    path = Path(a.dir) / "tune.h5"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = int(a.gib * 2**30) // 4 // 4096
    h5tile.to_file(np.ones((rows, 4096), np.float32), path, "/x", layout="contiguous").wait()
    nbytes = rows * 4096 * 4
    print(f"{nbytes / 1e9:.2f} GB float32, warm page cache; GB/s (median of 3)")
    try:
        import cupy
        import kvikio
        buf = cupy.empty(nbytes // 4, cupy.float32)
        import h5py
        with h5py.File(path, "r") as f:
            start = f["x"].id.get_offset()
        with kvikio.CuFile(str(path), "r") as f:
            f.pread(buf, nbytes, start).get()
            t = []
            for _ in range(3):
                t0 = time.perf_counter()
                f.pread(buf, nbytes, start).get()
                cupy.cuda.runtime.deviceSynchronize()
                t.append(time.perf_counter() - t0)
        print(f"KvikIO {kvikio.__version__} CuFile.pread ({os.environ.get('KVIKIO_NTHREADS', '1')} threads): "
              f"{nbytes / statistics.median(t) / 1e9:.2f}")
        del buf
    except ImportError as e:
        print(f"KvikIO not run: {e}")
    grid = [("8M", "256M", 16)] if a.defaults_only else itertools.product(("4M", "8M", "16M", "32M"),
                                                                          ("256M", "1G"), (16, 32))
    for task, staging, threads in grid:
        env = dict(os.environ, H5TILE_TASK_SIZE=task, H5TILE_STAGING_BYTES=staging, H5TILE_THREADS=str(threads))
        r = json.loads(subprocess.run([sys.executable, "-c", CHILD, pkg, str(path)], env=env, check=True,
                                      capture_output=True, text=True).stdout)
        print(f"task {task:>4} staging {staging:>5} threads {threads:2}: into reused {nbytes / r['into'] / 1e9:6.2f}"
              f"   into new {nbytes / r['new'] / 1e9:6.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
