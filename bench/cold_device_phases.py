#!/usr/bin/env python3
"""Where the time of a cold `from_file(device=0)` goes: each read runs in its own process after the
page cache is dropped (as root), with its phases timed apart: importing CuPy and making the CUDA
context, `describe` (HDF5 opens the cold file), allocating the result, and the read itself into it
(`from_file(out=)`), optionally after a small read that makes the pinned staging buffers first.
Next to it: `dd` of the same file, and, where it was built (scripts/gpu_machine.sh cold-probe
builds it), the standalone pipeline of bench/cold_device_strategies.cpp on the same file.

    sudo python3 bench/cold_device_phases.py [--gib 4] [--rounds 2] [--build build]
"""
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from common import drop_caches, use_package
from common.cold import cold_parser, timed_dd


PHASES = """
import json, sys, time
sys.path.insert(0, {python!r})
t = time.perf_counter()
import cupy
cupy.empty(1)
cupy.cuda.runtime.deviceSynchronize()
phases = {{"context": time.perf_counter() - t}}
import h5tile
if {warm_pool}:
    t = time.perf_counter()
    h5tile.from_file({small!r}, "/x", device=0)
    cupy.cuda.runtime.deviceSynchronize()
    phases["small read"] = time.perf_counter() - t
t = time.perf_counter()
info = h5tile.describe({path!r}, "/x")
phases["describe"] = time.perf_counter() - t
t = time.perf_counter()
out = cupy.empty(tuple(info["shape"]), info["dtype"])
cupy.cuda.runtime.deviceSynchronize()
phases["allocate"] = time.perf_counter() - t
t = time.perf_counter()
h5tile.from_file({path!r}, "/x", out=out)
cupy.cuda.runtime.deviceSynchronize()
phases["read"] = time.perf_counter() - t
phases["path"] = h5tile.last_device_io().get("path", "")
print(json.dumps(phases))
"""


def main():
    p = cold_parser(__doc__, 4, "/tmp/h5tile-cold-phases")
    p.add_argument("--only", default="", help="only the h5tile variants whose label holds one of these "
                   "comma-separated words (dd and the standalone pipeline always run)")
    a = p.parse_args()
    python = use_package(a.build)
    import numpy as np
    import h5tile
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    path, small = d / "cold.h5", d / "small.h5"
    rows = int(a.gib * 2**30) // 4 // 4096
    data = np.random.default_rng(1).random((rows, 4096), dtype=np.float32)
    h5tile.to_file(data, path, "/x", layout="contiguous").wait()
    h5tile.to_file(data[:64], small, "/x", layout="contiguous").wait()
    del data
    gb = rows * 4096 * 4 / 1e9
    direct = {"H5TILE_DIRECT_IO": "on"}
    variants = [("default", False, {}), ("staging made first", True, {}),
                ("staging made first, O_DIRECT", True, direct),
                ("staging first, 256M/8M", True, {"H5TILE_STAGING_BYTES": "256M"}),
                ("staging first, O_DIRECT, 256M/8M", True, {**direct, "H5TILE_STAGING_BYTES": "256M"}),
                ("staging first, 512M/16M", True, {"H5TILE_STAGING_BYTES": "512M", "H5TILE_TASK_SIZE": "16M"}),
                ("staging first, O_DIRECT, 512M/16M", True,
                 {**direct, "H5TILE_STAGING_BYTES": "512M", "H5TILE_TASK_SIZE": "16M"}),
                # Fewer, larger buffered reads in the default 128 MiB of staging: 4 threads of
                # 16 MiB pieces, 2 of 32 MiB (one buffered stream of 16 MiB reads was the fastest
                # buffered reader standalone).
                ("staging first, 4 threads, 128M/16M", True, {"H5TILE_THREADS": "4", "H5TILE_TASK_SIZE": "16M"}),
                ("staging first, 2 threads, 128M/32M", True, {"H5TILE_THREADS": "2", "H5TILE_TASK_SIZE": "32M"})]
    if a.only:
        variants = [v for v in variants if any(word in v[0] for word in a.only.split(","))]
    modes = []
    for label, warm_pool, extra in variants:
        code = PHASES.format(python=python, path=str(path), small=str(small), warm_pool=warm_pool)

        def run(code=code, extra=extra):
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 env={**os.environ, **extra}, check=True)
            return json.loads(out.stdout.strip().splitlines()[-1])
        modes.append((label, run))

    modes += [("dd bs=16M, buffered", lambda: {"read": timed_dd(path, False)}),
              ("dd bs=16M iflag=direct", lambda: {"read": timed_dd(path, True)})]
    probe = Path(a.build) / "cold_device_strategies"
    if probe.exists():
        for spec in ["pipe:16:4:b", "pipe:8:32:d"]:
            def standalone(spec=spec):
                out = subprocess.run([str(probe), str(path), "--rounds", "1", spec], capture_output=True, text=True,
                                     check=True)
                return {"read": gb / float(out.stdout.splitlines()[-1].split()[1])}
            modes.append((f"standalone {spec}", standalone))
    results = {label: [] for label, _ in modes}
    for r in range(a.rounds):
        for k in range(len(modes)):
            label, run = modes[(k + r) % len(modes)]
            drop_caches()
            results[label].append(run())
    print(f"cold reads of {gb:.2f} GB into device 0, {a.rounds} rounds, modes in turn; seconds per phase (medians)")
    for label, runs in results.items():
        keys = [k for k in runs[0] if k != "path"]
        phases = {k: statistics.median(r[k] for r in runs) for k in keys}
        rate = gb / phases["read"]
        each = ", ".join(f"{gb / r['read']:.2f}" for r in runs)
        rest = "".join(f"; {k} {v:.3f}" for k, v in phases.items() if k != "read")
        where = f"; path {runs[0]['path']}" if runs[0].get("path") else ""
        print(f"  {label:42s} read {rate:5.2f} GB/s ({each}){rest}{where}")
    path.unlink()
    small.unlink()


if __name__ == "__main__":
    main()
