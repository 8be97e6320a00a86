#!/usr/bin/env python3
"""Listing a file of many objects, h5py against h5tile.File (issue 40's "listing a file of 10,000
objects and their attributes >= 1x h5py"), on one file that h5py writes: --groups groups, each
holding --per-group small datasets with two attributes each (10,000 objects by default), plus a
soft link per group.

Cases, each timed from opening the file to the last name or value, in a fresh File each round:

- keys:      ``list(f["g0007"].keys())``: one group's names (what a browser shows first)
- walk:      ``f.visit(names.append)``: every object's name
- walk+attrs: ``f.visititems(...)`` reading every object's attributes (``dict(obj.attrs)``)

Warm page cache (the file was just written); the median of --rounds rounds. Prints each engine's
time and the ratio h5py / h5tile (above 1: h5tile is faster). Results are checked equal. Uses the
package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/listing.py [--groups 100] [--per-group 100] [--rounds 5] [--dir DIR]
"""
import argparse
import statistics
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from common import use_package

use_package()
import h5tile  # noqa: E402


def write(path: Path, groups: int, per_group: int) -> None:
    with h5py.File(path, "w") as f:
        for g in range(groups):
            group = f.create_group(f"g{g:04d}")
            group.attrs["index"] = g
            for d in range(per_group):
                ds = group.create_dataset(f"d{d:04d}", data=np.arange(4, dtype="i4") + d)
                ds.attrs["units"] = "m"
                ds.attrs["scale"] = 0.5 * d
            group["latest"] = h5py.SoftLink(f"/g{g:04d}/d0000")


def keys(module, path: Path):
    with module.File(path, "r") as f:
        return list(f["g0007"].keys())


def walk(module, path: Path):
    names = []
    with module.File(path, "r") as f:
        f.visit(names.append)
    return names


def walk_attrs(module, path: Path):
    seen = {}
    with module.File(path, "r") as f:
        f.visititems(lambda name, obj: seen.__setitem__(name, {k: np.asarray(v).tolist()
                                                                for k, v in obj.attrs.items()}))
    return seen


CASES = {"keys": keys, "walk": walk, "walk+attrs": walk_attrs}


def timed(case, module, path: Path, rounds: int):
    result, times = None, []
    for _ in range(rounds):
        start = time.perf_counter()
        result = case(module, path)
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=100, help="groups in the file (default 100)")
    parser.add_argument("--per-group", type=int, default=100, help="datasets per group (default 100)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per case; the median is shown (default 5)")
    parser.add_argument("--dir", help="folder for the file (default: a temporary folder, removed after)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "many.h5"
        write(path, args.groups, args.per_group)
        objects = args.groups * (args.per_group + 1)
        print(f"{objects} objects ({args.groups} groups of {args.per_group} datasets, 2 attributes each), "
              f"median of {args.rounds} rounds, warm page cache")
        print(f"{'case':<12} {'h5py ms':>9} {'h5tile ms':>10} {'h5py/h5tile':>12}")
        for name, case in CASES.items():
            expected, reference = timed(case, h5py, path, args.rounds)
            got, ours = timed(case, h5tile, path, args.rounds)
            if got != expected:
                raise SystemExit(f"{name}: h5tile's result differs from h5py's")
            print(f"{name:<12} {reference * 1e3:9.1f} {ours * 1e3:10.1f} {reference / ours:12.2f}")


if __name__ == "__main__":
    main()
