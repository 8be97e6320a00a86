#!/usr/bin/env python3
"""xarray reductions over one netCDF-4 file (issue 29):
``xr.open_dataset(path, engine=E, chunks={})["x"].mean().compute()`` for E in h5tile, h5netcdf
and netcdf4, same file, same run, Dask's threaded scheduler (one thread per core), warm page
cache. Float32 (bench/compressible.py's field: a smooth field plus noise, rows of 4096), chunks
of 1 MiB, uncompressed and zlib 4 + shuffle, written by netCDF4-python. chunks={} gives each
engine the file's chunks as Dask blocks. Each timed run opens the file anew; the engines take
turns (rotated, so none always runs first); medians of the runs after one warm-up each, and
the three means must agree.

    python3 bench/xarray_read.py [--mib 256] [--runs 5] [--dir FOLDER (default: the temporary folder)]
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

from compressible import CHUNK, COLS, PACKAGE

sys.path.insert(0, PACKAGE)
import netCDF4  # noqa: E402
import xarray as xr  # noqa: E402

from h5tile.xarray import H5tileBackendEntrypoint  # noqa: E402

SLAB_MIB = 64
ENGINES = ("h5tile", "h5netcdf", "netcdf4")


def write(path, mib, **create):
    """The field of bench/compressible.py, written slab by slab (memory stays at a slab)."""
    rows = mib * (1 << 20) // (4 * COLS)
    slab = SLAB_MIB * (1 << 20) // (4 * COLS)
    x = np.linspace(0, 8 * np.pi, COLS, dtype=np.float32)[None, :]
    q = np.float32(2.0**-12)
    rng = np.random.default_rng(0)
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.createDimension("row", rows)
        nc.createDimension("col", COLS)
        d = nc.createVariable("x", "f4", ("row", "col"), chunksizes=CHUNK, **create)
        for r in range(0, rows, slab):
            n = min(slab, rows - r)
            y = (np.arange(r, r + n, dtype=np.float64) * (8 * np.pi / max(rows - 1, 1))).astype(np.float32)[:, None]
            noise = rng.normal(0, 0.01, (n, COLS)).astype(np.float32)
            d[r:r + n] = np.round((np.sin(y) * np.cos(x) + noise) / q) * q


def mean_of(path, engine):
    # Installed, h5tile is engine="h5tile" (its entry point); from a build tree, the class itself.
    chosen = H5tileBackendEntrypoint if engine == "h5tile" and "h5tile" not in xr.backends.list_engines() else engine
    with xr.open_dataset(path, engine=chosen, chunks={}) as ds:
        return float(ds["x"].mean(dtype=np.float64).compute(scheduler="threads"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256, help="size of the variable in MiB (default 256)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each engine (default 5)")
    parser.add_argument("--dir", default=None, help="where the files are written (removed at the end)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)  # h5netcdf's note on its phony_dims default
    folder = tempfile.mkdtemp(prefix="h5tile-xarray-read-", dir=args.dir)
    cases = {"uncompressed": {}, "zlib 4 + shuffle": {"zlib": True, "complevel": 4, "shuffle": True}}
    print(f"{args.mib} MiB float32, chunks {CHUNK} (1 MiB), chunks={{}}, threaded scheduler, {os.cpu_count()} cores, "
          f"xarray {xr.__version__}, load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    try:
        for case, create in cases.items():
            path = os.path.join(folder, "x.nc")
            write(path, args.mib, **create)
            means = {e: mean_of(path, e) for e in ENGINES}  # warm-up (and the page cache)
            times = {e: [] for e in ENGINES}
            for run in range(args.runs):
                for engine in ENGINES[run % 3:] + ENGINES[:run % 3]:
                    t0 = time.perf_counter()
                    means[engine] = mean_of(path, engine)
                    times[engine].append(time.perf_counter() - t0)
            assert max(means.values()) - min(means.values()) <= 1e-9 * max(1.0, abs(means["h5netcdf"])), means
            median = {e: statistics.median(t) for e, t in times.items()}
            gib = args.mib / 1024
            print(f"{case:17s} " + ", ".join(f"{e} {median[e]:6.3f} s ({gib / median[e]:5.2f} GiB/s)" for e in ENGINES)
                  + f": h5tile {median['h5netcdf'] / median['h5tile']:4.2f}x h5netcdf, "
                  f"{median['netcdf4'] / median['h5tile']:4.2f}x netcdf4")
            os.remove(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
