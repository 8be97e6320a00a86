#!/usr/bin/env python3
"""A reduction on the GPU from one netCDF-4 file (issue 29), same file, same run, warm page
cache, Dask's threaded scheduler:

- ``h5tile.dask.from_file(path, "/x", device=0).mean()``: CuPy blocks read straight into device
  memory (default blocks: Dask's ``array.chunk-size`` in multiples of the file's chunks);
- the h5netcdf + CuPy path: ``xr.open_dataset(path, engine="h5netcdf", chunks={})["x"].data``
  (the file's 1 MiB chunks as blocks, read on the host through HDF5's lock), each block moved
  with ``map_blocks(cupy.asarray)``, then the mean on the GPU;
- for reference, the same with ``engine="h5tile"`` (``chunks={}``, ``map_blocks(cupy.asarray)``).

The file: bench/common/netcdf_file.py (float32 ``x(row, col)``, rows of 4096, chunks of 1 MiB; default
uncompressed, 8 GiB; ``--cases gzip`` for gzip 4 + shuffle). Rounds rotate the order of the rows;
medians. Checks: every mean equal to h5tile's host mean of the same file (np.allclose, rtol and
atol 1e-9), and one chunk read through the device path equal, bit for bit, to the chunk made
again. CuPy's kernels for the mean are compiled before the timed rows (a mean of 64 chunks, its
time printed), so that the first row does not pay for all. Target (issue 29): the h5tile path >= 5x
the h5netcdf + CuPy path. Without CuPy or a GPU
(or an h5tile built without CUDA) it prints why and exits 0.

    python3 bench/xarray_gpu.py [--gib 8] [--rounds 3] [--device 0] [--cases uncompressed,gzip]
        [--time-limit SECONDS] [--dir FOLDER]
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
from common.compressible import CHUNK

use_package()
import h5tile  # noqa: E402

TARGET = 5.0  # x the h5netcdf + CuPy path


def skip_reason(device):
    try:
        import cupy
    except ImportError as e:
        return f"no CuPy ({e})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - no driver, no device
        return f"no GPU ({type(e).__name__}: {e})"
    if count <= device:
        return f"no CUDA device {device} ({count} device(s))"
    if h5tile.cuda_device_count() <= device:
        return "this h5tile build has no CUDA (or sees no device): build with -DH5TILE_WITH_CUDA=ON"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=8.0, help="size of the variable in GiB (default 8)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every row (default 3)")
    parser.add_argument("--device", type=int, default=0, help="CUDA device ordinal (default 0)")
    parser.add_argument("--cases", default="uncompressed", help="uncompressed, gzip or both (default uncompressed)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="start no round that would end after this many seconds of a case, judged by the rounds "
                        "before (one round at least)")
    parser.add_argument("--dir", default=None, help="where the files are written (removed at the end)")
    args = parser.parse_args()
    reason = skip_reason(args.device)
    if reason is not None:
        print(f"bench/xarray_gpu.py: skipped: {reason}")
        print(f"== summary\nGPU mean: skipped: {reason}")
        return
    import cupy
    import dask
    import xarray as xr

    import h5tile.dask
    from common import netcdf_file
    from h5tile.xarray import H5tileBackendEntrypoint

    warnings.simplefilter("ignore", UserWarning)
    cupy.cuda.Device(args.device).use()
    meta = cupy.empty((0, 0), np.float32)

    def xarray_cupy(path, engine):
        chosen = engine
        if engine == "h5tile" and "h5tile" not in xr.backends.list_engines():
            chosen = H5tileBackendEntrypoint  # from a build tree: the class itself
        with xr.open_dataset(path, engine=chosen, chunks={}) as ds:
            blocks = ds["x"].data.map_blocks(cupy.asarray, dtype=np.float32, meta=meta)
            return float(blocks.mean(dtype=np.float64).compute(scheduler="threads"))

    def h5tile_device(path):
        x = h5tile.dask.from_file(path, "/x", device=args.device)
        return float(x.mean(dtype=np.float64).compute(scheduler="threads"))

    print(f"{args.gib:g} GiB float32, chunks {CHUNK} (1 MiB), device {args.device} "
          f"({cupy.cuda.runtime.getDeviceProperties(args.device)['name'].decode()}), {os.cpu_count()} cores, "
          f"threaded scheduler, cupy {cupy.__version__}, dask {dask.__version__}, xarray {xr.__version__}")
    folder = tempfile.mkdtemp(prefix="h5tile-xarray-gpu-", dir=args.dir)
    summary = []
    try:
        for case in [c for c in args.cases.split(",") if c]:
            gzip = {"uncompressed": False, "gzip": True}[case]
            path = os.path.join(folder, "x.nc")
            t0 = time.perf_counter()
            rows = netcdf_file.write(path, args.gib, gzip)
            print(f"-- {case}: {netcdf_file.describe(path)}, made in {time.perf_counter() - t0:.1f} s")
            host = float(h5tile.dask.from_file(path, "/x").mean(dtype=np.float64).compute(scheduler="threads"))
            index = rows // CHUNK[0] // 2
            x = h5tile.dask.from_file(path, "/x", device=args.device)
            block = x[index * CHUNK[0]:(index + 1) * CHUNK[0]].compute(scheduler="threads")
            assert isinstance(block, cupy.ndarray) and isinstance(x._meta, cupy.ndarray), type(block)
            assert np.array_equal(cupy.asnumpy(block), netcdf_file.chunk(index, rows)), "device chunk differs"
            # CuPy compiles the reduction's kernels at their first use (NVRTC, then its disk cache):
            # compiled here, on 64 blocks of one chunk (the same kernels as every path's mean and its
            # tree of partial means), so that the first timed row does not pay for the others.
            t0 = time.perf_counter()
            warm = h5tile.dask.from_file(path, "/x", chunks=CHUNK, device=args.device)[:64 * CHUNK[0]]
            float(warm.mean(dtype=np.float64).compute(scheduler="threads"))
            print(f"   CuPy's kernels for the mean made ready (a mean of 64 chunks first): "
                  f"{time.perf_counter() - t0:.1f} s")
            runs = {"h5tile.dask.from_file(device)": lambda: h5tile_device(path),
                    "xarray h5netcdf + cupy.asarray": lambda: xarray_cupy(path, "h5netcdf"),
                    "xarray h5tile + cupy.asarray": lambda: xarray_cupy(path, "h5tile")}
            labels = list(runs)
            times = {label: [] for label in labels}
            means = {}
            for _, label in netcdf_file.rotated_rounds(labels, args.rounds, args.time_limit):
                t0 = time.perf_counter()
                means[label] = runs[label]()
                times[label].append(time.perf_counter() - t0)
                cupy.get_default_memory_pool().free_all_blocks()
            assert all(np.allclose(m, host, rtol=1e-9, atol=1e-9) for m in means.values()), (host, means)
            median = {label: statistics.median(t) for label, t in times.items()}
            gib = rows * 4 * CHUNK[1] / (1 << 30)
            for label in labels:
                print(f"   {label:31s} {median[label]:7.3f} s {gib / median[label]:6.2f} GiB/s  "
                      f"({', '.join(f'{v:.3f}' for v in times[label])}) mean {means[label]:.9g}")
            ratio = median["xarray h5netcdf + cupy.asarray"] / median["h5tile.dask.from_file(device)"]
            summary.append(f"{case} GPU mean: h5tile.dask.from_file(device={args.device}) {ratio:5.2f}x the h5netcdf + "
                           f"CuPy path (target >= {TARGET}x: {'met' if ratio >= TARGET else 'NOT met'}); "
                           f"host mean {host:.9g}")
            os.remove(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print("== summary (medians; every mean equal to h5tile's host mean, one device chunk equal bit for bit)")
    for line in summary:
        print(line)


if __name__ == "__main__":
    main()
