#!/usr/bin/env python3
"""Peers of h5tile's device read, on the file h5tile_gpu_bench wrote: h5py + CuPy, and KvikIO
(the raw bytes of the contiguous dataset read straight into a CuPy array). Synchronised
timings; median of --repeats warm runs after a warm-up, plus one cold run (page cache dropped)
where allowed. Prints one JSON object per measurement."""
import argparse
import json
import os
import statistics
import time

import h5py
import numpy as np

from common import drop_caches


def measure(name, fn, repeats, sync, nbytes):
    def once():
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        return time.perf_counter() - t0
    cold = once() if drop_caches(required=False) else 0.0
    once()
    warm = statistics.median(once() for _ in range(repeats))
    print(json.dumps({"name": name, "bytes": nbytes, "warm_s": round(warm, 4), "cold_s": round(cold, 4)}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import cupy as cp

    sync = cp.cuda.runtime.deviceSynchronize
    with h5py.File(args.file, "r") as f:
        ds = f["data"]
        shape, dtype, offset = ds.shape, ds.dtype, ds.id.get_offset()
    nbytes = int(np.prod(shape)) * dtype.itemsize

    def h5py_cupy():
        with h5py.File(args.file, "r") as f:
            host = f["data"][...]
        cp.asarray(host)
    measure("h5py read -> numpy, then cupy.asarray", h5py_cupy, args.repeats, sync, nbytes)

    data = cp.asarray(h5py.File(args.file, "r")["data"][...])
    out_file = args.file + ".h5py-write.h5"

    def cupy_h5py_write():
        with h5py.File(out_file, "w") as f:
            f.create_dataset("data", data=cp.asnumpy(data))
    measure("write: cupy.asnumpy, then h5py create_dataset (no fsync)", cupy_h5py_write, 1, sync, nbytes)
    del data
    os.remove(out_file)

    try:
        import kvikio
        import kvikio.defaults
    except ImportError as e:
        print(json.dumps({"name": "kvikio", "skipped": f"not importable: {e}"}), flush=True)
        return
    out = cp.empty(nbytes, dtype=cp.uint8)

    def kvikio_read():
        with kvikio.CuFile(args.file, "r") as f:
            f.pread(out, nbytes, offset).get()
    try:
        mode = kvikio.defaults.get("compat_mode")
    except Exception:  # older and newer KvikIO name it differently
        mode = "unknown"
    measure(f"KvikIO {kvikio.__version__} CuFile.pread -> device (compat mode {mode})", kvikio_read,
            args.repeats, sync, nbytes)
    expected = np.fromfile(args.file, dtype=np.uint8, count=nbytes, offset=offset)
    print(json.dumps({"name": "kvikio bytes equal file", "value": bool((cp.asnumpy(out) == expected).all())}))


if __name__ == "__main__":
    main()
