#!/usr/bin/env python3
"""Checks the file `h5tile demo` wrote with h5py, an independent reader.

Element i of the demo array is (i * 2654435761 + 12345) mod 2**32 (uint32). Reads the
dataset in slabs so that memory stays small, and exits non-zero on the first difference.
"""
import argparse
import sys
import time

import h5py
import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path")
    parser.add_argument("dataset", nargs="?", default="/data")
    args = parser.parse_args()
    start = time.perf_counter()
    with h5py.File(args.path, "r") as f:
        ds = f[args.dataset]
        if ds.dtype != np.uint32 or ds.ndim != 2:
            print(f"h5py: unexpected dtype {ds.dtype} or rank {ds.ndim}", file=sys.stderr)
            return 1
        rows, cols = ds.shape
        step = max(1, (64 << 20) // (4 * cols))
        for lo in range(0, rows, step):
            hi = min(rows, lo + step)
            got = ds[lo:hi]
            i = np.arange(lo * cols, hi * cols, dtype=np.uint64)
            expected = ((i * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(2**32)).astype(np.uint32)
            if not np.array_equal(got.reshape(-1), expected):
                print(f"h5py: rows {lo}:{hi} differ from the expected values", file=sys.stderr)
                return 1
    seconds = time.perf_counter() - start
    print(f"h5py check: {args.path}:{args.dataset} shape {ds.shape} equal to the expected values ({seconds:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
