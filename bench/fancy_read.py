#!/usr/bin/env python3
"""h5py's fancy selections through h5py and through h5tile.File, on one gzip-chunked float32
dataset that h5py writes (--size x --size, chunks of --chunk x --chunk, gzip 4 + shuffle):

- box:    ``ds[n/4:3n/4, n/4:3n/4]``, a plain slice (a quarter of the dataset), for comparison
- rows:   ``ds[sorted random rows, :]`` (--picks rows)
- cols:   ``ds[:, sorted random columns]`` (--picks columns)
- mask:   ``ds[mask]``, a random boolean mask of the whole shape (--density of it True: every
          chunk holds a True)
- disk:   ``ds[mask]``, the Trues a disk of a quarter of the width across (a few chunks hold one)

Each engine opens the file once, as a user holds it, and reads each selection; the file is left
alone for 2.5 s first (h5tile keeps a dataset open between reads once its file has not changed
for 2 s). Warm (the default): the page cache holds the file; one untimed read, then the median of
--rounds reads. Cold (--cold, as root): the page cache dropped before each read (sync; echo 3 >
/proc/sys/vm/drop_caches), the median of --rounds such reads. Both engines' results are checked
equal. Prints the time of each and the ratio h5py / h5tile (above 1: h5tile is faster). Uses the
package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/fancy_read.py [--size 4096] [--chunk 256] [--picks 200] [--density 0.01]
                                [--rounds 5] [--cold] [--dir DIR]
"""
import argparse
import os
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from common import drop_caches, median_of, use_package

use_package()
import h5tile  # noqa: E402


def write(path: Path, size: int, chunk: int) -> None:
    """A smooth field plus noise (compresses about 2x with gzip 4 + shuffle)."""
    y = np.linspace(0, 8 * np.pi, size, dtype=np.float32)[:, None]
    x = np.linspace(0, 8 * np.pi, size, dtype=np.float32)[None, :]
    data = np.sin(y) * np.cos(x) + np.random.default_rng(0).normal(0, 0.01, (size, size)).astype(np.float32)
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=data, chunks=(chunk, chunk), compression="gzip", compression_opts=4,
                         shuffle=True)


def selections(size: int, picks: int, density: float) -> dict:
    rng = np.random.default_rng(1)
    rows = np.sort(rng.choice(size, picks, replace=False)).tolist()
    cols = np.sort(rng.choice(size, picks, replace=False)).tolist()
    y, x = np.ogrid[:size, :size]
    disk = (y - size * 0.3) ** 2 + (x - size * 0.6) ** 2 < (size / 8) ** 2
    half = slice(size // 4, 3 * size // 4)
    return {"box": (half, half), "rows": (rows, slice(None)), "cols": (slice(None), cols), "mask": rng.random((size, size)) < density,
            "disk": disk}


def timed(read, rounds: int, cold: bool) -> float:
    """The median seconds of `rounds` reads: warm after one untimed read, cold each after the
    page cache was dropped."""
    return median_of(rounds, read, warm_up=not cold, before=drop_caches if cold else None)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=4096, help="rows and columns of the dataset")
    p.add_argument("--chunk", type=int, default=256, help="rows and columns of a chunk")
    p.add_argument("--picks", type=int, default=200, help="rows (columns) the lists pick")
    p.add_argument("--density", type=float, default=0.01, help="the random mask's share of Trues")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--cold", action="store_true", help="drop the page cache before each read (root)")
    p.add_argument("--dir", default=None, help="where the file goes (default: a temporary folder, removed)")
    a = p.parse_args()
    if a.cold and os.geteuid() != 0:
        p.error("--cold drops the page cache: run as root")
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        path = Path(tmp) / "fancy.h5"
        write(path, a.size, a.chunk)
        time.sleep(2.5)
        print(f"{a.size} x {a.size} float32, chunks {a.chunk} x {a.chunk}, gzip 4 + shuffle "
              f"({path.stat().st_size / 2**20:.0f} MiB on disk), {'cold' if a.cold else 'warm'}, "
              f"{h5tile.settings.threads()} threads, median of {a.rounds}")
        print(f"{'selection':<10} {'result':>14} {'h5py ms':>9} {'h5tile ms':>10} {'h5py/h5tile':>12}")
        with h5py.File(path, "r") as ref, h5tile.File(path) as f:
            for name, key in selections(a.size, a.picks, a.density).items():
                expected, got = ref["x"][key], f["x"][key]
                if not (expected.dtype == got.dtype and np.array_equal(expected, got)):
                    raise SystemExit(f"{name}: h5tile read other values than h5py")
                h5py_s = timed(lambda: ref["x"][key], a.rounds, a.cold)
                h5tile_s = timed(lambda: f["x"][key], a.rounds, a.cold)
                shape = "x".join(map(str, expected.shape))
                print(f"{name:<10} {shape:>14} {h5py_s * 1e3:9.1f} {h5tile_s * 1e3:10.1f} {h5py_s / h5tile_s:12.2f}")


if __name__ == "__main__":
    main()
