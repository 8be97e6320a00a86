#!/usr/bin/env python3
"""Warm file -> GPU reads by h5tile setting (task size, staging memory, threads), each in its own
process (settings are read from the environment once), next to KvikIO on the same file in the
same run. First h5tile with its default settings and KvikIO in turn on the same buffer (alternating
rounds, so both see the same machine state), then the grid: median of 3 synchronised reads after
a warm-up, into a reused CuPy array and into a new one.

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

from common import build_dir, use_package
from common.cold import ones_file

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


def head_to_head(path, nbytes, rounds):
    """h5tile (default settings) and KvikIO read the same file into the same CuPy buffer, in
    turn, `rounds` times after a warm-up of each: both see the same machine state."""
    try:
        import cupy
        import kvikio
    except ImportError as e:
        print(f"KvikIO not run: {e}")
        return
    import h5py
    import h5tile
    with h5py.File(path, "r") as f:
        start = f["x"].id.get_offset()
        shape = f["x"].shape
    out = cupy.empty(shape, cupy.float32)
    knobs = {}
    for k in ("num_threads", "task_size", "bounce_buffer_size", "compat_mode"):
        try:
            knobs[k] = kvikio.defaults.get(k)
        except (AttributeError, KeyError, TypeError, ValueError):
            pass

    def synced(f):
        cupy.cuda.runtime.deviceSynchronize()
        t0 = time.perf_counter()
        f()
        cupy.cuda.runtime.deviceSynchronize()
        return time.perf_counter() - t0

    with kvikio.CuFile(str(path), "r") as kf:
        ours = lambda: h5tile.from_file(path, "/x", out=out)
        theirs = lambda: kf.pread(out, nbytes, start).get()
        synced(ours), synced(theirs)
        t_ours, t_theirs = [], []
        for _ in range(rounds):
            t_ours.append(synced(ours))
            t_theirs.append(synced(theirs))
    med = statistics.median
    print(f"head-to-head, {rounds} alternating rounds into one CuPy array (median; min-max GB/s):")
    for name, t in ((f"h5tile {h5tile.__version__} from_file(out=), default settings", t_ours),
                    (f"KvikIO {kvikio.__version__} CuFile.pread {knobs}", t_theirs)):
        print(f"  {name}: {nbytes / med(t) / 1e9:.2f} ({nbytes / max(t) / 1e9:.2f}-{nbytes / min(t) / 1e9:.2f})")
    ratios = [b / a for a, b in zip(t_ours, t_theirs)]
    print(f"  h5tile / KvikIO, median of the per-round ratios: {med(ratios):.2f}x "
          f"(min {min(ratios):.2f}x, max {max(ratios):.2f}x)", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=8)
    p.add_argument("--dir", default="/tmp/h5tile-tune")
    p.add_argument("--build", default=str(build_dir(os.environ.get("H5TILE_BUILD_DIR", "build-gpu"))))
    p.add_argument("--defaults-only", action="store_true", help="only h5tile's default settings in the grid")
    p.add_argument("--rounds", type=int, default=9, help="alternating rounds of the head-to-head")
    p.add_argument("--tasks", default="4M,8M,16M,32M", help="task sizes to try, comma-separated")
    p.add_argument("--staging", default="64M,128M,256M", help="staging memory settings to try")
    p.add_argument("--threads", default="16,32", help="thread counts to try")
    a = p.parse_args()
    pkg = use_package(a.build)
    path, nbytes = ones_file(a.dir, "tune.h5", a.gib)
    os.sync()  # no writeback of the new file during the timings
    print(f"{nbytes / 1e9:.2f} GB float32, warm page cache")
    head_to_head(path, nbytes, a.rounds)
    grid = [("8M", "128M", 16)] if a.defaults_only else itertools.product(a.tasks.split(","), a.staging.split(","),
                                                                          [int(t) for t in a.threads.split(",")])
    for task, staging, threads in grid:
        env = dict(os.environ, H5TILE_TASK_SIZE=task, H5TILE_STAGING_BYTES=staging, H5TILE_THREADS=str(threads))
        r = json.loads(subprocess.run([sys.executable, "-c", CHILD, pkg, str(path)], env=env, check=True,
                                      capture_output=True, text=True).stdout)
        print(f"task {task:>4} staging {staging:>5} threads {threads:2}: into reused {nbytes / r['into'] / 1e9:6.2f}"
              f"   into new {nbytes / r['new'] / 1e9:6.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
