#!/usr/bin/env python3
"""Unfiltered chunked data: h5tile reading chunks with pread (H5TILE_RAW_IO=1) and through HDF5
(=0), and h5py, on one 256 MiB file with (256, 1024) chunks. Uses the build tree's package."""
import numpy as np, h5py, sys, time, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python"))
import h5tile
PATH = "/tmp/h5tile-chunked-read.h5"
a = np.random.default_rng(0).random((8192, 8192), dtype=np.float32)  # 256 MiB
with h5py.File(PATH, "w") as f:
    f.create_dataset("x", data=a, chunks=(256, 1024))
import subprocess
for raw in ("1", "0"):
    out = subprocess.run([sys.executable, "-c", f"""
import sys, time, os
sys.path.insert(0, {os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python")!r})
os.environ['H5TILE_RAW_IO'] = '{raw}'
import h5tile
h5tile.from_file('{PATH}', '/x')
t0 = time.perf_counter(); h5tile.from_file('{PATH}', '/x'); print(time.perf_counter() - t0)
"""], capture_output=True, text=True)
    print("raw", raw, f"{a.nbytes / float(out.stdout) / 1e9:.2f} GB/s")
t0 = time.perf_counter()
with h5py.File(PATH) as f: f["x"][...]
print("h5py", f"{a.nbytes / (time.perf_counter() - t0) / 1e9:.2f} GB/s")
