#!/usr/bin/env python3
"""The CPU benchmark, side by side in one run on the same data: `h5tile bench --json` (the
storage limits, plain HDF5 calls, h5tile in each layout with 1 rank and all cores), then h5py
writing and reading the same array in the same folder, then legate.io.hdf5 where it imports.
Prints one table with GB/s and the ratio to the best limit of each group: writes until durable
(write), until the call returns (write0), reads into a buffer whose pages are mapped (read) and
reads into newly allocated memory (read-new, whose pages the kernel zero-fills on first touch).

    python3 bench/peers.py --size 1G --dir /tmp/h5tile-bench [--cold]
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np

from common import build_dir, drop_caches, median_of


def median(repeats, fn, cold=False):
    """The median seconds of `repeats` calls of `fn`; cold: each after the page cache was dropped
    where this process may drop it."""
    return median_of(repeats, fn, before=(lambda: drop_caches(required=False)) if cold else None)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="1G")
    p.add_argument("--dir", default="/tmp/h5tile-bench")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cold", action="store_true")
    p.add_argument("--build", default=str(build_dir()))
    a = p.parse_args()
    cmd = [str(Path(a.build) / "cli" / "h5tile"), "bench", "--json", "--size", a.size, "--dir", a.dir,
           "--repeats", str(a.repeats)] + (["--cold"] if a.cold else [])
    result = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    nbytes, (rows, cols) = result["bytes"], result["shape"]
    rows_out = [(r["group"], r["name"], r["seconds"]) for r in result["results"]]

    data = (np.arange(rows * cols, dtype=np.uint64) * np.uint64(2654435761) % np.uint64(2**32)).astype(
        np.uint32).view(np.float32).reshape(rows, cols)
    path = Path(a.dir) / "h5py.h5"
    made = not path.parent.exists()  # h5tile bench removes the folder it made
    path.parent.mkdir(parents=True, exist_ok=True)

    def h5py_write():
        with h5py.File(path, "w") as f:
            f.create_dataset("data", data=data)
        fd = os.open(path, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
    rows_out.append(("write", "h5py create_dataset(data=...) + fsync", median(a.repeats, h5py_write)))

    def h5py_write_returns():
        path.unlink(missing_ok=True)  # a new file, as the other no-fsync rows write (not timed apart: small)
        with h5py.File(path, "w") as f:
            f.create_dataset("data", data=data)
    rows_out.append(("write0", "h5py create_dataset(data=...), no fsync", median(a.repeats, h5py_write_returns)))
    h5py_write()

    def h5py_read():
        with h5py.File(path, "r") as f:
            f["data"][...]
    rows_out.append(("read-new", "h5py f[name][...]", median(a.repeats, h5py_read, a.cold)))
    out = np.zeros_like(data)  # the peer of h5tile read_into: a buffer whose pages are mapped

    def h5py_read_direct():
        with h5py.File(path, "r") as f:
            f["data"].read_direct(out)
    rows_out.append(("read", "h5py read_direct(out) (reused buffer)", median(a.repeats, h5py_read_direct, a.cold)))
    del out
    path.unlink()
    if made:
        path.parent.rmdir()
    try:
        import legate.io.hdf5  # noqa: F401
        legate_note = "imported (not yet wired into this table)"
    except Exception as e:  # the PyPI build needs libcuda.so.1 even on a CPU
        legate_note = f"legate.io.hdf5 could not run here: {type(e).__name__}: {e}"

    best = {}
    for g, name, s in rows_out:
        if name.startswith("limit"):
            best[g] = max(best.get(g, 0), nbytes / s / 1e9)
    print(f"{nbytes / 1e9:.2f} GB float32 [{rows}, {cols}], {result['ranks']} ranks/threads, "
          f"{'cold' if result['cold'] else 'warm'} page cache; h5tile read equals source: "
          f"{result['h5tile_read_equals_source']}")
    print(f"{'':9}{'engine':52}{'GB/s':>8}{'vs limit':>10}")
    order = {"write": 0, "write0": 1, "read": 2, "read-new": 3}
    for g, name, s in sorted(rows_out, key=lambda r: order[r[0]]):
        gbps = nbytes / s / 1e9
        print(f"{g:9}{name:52}{gbps:8.2f}{gbps / best[g]:9.2f}x")
    print(legate_note)


if __name__ == "__main__":
    sys.exit(main())
