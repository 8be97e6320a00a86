#!/usr/bin/env python3
"""xarray and Dask reductions over one netCDF-4 file (issue 29), same file, same run, warm page
cache:

- ``xr.open_dataset(path, engine=E, chunks={})["x"].mean().compute()`` for E in h5tile, h5netcdf
  and netcdf4, on Dask's threaded scheduler (one thread per core) and on a
  ``dask.distributed.LocalCluster`` of worker processes;
- ``dask.array.from_array(h5py dataset).mean()`` against ``h5tile.dask.from_file(...).mean()``
  (threaded scheduler only: an open h5py dataset does not pickle to worker processes), both with
  their default blocks (Dask's ``array.chunk-size`` in multiples of the file's chunks).

The LocalCluster has one worker process per core, one thread each (``threads_per_worker=1``), the
same for every engine: HDF5's global lock is per process, so for h5netcdf and netCDF4 worker
processes are the only way to decode on every core, and a second thread in a worker would only
wait on that lock; h5tile gets the same cores. The cluster starts once, before the timings, and
every worker imports the engines first (its start and those imports are not timed).

The file (bench/common/netcdf_file.py): float32 ``x(row, col)``, rows of 4096, chunks of 1 MiB,
uncompressed or gzip (zlib) 4 + shuffle, created by netCDF4-python (dimension scales, netCDF-C's
attributes) and filled by h5py's ``write_direct_chunk`` with chunks made and compressed on every
core; ``chunks={}`` gives each engine the file's chunks as Dask blocks. Each timed run opens the
file anew. A round runs every row once, in an order rotated each round (none always runs first);
medians over the rounds (the slow peers, the threaded h5netcdf / netcdf4 / h5py rows of the gzip
case, run only the first ``--peer-rounds``; ``--time-limit`` starts no round that would end after
that many seconds of the case, judged by the rounds before; one round at least). Checks: every
run's mean equal to the first's (np.allclose, rtol and atol 1e-9), and for every engine one chunk
read through it equal, bit for bit, to the chunk made again. Targets (issue 29) on 16 cores:
gzip >= 5x engine="h5netcdf", uncompressed >= 3x (on 2 cores: gzip >= 1.8x); printed met / not
met for both schedulers.

    python3 bench/xarray_read.py [--gib 2] [--rounds 3] [--peer-rounds N] [--cases uncompressed,gzip]
        [--schedulers threads,cluster] [--time-limit SECONDS] [--dir FOLDER (default: the temporary folder)]
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

import h5tile.dask  # noqa: E402
from h5tile.xarray import H5tileBackendEntrypoint  # noqa: E402

ENGINES = ("h5tile", "h5netcdf", "netcdf4")
CASES = {"uncompressed": False, "gzip": True}
TARGETS = {"uncompressed": 3.0, "gzip": 5.0}  # x engine="h5netcdf" on 16 cores
TARGET_2_CORES = {"gzip": 1.8}


def engine_of(engine):
    # Installed, h5tile is engine="h5tile" (its entry point); from a build tree, the class itself.
    if engine == "h5tile" and "h5tile" not in xr.backends.list_engines():
        return H5tileBackendEntrypoint
    return engine


def xarray_mean(path, engine, scheduler):
    with xr.open_dataset(path, engine=engine_of(engine), chunks={}) as ds:
        return float(ds["x"].mean(dtype=np.float64).compute(scheduler=scheduler))


def dask_mean(path, reader):
    if reader == "h5py":
        with h5py.File(path, "r") as f:
            return float(da.from_array(f["x"]).mean(dtype=np.float64).compute(scheduler="threads"))
    return float(h5tile.dask.from_file(path, "/x").mean(dtype=np.float64).compute(scheduler="threads"))


def check_blocks(path, rows):
    """One chunk (the middle one) read through every engine and reader, equal to the chunk made again."""
    index = rows // CHUNK[0] // 2
    want = netcdf_file.chunk(index, rows)
    box = slice(index * CHUNK[0], (index + 1) * CHUNK[0])
    got = {}
    for engine in ENGINES:
        with xr.open_dataset(path, engine=engine_of(engine), chunks={}) as ds:
            got[engine] = ds["x"][box].values
    with h5py.File(path, "r") as f:
        got["h5py"] = da.from_array(f["x"])[box].compute(scheduler="threads")
    got["h5tile.dask"] = h5tile.dask.from_file(path, "/x")[box].compute(scheduler="threads")
    for name, block in got.items():
        assert block.dtype == want.dtype and np.array_equal(block, want), f"{name} read another chunk {index}"


def warm_workers():
    """Run in every worker: the imports of every engine, outside the timings."""
    import h5netcdf  # noqa: F401
    import netCDF4  # noqa: F401
    import xarray  # noqa: F401

    import h5tile.dask  # noqa: F401
    import h5tile.xarray  # noqa: F401
    return os.getpid()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0, help="size of the variable in GiB (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every row (default 3)")
    parser.add_argument("--peer-rounds", type=int, default=None,
                        help="rounds of the slow rows (threaded h5netcdf, netcdf4, h5py on gzip; default --rounds)")
    parser.add_argument("--cases", default="uncompressed,gzip", help="uncompressed, gzip or both (default both)")
    parser.add_argument("--schedulers", default="threads,cluster", help="threads, cluster or both (default both)")
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="LocalCluster processes (default: cores)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="start no round that would end after this many seconds of a case, judged by the rounds "
                        "before (one round at least)")
    parser.add_argument("--dir", default=None, help="where the files are written (removed at the end)")
    args = parser.parse_args()
    peer_rounds = args.rounds if args.peer_rounds is None else min(args.peer_rounds, args.rounds)
    cases = [c for c in args.cases.split(",") if c]
    schedulers = [s for s in args.schedulers.split(",") if s]
    assert set(cases) <= set(CASES) and set(schedulers) <= {"threads", "cluster"}, (cases, schedulers)
    warnings.simplefilter("ignore", UserWarning)  # h5netcdf's note on its phony_dims default
    folder = tempfile.mkdtemp(prefix="h5tile-xarray-read-", dir=args.dir)
    cores = os.cpu_count()
    print(f"{args.gib:g} GiB float32, chunks {CHUNK} (1 MiB), chunks={{}}, {cores} cores, xarray {xr.__version__}, "
          f"dask {dask.__version__}, load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    client = cluster = None
    summary = []
    try:
        if "cluster" in schedulers:
            from distributed import Client, LocalCluster
            t0 = time.perf_counter()
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster, set_as_default=False)
            pids = client.run(warm_workers)
            print(f"LocalCluster: {len(pids)} worker processes x 1 thread, started in {time.perf_counter() - t0:.1f} s")
        for case in cases:
            gzip = CASES[case]
            path = os.path.join(folder, "x.nc")
            t0 = time.perf_counter()
            rows = netcdf_file.write(path, args.gib, gzip)
            print(f"-- {case}: {netcdf_file.describe(path)}, made in {time.perf_counter() - t0:.1f} s")
            check_blocks(path, rows)
            runs = {}  # label: (function, slow)
            for scheduler in schedulers:
                for engine in ENGINES:
                    label = f"xarray {engine} {scheduler}"
                    how = "threads" if scheduler == "threads" else client
                    runs[label] = ((lambda e=engine, s=how: xarray_mean(path, e, s)),
                                   gzip and scheduler == "threads" and engine != "h5tile")
            for reader in ("h5py", "h5tile.dask"):
                runs[f"dask {reader} threads"] = ((lambda r=reader: dask_mean(path, r)), gzip and reader == "h5py")
            labels = list(runs)
            times = {label: [] for label in labels}
            means = {}
            for round_, label in netcdf_file.rotated_rounds(labels, args.rounds, args.time_limit):
                run, slow = runs[label]
                if slow and round_ >= peer_rounds:
                    continue
                t0 = time.perf_counter()
                means[label] = run()
                times[label].append(time.perf_counter() - t0)
            first = means[labels[0]]
            assert all(np.allclose(m, first, rtol=1e-9, atol=1e-9) for m in means.values()), means
            median = {label: statistics.median(t) for label, t in times.items() if t}
            gib = rows * 4 * CHUNK[1] / (1 << 30)
            for label in labels:
                if label in median:
                    t = times[label]
                    print(f"   {label:26s} {median[label]:7.3f} s {gib / median[label]:6.2f} GiB/s  "
                          f"({', '.join(f'{v:.3f}' for v in t)}) mean {means[label]:.9g}")
            for scheduler in schedulers:
                ours = median[f"xarray h5tile {scheduler}"]
                for peer in ("h5netcdf", "netcdf4"):
                    ratio = median[f"xarray {peer} {scheduler}"] / ours
                    line = f"{case} {scheduler}: engine=h5tile {ratio:5.2f}x engine={peer}"
                    if peer == "h5netcdf":
                        target = TARGETS[case] if cores >= 16 else TARGET_2_CORES.get(case) if cores <= 2 else None
                        if target is not None:
                            line += f" (target >= {target}x on {16 if cores >= 16 else 2} cores: " \
                                    f"{'met' if ratio >= target else 'NOT met'})"
                    summary.append(line)
            if "dask h5py threads" in median:
                ratio = median["dask h5py threads"] / median["dask h5tile.dask threads"]
                summary.append(f"{case} threads: h5tile.dask.from_file {ratio:5.2f}x da.from_array(h5py)")
            os.remove(path)
    finally:
        if client is not None:
            client.close()
            cluster.close()
        shutil.rmtree(folder, ignore_errors=True)
    print("== summary (medians; all means equal, one chunk per engine equal bit for bit)")
    for line in summary:
        print(line)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
