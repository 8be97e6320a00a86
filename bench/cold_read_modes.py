#!/usr/bin/env python3
"""Cold reads of one contiguous file (page cache dropped before each, as root) by h5tile in its
modes (host or device; buffered or O_DIRECT; thread counts) next to `dd` (one stream of 16 MiB
requests, buffered and O_DIRECT) and h5py (one H5Dread), each read in its own process, the modes
taking turns in every round. Finds what the fastest cold reader does differently.

    sudo python3 bench/cold_read_modes.py [--gib 8] [--rounds 2] [--dir /tmp/h5tile-cold-modes]
"""
import os
import statistics
import subprocess
import sys

from common import drop_caches, use_package
from common.cold import cold_parser, ones_file, timed_dd

READ = """
import sys, time
sys.path.insert(0, {python!r})
import h5tile
device = {device}
if device is not None and {context_first}:
    import cupy  # the CUDA context made before the clock starts, as in a program that already uses the GPU
    cupy.empty(1)
    cupy.cuda.runtime.deviceSynchronize()
t0 = time.perf_counter()
a = h5tile.from_file({path!r}, "/x", device=device)
if device is not None:
    import cupy
    cupy.cuda.runtime.deviceSynchronize()
print(time.perf_counter() - t0)
"""

H5PY = """
import time, h5py
t0 = time.perf_counter()
with h5py.File({path!r}, "r") as f:
    f["x"][...]
print(time.perf_counter() - t0)
"""


def timed_python(code: str, env: dict) -> float:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    p = cold_parser(__doc__, 8, "/tmp/h5tile-cold-modes")
    p.add_argument("--device-only", action="store_true", help="only the device modes (and dd)")
    a = p.parse_args()
    python = use_package(a.build)
    try:
        import cupy  # noqa: F401
        gpu = True
    except ImportError:
        gpu = False
    path, nbytes = ones_file(a.dir, "cold.h5", a.gib)
    gb = nbytes / 1e9
    base = dict(os.environ)
    modes = []
    for device in ([0] if a.device_only else [None, 0] if gpu else [None]):
        where = "host" if device is None else "device"
        code = READ.format(python=python, device=device, path=str(path), context_first=False)
        variants = [("default", {}), ("O_DIRECT", {"H5TILE_DIRECT_IO": "on"}), ("4 threads", {"H5TILE_THREADS": "4"}),
                    ("O_DIRECT, 4 threads", {"H5TILE_DIRECT_IO": "on", "H5TILE_THREADS": "4"}),
                    ("32 MiB tasks", {"H5TILE_TASK_SIZE": "32M"})]
        if device is not None:
            variants += [("staging 1 GiB", {"H5TILE_STAGING_BYTES": "1G"}),
                         ("staging 1 GiB, 32 MiB tasks", {"H5TILE_STAGING_BYTES": "1G", "H5TILE_TASK_SIZE": "32M"}),
                         ("32 threads", {"H5TILE_THREADS": "32"}), ("GDS off", {"H5TILE_GDS": "off"})]
        for label, extra in variants:
            modes.append((f"h5tile {where}, {label}", lambda c=code, e=extra: timed_python(c, {**base, **e})))
        if device is not None:
            # The same read in a process whose CUDA context exists before the clock starts (the
            # peers' benchmarks time their reads that way): what the context's creation costs.
            ready = READ.format(python=python, device=device, path=str(path), context_first=True)
            for label, extra in [("default", {}), ("O_DIRECT", {"H5TILE_DIRECT_IO": "on"})]:
                modes.append((f"h5tile device, context first, {label}",
                              lambda c=ready, e=extra: timed_python(c, {**base, **e})))
    if not a.device_only:
        modes.append(("h5py, one H5Dread", lambda: timed_python(H5PY.format(path=str(path)), base)))
    modes += [("dd bs=16M, buffered", lambda: timed_dd(path, False)),
              ("dd bs=16M iflag=direct", lambda: timed_dd(path, True))]
    times = {name: [] for name, _ in modes}
    for _ in range(a.rounds):
        for name, run in modes:
            drop_caches()
            times[name].append(run())
    print(f"cold reads of {gb:.2f} GB ({path}), {os.cpu_count()} cores, {a.rounds} rounds, modes in turn")
    best = max(gb / statistics.median(ts) for ts in times.values())
    for name, ts in times.items():
        rate = gb / statistics.median(ts)
        print(f"  {name:34s} {rate:5.2f} GB/s ({rate / best:4.2f}x the best), all "
              f"{', '.join(f'{gb / t:.2f}' for t in ts)}")
    path.unlink()


if __name__ == "__main__":
    main()
