#!/usr/bin/env python3
# Decided (CPU machine, 2 cores, 2026-12-02): a URL's dataset kept open lets go of the metadata blocks its open read, and the HDF5 driver's cache does not copy the first block the source holds, since 20 kept datasets of one URL held 390 MiB at 4 MiB blocks; numbers in BENCHMARKS.md.
"""Memory held by datasets of one URL kept open by an h5tile.File: 20 gzip datasets of 16 MiB
(random float32, 1 MiB chunks) written by h5py and served by nginx (Debian's, on loopback), one
row read from each through one File; prints how much the process's resident memory grew from
after the first dataset's read to after the last, per remote block size. Every row compared with
numpy. Each block size is measured in a process of its own (memory freed by one run would serve
the next). Uses the package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/probes/url_kept_memory.py [--blocks 4M,1M,256K]
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))  # the tests' nginx helper
sys.path.insert(0, str(ROOT / os.environ.get("H5TILE_BUILD_DIR", "build") / "python"))
import h5tile  # noqa: E402
from servers.nginx import Nginx, executable  # noqa: E402

DATASETS = 20


def resident_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def values(i):
    return np.random.default_rng(i).random((64, 65536), dtype=np.float32)


def measure(url, block):
    h5tile.settings.set_remote_block_size(block)
    rows = {i: values(i)[0] for i in range(DATASETS)}
    with h5tile.File(url) as f:
        assert np.array_equal(f["v0"][0], rows[0])
        before = resident_mib()
        for i in range(1, DATASETS):
            assert np.array_equal(f[f"v{i}"][0], rows[i])
        grown = resident_mib() - before
        kept = sum(reader.is_open for reader in f._readers.values())
    print(f"block {block:>5}: resident memory grew {grown:6.1f} MiB over {DATASETS - 1} more datasets "
          f"({grown / (DATASETS - 1):.1f} MiB each), {kept} kept open", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", default="4M,1M,256K", help="remote block sizes to try (default 4M,1M,256K)")
    parser.add_argument("--url", help=argparse.SUPPRESS)  # inner run: one block size, this URL
    args = parser.parse_args()
    if args.url:
        measure(args.url, args.blocks)
        return
    if executable() is None:
        sys.exit("nginx is not installed (scripts/install_deps.sh installs it)")
    with tempfile.TemporaryDirectory(prefix="h5tile-url-memory-") as tmp:
        work = pathlib.Path(tmp)
        root = work / "www"
        root.mkdir()
        with h5py.File(root / "f.h5", "w") as f:
            for i in range(DATASETS):
                f.create_dataset(f"v{i}", data=values(i), chunks=(4, 65536), compression="gzip", compression_opts=1)
        stamp = time.time() - 100  # modified long ago: its datasets are kept
        os.utime(root / "f.h5", (stamp, stamp))
        server = Nginx(root, work / "nginx").start()
        try:
            print(f"{DATASETS} gzip datasets of 16 MiB in one file over nginx, one row read from each through one "
                  f"h5tile.File")
            for block in args.blocks.split(","):
                subprocess.run([sys.executable, __file__, "--url", f"{server.url}/f.h5", "--blocks", block], check=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
