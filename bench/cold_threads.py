#!/usr/bin/env python3
"""Cold reads (page cache dropped before each, as root) of one contiguous file with the O_DIRECT
path on, by thread count, into host memory (read_into) and, where CuPy is, into GPU memory;
next to `dd iflag=direct` on the same file. Finds how many concurrent direct reads the disk wants.

    python3 bench/cold_threads.py [--gib 8] [--dir /tmp/h5tile-cold] [--build build]
"""
import argparse
import os
import subprocess
import sys
import time

from common import build_dir, drop_caches, use_package
from common.cold import ones_file


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=8)
    p.add_argument("--dir", default="/tmp/h5tile-cold")
    p.add_argument("--build", default=str(build_dir()))
    a = p.parse_args()
    use_package(a.build)
    os.environ["H5TILE_DIRECT_IO"] = "on"
    import numpy as np
    import h5tile
    try:
        import cupy
    except ImportError:
        cupy = None
    path, nbytes = ones_file(a.dir, "cold.h5", a.gib)
    rows = nbytes // (4 * 4096)
    drop_caches()
    dd = subprocess.run(["dd", f"if={path}", "of=/dev/null", "bs=16M", "iflag=direct"], capture_output=True,
                        text=True).stderr.strip().splitlines()[-1]
    print(f"{nbytes / 1e9:.2f} GB; dd iflag=direct: {dd}")
    out = np.empty((rows, 4096), np.float32)
    out.fill(0)
    dev = cupy.empty((rows, 4096), cupy.float32) if cupy is not None else None
    for threads in (1, 2, 4, 8, 16, 32):
        row = [f"threads {threads:2}"]
        for name, target in (("host read_into", out), ("device read_into", dev)):
            if target is None:
                continue
            drop_caches()
            t = time.perf_counter()
            h5tile.from_file(path, "/x", out=target, threads=threads)
            if cupy is not None:
                cupy.cuda.runtime.deviceSynchronize()
            row.append(f"{name} {nbytes / (time.perf_counter() - t) / 1e9:6.2f} GB/s")
        print("   ".join(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
