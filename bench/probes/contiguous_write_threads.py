#!/usr/bin/env python3
"""Decided: how many workers pwrite a part of a contiguous dataset through h5tile.File (page cache, 256 MiB), against h5py's one H5Dwrite."""
import os
import shutil
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import best_of, use_package  # noqa: E402

use_package()
import h5tile  # noqa: E402

mib = int(sys.argv[1]) if len(sys.argv) > 1 else 256
folder = tempfile.mkdtemp(prefix="h5tile-contiguous-threads-")
try:
    x = np.random.default_rng(0).random((mib << 18,), dtype=np.float32)
    path = os.path.join(folder, "c.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.zeros(x.size + 1024, np.float32))

    def h5py_write():
        with h5py.File(path, "a") as f:
            f["x"][512:512 + x.size] = x

    base = best_of(5, h5py_write)
    print(f"{mib} MiB float32 into a contiguous dataset, {os.cpu_count()} CPUs: h5py {base:.4f} s")
    for threads in (1, 2, 4, 8, 16):
        def ours(threads=threads):
            with h5tile.File(path, "a", threads=threads) as f:
                f["x"][512:512 + x.size] = x
        t = best_of(5, ours)
        print(f"  h5tile threads={threads:2}: {t:.4f} s  {base / t:.2f}x  {x.nbytes / t / 1e9:.2f} GB/s")
finally:
    shutil.rmtree(folder)
