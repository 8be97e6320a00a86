#!/usr/bin/env python3
"""h5tile.legate.from_file against legate.io.hdf5.from_file, h5tile.from_file and h5py, in one
Legate process on the same file (warm page cache), and the cost of a launch of h5tile.legate's
point tasks on a tiny dataset (the per-task overhead). Each read: call + blocking fence +
np.asarray of the store (what a program that looks at the data pays); median of --repeat.
With --write-mib, also h5tile.legate.to_file against legate.io.hdf5.to_file and h5tile.to_file.

    LD_LIBRARY_PATH=build/no_gpu_driver LEGATE_AUTO_CONFIG=0 \\
    LEGATE_CONFIG="--cpus 2 --gpus 0 --sysmem 6000" python3 bench/legate_read.py --mib 2048
"""
import argparse
import os
import statistics
import sys
import time

import h5py  # before legate's libraries, as the tests do
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python"))
import h5tile  # noqa: E402
import h5tile.legate as hl  # noqa: E402
import legate.io.hdf5 as lh  # noqa: E402
from legate.core import LogicalArray, Type, get_legate_runtime  # noqa: E402


def timed(read, repeat):
    runtime = get_legate_runtime()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = read()
        runtime.issue_execution_fence(block=True)
        if isinstance(out, LogicalArray):
            np.asarray(out.data.get_physical_store())
        times.append(time.perf_counter() - t0)
        del out
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", default="/tmp/h5tile-legate-bench")
    parser.add_argument("--write-mib", type=int, default=0, help="also time writes of an array of this size")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, "x.h5")
    rows = args.mib * 2**20 // (4 * 1024)
    data = np.random.default_rng(0).random((rows, 1024), dtype=np.float32)
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=data)
        f.create_dataset("tiny", data=np.arange(2, dtype=np.float32))
    del data
    os.sync()  # the first read must not pay for writing the file back
    gb = rows * 1024 * 4 / 1e9
    print(f"{args.mib} MiB float32 ({rows} x 1024), contiguous, warm; LEGATE_CONFIG={os.environ.get('LEGATE_CONFIG')}")
    first = os.environ.get("H5TILE_BENCH_FIRST", "h5tile")
    legates = [("h5tile.legate.from_file", lambda: hl.from_file(path, "x")),
               ("legate.io.hdf5.from_file", lambda: lh.from_file(path, "x"))]
    cases = (legates if first == "h5tile" else legates[::-1]) + [
        ("h5tile.from_file (numpy)", lambda: h5tile.from_file(path, "x")),
        ("h5py [...]", lambda: h5py.File(path, "r")["x"][...]),
    ]
    for name, read in cases:
        times = timed(read, args.repeat)
        print(f"  {name:28s} first {times[0]:.3f} s, median of the rest {statistics.median(times[1:]):.3f} s"
              f" ({gb / statistics.median(times[1:]):.2f} GB/s)")
    for name, read in [("h5tile.legate tiny (2 tasks)", lambda: hl.from_file(path, "tiny")),
                       ("legate.io.hdf5 tiny", lambda: lh.from_file(path, "tiny"))]:
        times = timed(read, 50)
        print(f"  {name:28s} median {statistics.median(times[5:]) * 1e3:.2f} ms per read + fence")
    if args.write_mib:
        write_cases(args)


def write_cases(args):
    """Writes of one array held by Legate (to_file + blocking fence; each syncs to disk)."""
    rows = args.write_mib * 2**20 // (4 * 1024)
    data = np.random.default_rng(1).random((rows, 1024), dtype=np.float32)
    store = get_legate_runtime().create_store_from_buffer(Type.from_numpy_dtype(data.dtype), data.shape, data,
                                                          read_only=True)
    gb = data.nbytes / 1e9
    print(f"writes of {args.write_mib} MiB float32 from a Legate store")
    cases = [("h5tile.legate.to_file", lambda p: hl.to_file(store, p, "x")),
             ("h5tile.legate.to_file nosync", lambda p: hl.to_file(store, p, "x", sync=False)),
             ("legate.io.hdf5.to_file", lambda p: lh.to_file(store, p, "x")),
             ("h5tile.to_file (numpy)", lambda p: h5tile.to_file(data, p, "x").wait())]
    for name, write in cases:
        times = []
        for i in range(args.repeat):
            target = os.path.join(args.dir, f"w-{name.replace(' ', '-')}.h5")
            t0 = time.perf_counter()
            write(target)
            get_legate_runtime().issue_execution_fence(block=True)
            times.append(time.perf_counter() - t0)
        print(f"  {name:28s} median {statistics.median(times):.3f} s ({gb / statistics.median(times):.2f} GB/s), "
              f"all {', '.join(f'{t:.2f}' for t in times)}")


if __name__ == "__main__":
    main()
