#!/usr/bin/env python3
# Decided (one H200, 2026-12-02, 4.29 GB warm, 9 alternating reads each): the cold-read sample of H5TILE_COLD_READS=auto costs warm reads nothing measurable (device 50.18 GB/s auto against 50.09 parallel; host 42.56 against 43.18), so auto stays the default.
"""Warm reads with the page-cache sample (H5TILE_COLD_READS=auto) and without it (parallel),
alternating in one process so that both see the same machine state: median GB/s of the reads
after the first, into host memory and, where CuPy and a device are there, into device memory.

    H5TILE_BUILD_DIR=build python3 bench/probes/warm_sampling.py [--gib 4] [--reads 9] [--dir DIR]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
build = Path(os.environ.get("H5TILE_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str((build if build.is_absolute() else ROOT / build) / "python"))
import h5tile  # noqa: E402
import h5tile.settings  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=4.0, help="size of the float32 file in GiB (default 4)")
    p.add_argument("--reads", type=int, default=9, help="reads per setting and destination (default 9)")
    p.add_argument("--dir", help="folder for the file (default: a temporary folder, removed)")
    a = p.parse_args()
    try:
        import cupy
        device = h5tile.cuda_device_count() > 0
    except ImportError:
        cupy, device = None, False
    with tempfile.TemporaryDirectory(dir=a.dir, prefix="h5tile-warm-") as work:
        path = Path(work) / "warm.h5"
        x = np.random.default_rng(0).random(int(a.gib * 2**28), dtype=np.float32).reshape(-1, 4096)
        h5tile.to_file(x, path, "/d", layout="contiguous").wait()
        for dest in ["host"] + (["device"] if device else []):
            seconds = {"auto": [], "parallel": []}
            for i in range(a.reads):
                for mode in ("auto", "parallel") if i % 2 == 0 else ("parallel", "auto"):
                    h5tile.settings.set_cold_reads(mode)
                    if dest == "device":
                        cupy.cuda.runtime.deviceSynchronize()
                    t = time.perf_counter()
                    out = h5tile.from_file(path, "/d", **({"device": 0} if dest == "device" else {}))
                    if dest == "device":
                        cupy.cuda.runtime.deviceSynchronize()
                    seconds[mode].append(time.perf_counter() - t)
                    if i == 0:
                        got = cupy.asnumpy(out) if dest == "device" else out
                        assert got.tobytes() == x.tobytes(), f"{mode} {dest}: wrong bytes"
                    del out
            rates = {m: x.nbytes / statistics.median(v[1:]) / 1e9 for m, v in seconds.items()}
            print(f"{dest}: auto {rates['auto']:.2f} GB/s, parallel {rates['parallel']:.2f} GB/s "
                  f"(auto / parallel {rates['auto'] / rates['parallel']:.3f}; median of {a.reads - 1} after one)")
        h5tile.settings.set_cold_reads("auto")


if __name__ == "__main__":
    main()
