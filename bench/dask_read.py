#!/usr/bin/env python3
"""Dask reductions over one HDF5 file (issue 29): ``dask.array.from_array(h5py dataset).mean()``
against ``h5tile.dask.from_file(...).mean()``, same file, same run, Dask's threaded scheduler
(one thread per core), warm page cache. Float32 (bench/common/compressible.py's field: a smooth field
plus noise, rows of 4096), chunks of 1 MiB, uncompressed and gzip 4 + shuffle, both written by
h5py. Both Dask arrays take their default blocks (multiples of the file's chunks, up to Dask's
``array.chunk-size``). Best of 3 after one warm-up; the two means must agree.

    python3 bench/dask_read.py [--mib 2048] [--dir FOLDER (default: the temporary folder)]
"""
import argparse
import os
import shutil
import tempfile

import h5py
import numpy as np

from common import best_of, use_package
from common.compressible import CHUNK, COLS

use_package()
import dask  # noqa: E402
import dask.array as da  # noqa: E402

import h5tile.dask  # noqa: E402

SLAB_MIB = 64


def write(path, mib, **create):
    """The field of bench/common/compressible.py, written slab by slab (memory stays at a slab)."""
    rows = mib * (1 << 20) // (4 * COLS)
    slab = SLAB_MIB * (1 << 20) // (4 * COLS)
    x = np.linspace(0, 8 * np.pi, COLS, dtype=np.float32)[None, :]
    q = np.float32(2.0**-12)
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", (rows, COLS), "f4", chunks=CHUNK, **create)
        for r in range(0, rows, slab):
            n = min(slab, rows - r)
            y = (np.arange(r, r + n, dtype=np.float64) * (8 * np.pi / max(rows - 1, 1))).astype(np.float32)[:, None]
            noise = rng.normal(0, 0.01, (n, COLS)).astype(np.float32)
            d[r:r + n] = np.round((np.sin(y) * np.cos(x) + noise) / q) * q


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=2048, help="size of each file in MiB (default 2048)")
    parser.add_argument("--dir", default=None, help="where the files are written (removed at the end)")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="h5tile-dask-read-", dir=args.dir)
    cases = {"uncompressed": {}, "gzip 4 + shuffle": {"compression": "gzip", "compression_opts": 4, "shuffle": True}}
    print(f"{args.mib} MiB float32, chunks {CHUNK} (1 MiB), threaded scheduler, {os.cpu_count()} cores, "
          f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    try:
        for case, create in cases.items():
            path = os.path.join(folder, "x.h5")
            write(path, args.mib, **create)
            with h5py.File(path, "r") as f:
                ds = f["x"]
                ref = da.from_array(ds)
                ours = h5tile.dask.from_file(path, "/x")
                means = {}

                def run(name, array):
                    means[name] = float(array.mean(dtype=np.float64).compute(scheduler="threads"))

                t_h5py = best_of(3, lambda: run("h5py", ref))
                t_ours = best_of(3, lambda: run("h5tile", ours))
            assert abs(means["h5py"] - means["h5tile"]) <= 1e-9 * max(1.0, abs(means["h5py"])), means
            gib = args.mib / 1024
            print(f"{case:18s} blocks {ref.chunksize} / {ours.chunksize}: "
                  f"h5py+from_array {t_h5py:6.2f} s ({gib / t_h5py:5.2f} GiB/s), "
                  f"h5tile.dask {t_ours:6.2f} s ({gib / t_ours:5.2f} GiB/s): {t_h5py / t_ours:4.2f}x")
            os.remove(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
