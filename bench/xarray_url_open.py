#!/usr/bin/env python3
"""``xr.open_dataset(url, engine="h5tile")`` of a netCDF-4 file of 22 variables served by nginx
(Debian's, on loopback; issue 42: <= 2 opens and <= 6 requests): the requests nginx served for
the open, the opens among them (requests for the object's first bytes: each open of the object
fetches its first block) and the bytes sent, beside ``engine="h5netcdf"`` over fsspec's HTTP
file system where it is installed (aiohttp). Each open is checked: the Dataset equal to
``engine="h5netcdf"``'s of the same file on disk (values of every variable).

    python3 bench/xarray_url_open.py [--rounds 3] [--dir FOLDER (default: the temporary folder)]
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time
import warnings

import numpy as np

from common import use_package
from common.nginx_folder import NginxFolder, nginx_binary

use_package()
import netCDF4  # noqa: E402
import xarray as xr  # noqa: E402

import h5tile.xarray  # noqa: E402,F401
from h5tile.xarray import H5tileBackendEntrypoint  # noqa: E402

TARGET_OPENS, TARGET_REQUESTS = 2, 6


def make(path):
    """22 variables: 3 coordinates, 16 gzip variables (t, y, x) of 4 MiB, 3 small ones."""
    with netCDF4.Dataset(path, "w") as f:
        f.title = "22 variables"
        for name, size in (("t", 16), ("y", 256), ("x", 256)):
            f.createDimension(name, size)
            f.createVariable(name, "f8", (name,))[:] = np.arange(size)
        for i in range(16):
            v = f.createVariable(f"v{i:02d}", "f4", ("t", "y", "x"), zlib=True, chunksizes=(4, 256, 256))
            v.units, v.long_name = "K", f"variable {i}"
            v[:] = np.random.default_rng(i).random((16, 256, 256), dtype=np.float32)
        for name in ("mask", "area", "level"):
            f.createVariable(name, "i4", ("y",))[:] = np.arange(256)


def counted(web, before, run):
    start = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - start
    ranges = web.ranges()[before:]
    opens = sum(1 for r, _ in ranges if r.startswith("bytes=0-"))
    return result, seconds, len(ranges), opens, sum(b for _, b in ranges) / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    if nginx_binary() is None:
        raise SystemExit("nginx is not installed (scripts/install_deps.sh installs it)")
    warnings.simplefilter("ignore", UserWarning)
    folder = tempfile.mkdtemp(prefix="h5tile-xarray-url-", dir=args.dir)
    try:
        root = os.path.join(folder, "www")
        os.mkdir(root)
        path = os.path.join(root, "f.nc")
        make(path)
        stamp = time.time() - 100  # not modified in the last 2 s: kept opens are allowed
        os.utime(path, (stamp, stamp))
        with xr.open_dataset(path, engine="h5netcdf") as local:
            expected = local.load()
        engines = {"h5tile": H5tileBackendEntrypoint}
        try:
            import aiohttp  # noqa: F401  (fsspec's HTTP file system)
            engines["h5netcdf"] = "h5netcdf"
        except ImportError:
            print("engine=h5netcdf over HTTP: skipped (aiohttp, fsspec's HTTP client, is not installed)")
        print(f"{os.path.getsize(path) / 2**20:.1f} MiB netCDF-4 file, {len(expected.variables)} variables, "
              f"nginx on loopback")
        with NginxFolder(root, os.path.join(folder, "nginx")) as web:
            url = web.url("f.nc")
            summary = []
            for name, engine in engines.items():
                rows = []
                for _ in range(args.rounds):
                    ds, seconds, requests, opens, mib = counted(
                        web, len(web.ranges()), lambda: xr.open_dataset(url, engine=engine))
                    rows.append((seconds, requests, opens, mib))
                    xr.testing.assert_identical(ds.load(), expected)
                    ds.close()
                seconds = statistics.median(r[0] for r in rows)
                _, requests, opens, mib = rows[-1]
                print(f"   open_dataset engine={name:9s} {requests:3d} requests, {opens} opens, {mib:6.1f} MiB sent, "
                      f"{seconds:.3f} s (median of {args.rounds})")
                if name == "h5tile":
                    met = opens <= TARGET_OPENS and requests <= TARGET_REQUESTS
                    summary.append(f"engine=h5tile: {opens} opens, {requests} requests (target <= {TARGET_OPENS} "
                                   f"and <= {TARGET_REQUESTS}: {'met' if met else 'NOT met'})")
        print("== summary (every open's Dataset identical to h5netcdf's of the file on disk, loaded)")
        for line in summary:
            print(line)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
