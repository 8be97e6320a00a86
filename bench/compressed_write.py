#!/usr/bin/env python3
"""Compressed writes, h5tile against h5py (+ hdf5plugin for zstd, lz4 and blosc), one run on the
same data: float32 (a smooth field plus noise, bench/common/compressible.py) in chunks of 1 MiB, for
gzip 4 + shuffle, zstd 3 + shuffle, lz4 + shuffle and blosc (lz4, level 5, its own shuffle).
h5py writes through HDF5's filter pipeline, one chunk at a time; h5tile's ranks compress their
own chunks on their workers (layout "chunked": one file; layout "virtual": one file per tile).
Neither flushes to disk (h5tile with sync=False): the page cache, so the compressors are what is
measured. Best of REPEATS writes after one warm-up; every file is read back with h5py and checked.
Uses the package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/compressed_write.py [MiB (default 512)] [ranks (default: all cores)]
"""
import argparse
import os
import shutil
import tempfile

import h5py
import hdf5plugin
import numpy as np

from common import best_of, use_package
from common.compressible import CHUNK, CODECS, field

use_package()
import h5tile  # noqa: E402

REPEATS = 2
FOLDER = os.path.join(tempfile.gettempdir(), "h5tile-compressed-write")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mib", nargs="?", type=int, default=512, help="size of the array (default 512)")
    parser.add_argument("ranks", nargs="?", type=int, default=0, help="h5tile's ranks (default 0: all cores)")
    args = parser.parse_args()
    mib, ranks = args.mib, args.ranks
    a = field(mib)
    os.makedirs(FOLDER, exist_ok=True)
    print(f"{a.nbytes / 2**20:.0f} MiB float32 {a.shape}, chunks {CHUNK} = 1 MiB, {os.cpu_count()} CPUs, "
          f"h5tile ranks {ranks or 'all cores'}, hdf5plugin {hdf5plugin.version}, page cache (no fsync)")
    print(f"{'codec':24}{'engine':22}{'time':>9}{'GB/s':>8}{'ratio':>8}{'vs h5py':>9}")
    for name, (ours, theirs) in CODECS.items():
        path = os.path.join(FOLDER, "h5py.h5")

        def h5py_write():
            with h5py.File(path, "w") as f:
                f.create_dataset("x", data=a, chunks=CHUNK, **theirs(hdf5plugin))

        h5py_s = best_of(REPEATS, h5py_write)
        ratio = a.nbytes / os.path.getsize(path)
        print(f"{name:24}{'h5py':22}{h5py_s:8.3f}s{a.nbytes / h5py_s / 1e9:8.2f}{ratio:7.2f}x{1:8.2f}x")
        for layout in ("chunked", "virtual"):
            path = os.path.join(FOLDER, f"h5tile-{layout}.h5")

            def h5tile_write():
                h5tile.to_file(a, path, "/x", layout=layout, ranks=ranks, chunks=CHUNK, sync=False,
                               keep_previous=False, **ours).wait()

            try:
                s = best_of(REPEATS, h5tile_write)
            except h5tile.InvalidArgumentError as e:  # a codec this h5tile was built without
                print(f"{'':24}{'h5tile ' + layout:22}  skipped: {e}")
                continue
            with h5py.File(path, "r") as f:
                assert np.array_equal(f["x"][...], a), (name, layout)
            stored = os.path.getsize(path) + sum(
                os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(path + ".tiles") for n in names)
            print(f"{'':24}{'h5tile ' + layout:22}{s:8.3f}s{a.nbytes / s / 1e9:8.2f}{a.nbytes / stored:7.2f}x"
                  f"{h5py_s / s:8.2f}x")
    shutil.rmtree(FOLDER)


if __name__ == "__main__":
    main()
