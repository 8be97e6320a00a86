#!/usr/bin/env python3
"""Writes of one Dask array (issue 29): ``h5tile.dask.to_file(x, path, "/x")`` (each block a tile
of h5tile's virtual layout, written by the task that holds it, one commit) against xarray's
``Dataset({"x": x}).to_netcdf(path, engine="h5netcdf")`` and ``engine="netcdf4"``, same data,
same run, Dask's threaded scheduler (one thread per core).

The data: float32 rows of 4096 (bench/common/netcdf_file.py's field, made in memory on every core
before the timings), a ``dask.array`` over that NumPy array, so that the writes, not the making
of the data, are timed; blocks of ``--block-mib`` MiB, by default 64 MiB or less where that
would give fewer than two blocks per core (2 GiB: 32 blocks; 256 MiB on 16 cores: 32 blocks of
8 MiB), whole numbers of 1 MiB chunks. Cases: uncompressed (``--gib``, default 2) and gzip 4 +
shuffle in chunks of 1 MiB (``--gzip-gib``, default 0.25: h5netcdf writes gzip at about 40 MB/s,
one chunk at a time); the peers get the same chunks and filters as encoding (``chunksizes``,
``zlib``, ``complevel``, ``shuffle``), h5tile writes its tiles with them (uncompressed tiles:
contiguous).

Durable, the same for all (default): h5tile's ``sync=True`` (its tiles and the file fsynced
before and at the commit), and each peer's file fsynced after ``to_netcdf`` returns, inside the
timing; ``--no-sync``: h5tile ``sync=False`` and no fsync (page cache only). After one small
untimed write by each writer, a round writes with every writer once, in an order rotated each
round; medians. After every write h5py reads the whole dataset back (slab by slab, outside the
timing) and it must equal the array, bit for bit; the output is then removed. Target (issue
29): h5tile >= 3x ``to_netcdf(engine="h5netcdf")`` on 16 cores.

    python3 bench/dask_write.py [--gib 2] [--gzip-gib 0.25] [--rounds 3] [--block-mib MIB]
        [--cases uncompressed,gzip] [--no-sync] [--time-limit SECONDS] [--dir FOLDER]
"""
import argparse
import concurrent.futures
import os
import shutil
import statistics
import tempfile
import time
import warnings

import numpy as np

from common import netcdf_file, use_package
from common.compressible import CHUNK, COLS

use_package()
import dask  # noqa: E402
import dask.array as da  # noqa: E402
import h5py  # noqa: E402
import xarray as xr  # noqa: E402

import h5tile.dask  # noqa: E402

WRITERS = ("h5tile", "h5netcdf", "netcdf4")
TARGET = 3.0  # x to_netcdf(engine="h5netcdf") on 16 cores


