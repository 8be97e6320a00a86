#!/usr/bin/env python3
"""``ds.to_netcdf(path, engine=E)`` of one Dask-backed Dataset (issue 42), E in h5tile, h5netcdf
and netcdf4, same data, same run, Dask's threaded scheduler (one thread per core):

- gzip: ``x(row, col)`` float32, encoding zlib level 4 + shuffle, chunks of 1 MiB
  (bench/common/compressible.py's CHUNK), Dask blocks of 16 chunks;
- uncompressed: the same variable, chunked the same, no filter.

The values (bench/common/netcdf_file.py's field, compressing about 2.7x with gzip + shuffle) are
made once in memory before the timings and wrapped with ``dask.array.from_array``: a write's time
is xarray's encoding, the engine's compression and its writes, not the making of the data. Each
timed run writes a new file (removed after it) and ends when ``to_netcdf`` returns (the file
closed, no fsync: the page cache holds what the disk has not). A round runs every engine once,
in an order rotated each round; medians over the rounds (``--time-limit`` starts no round that
would end after that many seconds of a case, one round at least). Check: every engine's file
read back whole through h5py equal, bit for bit, to the data. Targets (issue 42): gzip >= 5x
engine="h5netcdf" on 16 cores, >= 1.8x on 2 cores; uncompressed >= 2x; printed met / not met.

    python3 bench/xarray_write.py [--gib 1] [--rounds 3] [--cases gzip,uncompressed]
        [--time-limit SECONDS] [--dir FOLDER (default: the temporary folder)]
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time
import warnings

import numpy as np

from common import netcdf_file, use_package
from common.compressible import CHUNK

use_package()
import dask  # noqa: E402
import dask.array as da  # noqa: E402
import h5py  # noqa: E402
import xarray as xr  # noqa: E402

import h5tile.xarray  # noqa: E402,F401  (registers engine="h5tile" for to_netcdf)

ENGINES = ("h5tile", "h5netcdf", "netcdf4")
TARGETS = {"gzip": {16: 5.0, 2: 1.8}, "uncompressed": {16: 2.0, 2: 2.0}}
BLOCK_CHUNKS = 16


def dataset(gib):
    rows = netcdf_file.rows_of(gib)
    data = np.concatenate([netcdf_file.chunk(i, rows) for i in range(rows // CHUNK[0])])
    x = da.from_array(data, chunks=(CHUNK[0] * BLOCK_CHUNKS, CHUNK[1]))
    return xr.Dataset({"x": (("row", "col"), x, {"units": "1"})}), data


def encoding(case):
    if case == "gzip":
        return {"x": {"zlib": True, "complevel": netcdf_file.LEVEL, "shuffle": True, "chunksizes": CHUNK}}
    return {"x": {"chunksizes": CHUNK}}


def check(path, data, engine):
    with h5py.File(path, "r") as f:
        back = f["x"][()]
    assert back.dtype == data.dtype and np.array_equal(back, data), f"engine={engine} wrote other values"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of the variable in GiB (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every engine (default 3)")
    parser.add_argument("--cases", default="gzip,uncompressed", help="gzip, uncompressed or both (default both)")
    parser.add_argument("--engines", default=",".join(ENGINES), help=f"of {', '.join(ENGINES)} (default all)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="start no round that would end after this many seconds of a case, judged by the rounds "
                        "before (one round at least)")
    parser.add_argument("--dir", default=None, help="where the files are written (removed at the end)")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    engines = [e for e in args.engines.split(",") if e]
    assert set(cases) <= set(TARGETS) and set(engines) <= set(ENGINES) and "h5tile" in engines, (cases, engines)
    warnings.simplefilter("ignore", UserWarning)
    folder = tempfile.mkdtemp(prefix="h5tile-xarray-write-", dir=args.dir)
    cores = os.cpu_count()
    t0 = time.perf_counter()
    ds, data = dataset(args.gib)
    gib = data.nbytes / (1 << 30)
    print(f"{gib:g} GiB float32 x{data.shape}, chunks {CHUNK} (1 MiB), Dask blocks of {BLOCK_CHUNKS} chunks, "
          f"{cores} cores, threaded scheduler, xarray {xr.__version__}, dask {dask.__version__}; data made in "
          f"{time.perf_counter() - t0:.1f} s; load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    summary = []
    try:
        for case in cases:
            times = {engine: [] for engine in engines}
            for round_, engine in netcdf_file.rotated_rounds(engines, args.rounds, args.time_limit):
                path = os.path.join(folder, f"{engine}.nc")
                t0 = time.perf_counter()
                ds.to_netcdf(path, engine=engine, encoding=encoding(case))
                times[engine].append(time.perf_counter() - t0)
                if round_ == 0:
                    check(path, data, engine)
                    size = os.path.getsize(path)
                os.remove(path)
            median = {engine: statistics.median(t) for engine, t in times.items()}
            print(f"-- {case}: file of {size / (1 << 20):.0f} MiB")
            for engine in engines:
                print(f"   to_netcdf engine={engine:9s} {median[engine]:7.3f} s {gib / median[engine]:6.2f} GiB/s  "
                      f"({', '.join(f'{v:.3f}' for v in times[engine])})")
            for peer in engines[1:] if engines[0] == "h5tile" else [e for e in engines if e != "h5tile"]:
                ratio = median[peer] / median["h5tile"]
                line = f"{case}: engine=h5tile {ratio:5.2f}x engine={peer}"
                target = TARGETS[case].get(16 if cores >= 16 else 2 if cores <= 2 else 0)
                if peer == "h5netcdf" and target is not None:
                    line += f" (target >= {target}x on {16 if cores >= 16 else 2} cores: " \
                            f"{'met' if ratio >= target else 'NOT met'})"
                summary.append(line)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print("== summary (medians; every engine's file read back equal to the data, bit for bit)")
    for line in summary:
        print(line)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
