#!/usr/bin/env python3
# Decided (CPU machine, 2 cores, 2026-12-02): a URL's dataset is kept open between reads where its ETag pins each request, since a Dask read of a URL whose every block opened the object fetched several times the file's bytes; numbers in BENCHMARKS.md.
"""A Dask array over an http:// URL (nginx from Debian on loopback), read whole by
h5tile.dask.from_file(...).compute() on the threaded scheduler, once with the object modified
long ago (h5tile keeps the dataset open: a strong ETag and a Last-Modified 2 s or more old pin
every request) and once modified a moment ago (not pinned: every block opens the object, which
is how every URL read before). Prints requests, bytes nginx sent against the dataset's stored
bytes, and seconds, for a contiguous and a gzip dataset of 1 MiB chunks; every result compared
with numpy. Uses the package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/probes/url_kept_open.py [--mib 64] [--rounds 3]
"""
import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time

import h5py
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))  # the tests' nginx helper
sys.path.insert(0, str(ROOT / os.environ.get("H5TILE_BUILD_DIR", "build") / "python"))
import dask  # noqa: E402
import h5tile.dask as h5d  # noqa: E402
from servers.nginx import Nginx, executable  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=64, help="size of each dataset in MiB (default 64)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, the two cases alternating (default 3)")
    args = parser.parse_args()
    if executable() is None:
        sys.exit("nginx is not installed (scripts/install_deps.sh installs it)")
    cols = 1 << 16  # float32: rows of 256 KiB, chunks of 4 rows (1 MiB)
    a = np.random.default_rng(0).random((args.mib * 4, cols), dtype=np.float32)
    with tempfile.TemporaryDirectory(prefix="h5tile-url-kept-") as tmp:
        work = pathlib.Path(tmp)
        root = work / "www"
        root.mkdir()
        path = root / "f.h5"
        with h5py.File(path, "w") as f:
            f.create_dataset("raw", data=a, chunks=(4, cols))
            f.create_dataset("gzip", data=a, chunks=(4, cols), compression="gzip", compression_opts=1)
            stored = {name: f[name].id.get_storage_size() for name in ("raw", "gzip")}
        server = Nginx(root, work / "nginx").start()
        try:
            print(f"{args.mib} MiB float32 per dataset, 1 MiB chunks, {os.cpu_count()} CPUs, nginx on loopback, "
                  f"{args.rounds} rounds, medians")
            print(f"{'dataset':8}{'object':22}{'requests':>10}{'MiB sent':>10}{'x stored':>10}{'seconds':>10}")
            for name in ("raw", "gzip"):
                results = {"kept (old)": [], "opened each (new)": []}
                for r in range(args.rounds):
                    for case in (list(results) if r % 2 == 0 else list(results)[::-1]):
                        stamp = time.time() - (100 if case.startswith("kept") else 0)
                        os.utime(path, (stamp, stamp))
                        before = len(server.requests())
                        start = time.perf_counter()
                        x = h5d.from_file(f"{server.url}/f.h5", "/" + name, chunks=(4, cols))
                        with dask.config.set(scheduler="threads"):
                            got = x.compute()
                        seconds = time.perf_counter() - start
                        if not np.array_equal(got, a):
                            sys.exit(f"{name}, {case}: the data read differs from the data written")
                        lines = server.requests()[before:]
                        sent = sum(int(line.split('"')[2].split()[1]) for line in lines)
                        results[case].append((len(lines), sent, seconds))
                for case, runs in results.items():
                    requests = statistics.median(r[0] for r in runs)
                    sent = statistics.median(r[1] for r in runs)
                    seconds = statistics.median(r[2] for r in runs)
                    print(f"{name:8}{case:22}{requests:10.0f}{sent / 2**20:10.1f}{sent / stored[name]:10.2f}"
                          f"{seconds:10.3f}")
                kept, each = (statistics.median(r[2] for r in runs) for runs in results.values())
                print(f"{name:8}kept / opened each: {each / kept:.2f}x faster")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
