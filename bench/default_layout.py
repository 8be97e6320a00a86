#!/usr/bin/env python3
"""The default layout against the virtual one (issue 30, item 1): h5tile.to_file with
layout="auto" (one self-contained file: contiguous, or chunked when compressed) and with
layout="virtual" (the default before: one file per tile), same array, same run, alternating in
rounds (the order rotated each round), each write synced to disk (sync=True, the default) or
only to the page cache (--no-sync). Prints the median seconds of each and the ratio auto/virtual
in speed (target: at least 0.95x). Every file written is read back with h5py and compared.
Uses the package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/default_layout.py [--mib 1024] [--rounds 5] [--dir FOLDER] [--no-sync]
"""
import argparse
import os
import pathlib
import shutil
import statistics
import tempfile
import time

import h5py
import numpy as np

from common import use_package

use_package()
import h5tile  # noqa: E402

CASES = {"uncompressed": {}, "gzip 4 + shuffle, 1 MiB chunks": {"compression": "gzip", "shuffle": True}}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=1024, help="array size in MiB (default 1024)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; each writes every layout once (default 5)")
    parser.add_argument("--dir", default=None, help="folder on the file system to measure (default: a temporary "
                        "folder in $TMPDIR, removed at the end)")
    parser.add_argument("--no-sync", action="store_true", help="do not flush to disk (page cache only)")
    args = parser.parse_args()
    folder = pathlib.Path(args.dir) if args.dir else pathlib.Path(tempfile.mkdtemp(prefix="h5tile-layout-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = args.mib * 2**20 // (4 * 4096)
    rng = np.random.default_rng(0)
    # Values that compress about 2x under gzip + shuffle (a smooth ramp plus noise).
    a = (np.arange(rows * 4096, dtype=np.float32).reshape(rows, 4096) % 977
         + rng.normal(size=(rows, 4096)).astype(np.float32))
    print(f"{a.nbytes / 2**20:.0f} MiB float32 {a.shape}, {os.cpu_count()} CPUs, "
          f"{'page cache (no fsync)' if args.no_sync else 'synced to disk'}, {args.rounds} rounds, "
          f"load average {os.getloadavg()[0]:.1f}, in {folder}")
    print(f"{'case':34}{'layout':22}{'median s':>10}{'GB/s':>8}{'auto/virtual':>14}")
    try:
        for case, options in CASES.items():
            times = {"auto": [], "virtual": []}
            order = list(times)
            for r in range(args.rounds):
                for layout in order[r % 2:] + order[:r % 2]:
                    path = folder / f"{layout}.h5"
                    start = time.perf_counter()
                    h5tile.to_file(a, path, "/x", layout=layout, sync=not args.no_sync, keep_previous=False,
                                   **options).wait()
                    times[layout].append(time.perf_counter() - start)
            for layout in times:
                with h5py.File(folder / f"{layout}.h5", "r") as f:
                    assert np.array_equal(f["x"][...], a), f"{layout}: h5py reads other values"
                    stored = f["x"].id.get_create_plist().get_layout()
                median = statistics.median(times[layout])
                ratio = statistics.median(times["virtual"]) / median if layout == "auto" else 1.0
                kind = {0: "compact", 1: "contiguous", 2: "chunked", 3: "virtual"}[stored]
                print(f"{case:34}{layout + ' (' + kind + ')':22}{median:>8.3f}{a.nbytes / median / 1e9:8.2f}"
                      f"{ratio:13.2f}x")
    finally:
        if not args.dir:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
