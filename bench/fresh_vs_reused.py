#!/usr/bin/env python3
"""Reads into new memory next to reads into a reused buffer, on one contiguous dataset, warm:
a plain threaded `os.preadv` loop over the dataset's bytes and h5tile `from_file(out=)` into one
NumPy array, alternating, `--rounds` times each (medians); then `from_file` into a new array
`--fresh` times in a row, each figure printed (new memory's cost varies from call to call).

    python3 bench/fresh_vs_reused.py FILE [DATASET] [--threads 2] [--rounds 7] [--fresh 4]
"""
import argparse
import os
import statistics
import sys
import threading
import time

import h5py
import numpy as np

from common import build_dir, use_package


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file")
    p.add_argument("dataset", nargs="?", default="/data")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--fresh", type=int, default=4)
    p.add_argument("--build", default=str(build_dir()))
    a = p.parse_args()
    use_package(a.build)
    import h5tile

    with h5py.File(a.file, "r") as f:
        d = f[a.dataset]
        offset, shape, dtype = d.id.get_offset(), d.shape, d.dtype
    if offset is None:
        sys.exit(f"{a.file}:{a.dataset} is not a contiguous dataset with its bytes in the file")
    out = np.zeros(shape, dtype)  # touched: its pages are mapped before the timings
    nbytes = out.nbytes
    view = memoryview(out.reshape(-1).view(np.uint8))
    fd = os.open(a.file, os.O_RDONLY)

    def loop():
        def part(t):
            lo = nbytes * t // a.threads // 4096 * 4096
            hi = nbytes if t == a.threads - 1 else nbytes * (t + 1) // a.threads // 4096 * 4096
            while lo < hi:
                lo += os.preadv(fd, [view[lo:min(hi, lo + (16 << 20))]], offset + lo)
        workers = [threading.Thread(target=part, args=(t,)) for t in range(a.threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    def into():
        h5tile.from_file(a.file, a.dataset, out=out, threads=a.threads)

    def timed(f):
        t0 = time.perf_counter()
        f()
        return time.perf_counter() - t0

    loop(), into()  # warm-up
    t_loop, t_into = [], []
    for _ in range(a.rounds):
        t_loop.append(timed(loop))
        t_into.append(timed(into))
    gbs = lambda t: nbytes / t / 1e9  # noqa: E731
    print(f"{nbytes / 1e9:.2f} GB, {a.threads} threads, warm; medians of {a.rounds} alternating rounds:")
    print(f"  plain preadv loop into a reused array  {gbs(statistics.median(t_loop)):6.2f} GB/s")
    print(f"  h5tile from_file(out=) (reused array)  {gbs(statistics.median(t_into)):6.2f} GB/s")
    fresh = [gbs(timed(lambda: h5tile.from_file(a.file, a.dataset, threads=a.threads))) for _ in range(a.fresh)]
    print("  h5tile from_file (new array), in turn  " + ", ".join(f"{g:.2f}" for g in fresh) + " GB/s")
    os.close(fd)


if __name__ == "__main__":
    sys.exit(main())