def field(gib):
    """The field of bench/common/netcdf_file.py in memory, its chunks made on every core."""
    rows = netcdf_file.rows_of(gib)
    array = np.empty((rows, COLS), np.float32)

    def fill(index):
        array[index * CHUNK[0]:(index + 1) * CHUNK[0]] = netcdf_file.chunk(index, rows)

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(fill, range(rows // CHUNK[0])))
    return array


def write(writer, x, path, gzip, sync):
    if writer == "h5tile":
        codec = {"compression": "gzip", "level": netcdf_file.LEVEL, "shuffle": True, "chunks": CHUNK} if gzip else {}
        h5tile.dask.to_file(x, path, "/x", sync=sync, **codec)
        return
    encoding = {"chunksizes": CHUNK}
    if gzip:
        encoding.update(zlib=True, complevel=netcdf_file.LEVEL, shuffle=True)
    xr.Dataset({"x": (("row", "col"), x)}).to_netcdf(path, engine=writer, encoding={"x": encoding})
    if sync:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def verify(path, array, gzip):
    """The dataset `x` of `path` read by h5py, slab by slab: equal to `array`, bit for bit."""
    slab = 16 * CHUNK[0]
    with h5py.File(path, "r") as f:
        d = f["x"]
        assert d.shape == array.shape and d.dtype == array.dtype, (path, d.shape, d.dtype)
        if gzip and d.is_virtual:
            with h5py.File(os.path.join(os.path.dirname(path), d.virtual_sources()[0].file_name), "r") as t:
                assert t[d.virtual_sources()[0].dset_name].compression == "gzip", "an h5tile tile is not gzip"
        elif gzip:
            assert d.compression == "gzip" and d.shuffle, (path, d.compression, d.shuffle)
        for r in range(0, array.shape[0], slab):
            assert np.array_equal(d[r:r + slab], array[r:r + slab]), f"{path}: rows {r}.. differ"


def remove(path):
    if os.path.exists(path):
        os.remove(path)
    shutil.rmtree(path + ".tiles", ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0, help="size of the uncompressed case in GiB (default 2)")
    parser.add_argument("--gzip-gib", type=float, default=0.25, help="size of the gzip case in GiB (default 0.25)")
    parser.add_argument("--rounds", type=int, default=3, help="writes by each writer (default 3)")
    parser.add_argument("--block-mib", type=int, default=None,
                        help="Dask blocks of the array in MiB (default: 64, or less to make two blocks per core)")
    parser.add_argument("--cases", default="uncompressed,gzip", help="uncompressed, gzip or both (default both)")
    parser.add_argument("--no-sync", action="store_true", help="no fsync: h5tile sync=False, the peers not fsynced")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="start no round that would end after this many seconds of a case, judged by the rounds "
                        "before (one round at least)")
    parser.add_argument("--dir", default=None, help="where the files are written (removed at the end)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    sync = not args.no_sync
    folder = tempfile.mkdtemp(prefix="h5tile-dask-write-", dir=args.dir)
    cores = os.cpu_count()
    print(f"float32, rows of {COLS}, threaded scheduler, {cores} cores, "
          f"{'fsync (durable)' if sync else 'no fsync'}, xarray {xr.__version__}, dask {dask.__version__}, "
          f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    summary = []
    try:
        # One small write by every writer first, untimed: the first call's costs (imports, pools).
        small = da.from_array(field(CHUNK[0] * 4 * COLS / (1 << 30)), chunks=CHUNK, name="bench-warm-up")
        with dask.config.set(scheduler="threads"):
            for writer in WRITERS:
                path = os.path.join(folder, f"warm-up-{writer}.h5")
                write(writer, small, path, True, sync)
                remove(path)
        for case in [c for c in args.cases.split(",") if c]:
            gzip = {"uncompressed": False, "gzip": True}[case]
            t0 = time.perf_counter()
            array = field(args.gzip_gib if gzip else args.gib)
            if args.block_mib is not None:
                block_rows = args.block_mib * (1 << 20) // (4 * COLS)
            else:  # 64 MiB, or less where that gives fewer than two blocks per core (the gzip case)
                block_rows = min(64 * (1 << 20) // (4 * COLS), array.shape[0] // (2 * cores))
            block_rows = max(CHUNK[0], block_rows // CHUNK[0] * CHUNK[0])
            x = da.from_array(array, chunks=(block_rows, COLS), name=f"bench-source-{case}")
            gib = array.nbytes / (1 << 30)
            print(f"-- {case}: {gib:.2f} GiB in {x.npartitions} blocks of {block_rows * 4 * COLS / (1 << 20):g} MiB, "
                  f"made in {time.perf_counter() - t0:.1f} s")
            times = {w: [] for w in WRITERS}
            with dask.config.set(scheduler="threads"):
                for _, writer in netcdf_file.rotated_rounds(WRITERS, args.rounds, args.time_limit):
                    path = os.path.join(folder, f"{writer}.{'h5' if writer == 'h5tile' else 'nc'}")
                    t0 = time.perf_counter()
                    write(writer, x, path, gzip, sync)
                    times[writer].append(time.perf_counter() - t0)
                    verify(path, array, gzip)
                    remove(path)
            median = {w: statistics.median(t) for w, t in times.items()}
            for w in WRITERS:
                print(f"   {w:9s} {median[w]:7.3f} s {gib / median[w]:6.2f} GiB/s  "
                      f"({', '.join(f'{v:.3f}' for v in times[w])}), read back equal by h5py")
            for peer in ("h5netcdf", "netcdf4"):
                ratio = median[peer] / median["h5tile"]
                line = (f"{case} writes{'' if sync else ' (no fsync)'}: h5tile.dask.to_file {ratio:5.2f}x "
                        f"to_netcdf(engine={peer!r})")
                if peer == "h5netcdf" and cores >= 16:
                    line += f" (target >= {TARGET}x on 16 cores: {'met' if ratio >= TARGET else 'NOT met'})"
                summary.append(line)
            del x, array
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print("== summary (medians; every write read back by h5py, equal bit for bit)")
    for line in summary:
        print(line)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
