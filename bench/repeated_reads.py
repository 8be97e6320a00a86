#!/usr/bin/env python3
"""A loop of from_file calls in one process against the same loop reading into one reused buffer
(from_file(out=...)), on one contiguous dataset, warm page cache: with h5tile's host pool (the
default), and with it off (every result in new memory). Loops alternate, --rounds times each;
prints the median loop time, the ratio to the reused buffer, and the peak resident memory of
each loop (VmHWM, reset before each loop). With --legate, also legate.io.hdf5.from_file + fence +
np.asarray in the same loop (run it under Legate's environment; see bench/legate_read.py).

    python3 bench/repeated_reads.py [--size 2G] [--calls 10] [--rounds 3] [--dir /tmp/h5tile-repeat]
"""
import argparse
import statistics
import time
from pathlib import Path

import h5py  # before legate's libraries
import numpy as np

from common import use_package

use_package()
import h5tile  # noqa: E402


def reset_peak():
    Path("/proc/self/clear_refs").write_text("5\n")


def peak_gib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="2G", help="dataset size (float32)")
    p.add_argument("--calls", type=int, default=10, help="reads per loop")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dir", default="/tmp/h5tile-repeat")
    p.add_argument("--legate", action="store_true", help="also legate.io.hdf5 (under Legate's environment)")
    a = p.parse_args()
    nbytes = h5tile.settings.parse_size(a.size)
    path = Path(a.dir) / "repeat.h5"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = nbytes // 4 // 4096
    h5tile.to_file(np.random.default_rng(0).random((rows, 4096), np.float32), path, "/x", layout="contiguous").wait()
    gb = rows * 4096 * 4 / 1e9
    pool = h5tile.settings.host_pool_bytes()
    reused = np.empty((rows, 4096), np.float32)

    def fresh_loop():
        for _ in range(a.calls):
            out = h5tile.from_file(path, "/x")
            del out

    def reused_loop():
        for _ in range(a.calls):
            h5tile.from_file(path, "/x", out=reused)

    def no_pool_loop():
        h5tile.settings.set_host_pool_bytes(0)
        try:
            fresh_loop()
        finally:
            h5tile.settings.set_host_pool_bytes(pool)

    loops = [("from_file (host pool on)", fresh_loop), ("from_file(out=reused buffer)", reused_loop),
             ("from_file (host pool off)", no_pool_loop)]
    if a.legate:
        import legate.io.hdf5 as lh
        from legate.core import get_legate_runtime

        def legate_loop():
            for _ in range(a.calls):
                array = lh.from_file(str(path), "/x")
                get_legate_runtime().issue_execution_fence(block=True)
                np.asarray(array.data.get_physical_store())
                del array
        loops.append(("legate.io.hdf5.from_file", legate_loop))
    fresh_loop()  # warm the page cache and the pool
    times = {name: [] for name, _ in loops}
    peaks = {name: [] for name, _ in loops}
    for _ in range(a.rounds):
        for name, loop in loops:
            reset_peak()
            t0 = time.perf_counter()
            loop()
            times[name].append(time.perf_counter() - t0)
            peaks[name].append(peak_gib())
    base = statistics.median(times["from_file(out=reused buffer)"])
    print(f"{a.calls} reads of {gb:.2f} GB per loop, warm, {h5tile.settings.threads()} threads, host pool "
          f"{pool / 2**30:.1f} GiB, {a.rounds} rounds")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:30s} {med:7.3f} s per loop ({gb * a.calls / med:6.2f} GB/s), {base / med:5.2f}x the reused "
              f"buffer, peak RSS {max(peaks[name]):.2f} GiB; all {', '.join(f'{t:.2f}' for t in ts)}")


if __name__ == "__main__":
    main()
