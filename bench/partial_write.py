#!/usr/bin/env python3
"""Partial writes into an existing dataset, h5tile.File against h5py, one run on the same data:
`ds[rows] = x`, a box of BOX MiB written at an offset half a chunk in, so that the chunks at both
ends are read, merged and written back, into (1) a chunked dataset, gzip 4 + shuffle, chunks of
1 MiB (bench/common/compressible.py's field), and (2) a contiguous one (the disk, or the page
cache, is the limit: its rate is printed too). Each engine writes its own copy of the same file;
the page cache holds them (no fsync by either). Best of REPEATS after one warm-up; both files are
compared element by element after each case. Then appends as a logger makes them: APPENDS rows of
16 float64 added one call at a time (resize by one row, write it) to a dataset of unlimited rows in
chunks of 1024 rows, each engine in its own new file, timed once, compared after. Uses the package
in $H5TILE_BUILD_DIR/python.

    python3 bench/partial_write.py [--box MiB (256)] [--repeats 3] [--appends 10000] [--dir DIR]
"""
import argparse
import os
import shutil
import tempfile
import time

import h5py
import numpy as np

from common import best_of, use_package
from common.compressible import CHUNK, COLS, field

use_package()
import h5tile  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--box", type=int, default=256, help="MiB written by each write (default 256)")
    parser.add_argument("--repeats", type=int, default=3, help="timed writes of each engine (default 3)")
    parser.add_argument("--appends", type=int, default=10000, help="rows appended one call at a time (10000)")
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the files go (default $TMPDIR)")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="h5tile-partial-write-", dir=args.dir)
    try:
        run(args, folder)
        appends(args.appends, folder)
    finally:
        shutil.rmtree(folder)


def run(args, folder):
    box = field(args.box)
    rows = 2 * box.shape[0] + CHUNK[0]
    start = CHUNK[0] // 2  # half a chunk in: the first and last chunks are merged
    key = np.s_[start:start + box.shape[0]]
    print(f"{box.nbytes / 2**20:.0f} MiB float32 {box.shape} written at row {start} of ({rows}, {COLS}); "
          f"{os.cpu_count()} CPUs; page cache (no fsync)")
    print(f"{'dataset':34}{'h5py':>9}{'h5tile':>9}{'vs h5py':>9}{'h5tile GB/s':>13}")
    cases = {
        "chunked, gzip 4 + shuffle, 1 MiB": dict(chunks=CHUNK, compression="gzip", compression_opts=4, shuffle=True),
        "contiguous": {},
    }
    for name, options in cases.items():
        paths = {engine: os.path.join(folder, f"{engine}.h5") for engine in ("h5py", "h5tile")}
        with h5py.File(paths["h5py"], "w") as f:
            f.create_dataset("x", shape=(rows, COLS), dtype="f4", fillvalue=0.5, **options)
            f["x"][:box.shape[0]] = box  # stored chunks to merge with, and a fill value for the rest
        shutil.copy(paths["h5py"], paths["h5tile"])
        times = {}
        for engine, opener in (("h5py", h5py.File), ("h5tile", h5tile.File)):
            def write(opener=opener, path=paths[engine]):
                with opener(path, "a") as f:
                    f["x"][key] = box
            times[engine] = best_of(args.repeats, write)
        with h5py.File(paths["h5py"], "r") as a, h5py.File(paths["h5tile"], "r") as b:
            assert np.array_equal(a["x"][...], b["x"][...]), name
        print(f"{name:34}{times['h5py']:8.3f}s{times['h5tile']:8.3f}s{times['h5py'] / times['h5tile']:8.2f}x"
              f"{box.nbytes / times['h5tile'] / 1e9:13.2f}")



def appends(count, folder):
    row = np.arange(16, dtype="f8")
    times = {}
    for engine, opener in (("h5py", h5py.File), ("h5tile", h5tile.File)):
        path = os.path.join(folder, f"{engine}-log.h5")
        start = time.perf_counter()
        with opener(path, "w") as f:
            log = f.create_dataset("log", (0, 16), "f8", maxshape=(None, 16), chunks=(1024, 16))
            for i in range(count):
                log.resize(i + 1, axis=0)
                log[i] = row + i
        times[engine] = time.perf_counter() - start
    with h5py.File(os.path.join(folder, "h5py-log.h5"), "r") as a, h5py.File(os.path.join(folder, "h5tile-log.h5"),
                                                                          "r") as b:
        assert np.array_equal(a["log"][...], b["log"][...])
    print(f"{count} appends of one row{'':11}{times['h5py']:8.3f}s{times['h5tile']:8.3f}s"
          f"{times['h5py'] / times['h5tile']:8.2f}x{count / times['h5tile']:10.0f} rows/s")


if __name__ == "__main__":
    main()
