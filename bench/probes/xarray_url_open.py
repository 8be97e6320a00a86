#!/usr/bin/env python3
# Decided (CPU machine, 2 cores, 2026-12-02): the xarray backend reads a file's catalog (every description and attribute) from one open for each kind, since over a URL an open of each object fetched more bytes than the file holds; numbers in BENCHMARKS.md.
"""xr.open_dataset(url, engine="h5tile", chunks={}) of a netCDF-4 file written by netCDF4-python
(13 variables, 10 of them 50 MiB of gzip chunks) served by nginx (Debian's, on loopback), then one
variable's mean: requests and bytes nginx sent for each, against the file's size, and seconds.
The file is made with a modification time 100 s back (its datasets are kept open). Uses the
package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/probes/xarray_url_open.py
"""
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))  # the tests' nginx helper
sys.path.insert(0, str(ROOT / os.environ.get("H5TILE_BUILD_DIR", "build") / "python"))
import netCDF4  # noqa: E402
import xarray as xr  # noqa: E402
from servers.nginx import Nginx, executable  # noqa: E402


def served(server, before):
    lines = server.requests()[before:]
    return len(lines), sum(int(line.split('"')[2].split()[1]) for line in lines) / 2**20


def main():
    if executable() is None:
        sys.exit("nginx is not installed (scripts/install_deps.sh installs it)")
    with tempfile.TemporaryDirectory(prefix="h5tile-xarray-url-") as tmp:
        work = pathlib.Path(tmp)
        root = work / "www"
        root.mkdir()
        path = root / "f.nc"
        expected = {}
        with netCDF4.Dataset(path, "w") as f:
            f.createDimension("t", 100)
            f.createDimension("y", 256)
            f.createDimension("x", 512)
            for name in ("t", "y", "x"):
                f.createVariable(name, "f8", (name,))[:] = np.arange(len(f.dimensions[name]))
            for i in range(10):
                v = f.createVariable(f"v{i}", "f4", ("t", "y", "x"), zlib=True, chunksizes=(10, 256, 512))
                v.units = "K"
                data = np.random.default_rng(i).random((100, 256, 512), dtype=np.float32)
                v[:] = data
                expected[f"v{i}"] = float(data.mean(dtype=np.float64))
        stamp = time.time() - 100
        os.utime(path, (stamp, stamp))
        size = path.stat().st_size / 2**20
        server = Nginx(root, work / "nginx").start()
        try:
            start = time.perf_counter()
            ds = xr.open_dataset(f"{server.url}/f.nc", engine="h5tile", chunks={})
            seconds = time.perf_counter() - start
            requests, mib = served(server, 0)
            print(f"open_dataset: {requests} requests, {mib:.1f} MiB sent for a {size:.0f} MiB file, {seconds:.2f} s")
            before = len(server.requests())
            start = time.perf_counter()
            mean = float(ds["v3"].mean().compute())
            seconds = time.perf_counter() - start
            requests, mib = served(server, before)
            if not np.isclose(mean, expected["v3"], rtol=1e-6):
                sys.exit(f"v3's mean {mean} differs from numpy's {expected['v3']}")
            print(f"v3.mean(): {requests} requests, {mib:.1f} MiB sent, {seconds:.2f} s")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
