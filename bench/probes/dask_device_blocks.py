#!/usr/bin/env python3
# Decided (with bench/xarray_gpu.py's warm-up, session 17): the 0.11 GiB/s of h5tile.dask.from_file(device=0).mean() on the GPU machine (sessions 15, 16) was CuPy compiling the mean's kernels at their first use (76 s with an empty kernel cache), not h5tile's reads; the 8 GiB at 3-4 GiB/s was HDF5 1.10 lookups (fixed by H5Dchunk_iter). Times one read, Dask-sized blocks alone, with threads=1 and 16, from 16 threads at once, and the Dask compute at two block sizes (issue 29).
"""Where a Dask array of device blocks loses its time.

    H5TILE_BUILD_DIR=build-gpu python3 bench/probes/dask_device_blocks.py [--gib 2] [--device 0]

The file: bench/netcdf_file.py's uncompressed variable (float32, 1 MiB chunks). Each step reads
the whole variable or its Dask blocks and checks the sum against the host read; every time is
after cudaDeviceSynchronize (cupy.cuda.Device.synchronize).
"""
import argparse
import concurrent.futures
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import netcdf_file  # noqa: E402
from compressible import PACKAGE  # noqa: E402

sys.path.insert(0, PACKAGE)
import cupy  # noqa: E402
import dask  # noqa: E402
import numpy as np  # noqa: E402

import h5tile  # noqa: E402
import h5tile.dask  # noqa: E402
from h5tile import _h5tile  # noqa: E402


def timed(label, run, gib, expect=None):
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    value = run()
    cupy.cuda.Device().synchronize()
    s = time.perf_counter() - t0
    ok = "" if expect is None else ("  equal" if np.isclose(value, expect, rtol=1e-9) else f"  DIFFERS {value}")
    print(f"{label:58s} {s:8.3f} s {gib / s:8.2f} GiB/s{ok}", flush=True)
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, default=2)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="h5tile-dask-device-", dir=args.dir) as folder:
        path = os.path.join(folder, "x.nc")
        netcdf_file.write(path, args.gib, False)
        gib = os.path.getsize(path) / (1 << 30)
        cupy.cuda.Device(args.device).use()
        host = h5tile.from_file(path, "/x")
        expect = float(host.sum(dtype=np.float64))
        print(f"{netcdf_file.describe(path)}; host sum {expect!r}")
        whole = lambda: float(h5tile.from_file(path, "/x", device=args.device).sum(dtype=np.float64))  # noqa: E731
        timed("from_file(device) whole, first", whole, gib, expect)
        timed("from_file(device) whole, again", whole, gib, expect)
        x = h5tile.dask.from_file(path, "/x", device=args.device)
        print(f"Dask blocks: {x.chunks[0][0]} x {x.chunks[1][0]} ({x.numblocks} blocks)")
        boxes = [([sum(x.chunks[0][:i]), 0], [n, x.shape[1]]) for i, n in enumerate(x.chunks[0])]
        for threads in (1, 16):
            reader = _h5tile._Reader(path, "/x", args.device, threads)
            blocks = lambda: sum(float(cupy.asarray(reader.read_box(o, e)).sum(dtype=np.float64))  # noqa: E731
                                 for o, e in boxes)
            timed(f"_Reader(threads={threads}).read_box, blocks one by one", blocks, gib, expect)
            print("  last_device_io:", json.dumps(h5tile.last_device_io(), default=str)[:1500])
        reader = _h5tile._Reader(path, "/x", args.device, 1)
        def into_pool(box):
            block = cupy.empty(tuple(box[1]), np.float32)
            reader.read_into(block, "", box[0])
            return float(block.sum(dtype=np.float64))

        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            one = lambda b: float(cupy.asarray(reader.read_box(*b)).sum(dtype=np.float64))  # noqa: E731
            timed("_Reader(threads=1).read_box, 16 Python threads", lambda: sum(pool.map(one, boxes)), gib, expect)
            timed("_Reader(threads=1).read_into CuPy pool, 16 Python threads", lambda: sum(pool.map(into_pool, boxes)),
                  gib, expect)
        # Dask's reduction kernels compiled once, before the timed computes.
        small = h5tile.dask.from_file(path, "/x", chunks=(64, x.shape[1]), device=args.device)[:256]
        float(small.sum(dtype=np.float64).compute(scheduler="threads"))
        float(small.mean(dtype=np.float64).compute(scheduler="threads"))
        for chunks, threads in (("auto", 1), ("auto", 16), ((64, x.shape[1]), 1)):
            d = h5tile.dask.from_file(path, "/x", chunks=chunks, device=args.device, threads=threads)
            for _ in range(2):
                timed(f"dask from_file(chunks={chunks}, threads={threads}).sum()",
                      lambda: float(d.sum(dtype=np.float64).compute(scheduler="threads")), gib, expect)
        # As bench/xarray_gpu.py times it: the mean, the pool emptied after each.
        for _ in range(2):
            d = h5tile.dask.from_file(path, "/x", device=args.device)
            timed("dask from_file(device).mean() (as bench/xarray_gpu.py)",
                  lambda: float(d.mean(dtype=np.float64).compute(scheduler="threads")) * d.size, gib, expect)
            cupy.get_default_memory_pool().free_all_blocks()
        with dask.config.set(scheduler="synchronous"):
            timed("dask from_file(device) .sum(), synchronous scheduler",
                  lambda: float(x.sum(dtype=np.float64).compute()), gib, expect)


if __name__ == "__main__":
    main()
