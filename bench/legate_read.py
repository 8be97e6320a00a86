#!/usr/bin/env python3
"""h5tile.legate against legate.io.hdf5, h5tile and h5py, in one Legate process on the same file:
reads (warm page cache, or cold with --cold: the page cache dropped before every read, which
needs root), writes (--write-mib), and the cost of a launch of h5tile.legate's point tasks on a
tiny dataset (the per-task overhead). Medians of --repeat; engines take turns in each round.

Where Legate has GPUs, the arrays stay in the framebuffer: a read is the call + a blocking fence
(h5tile.from_file(device=0) and h5py -> cupy.asarray for the peers). On CPUs a read is the call +
fence + np.asarray of the store (what a program that looks at the data pays).

    LD_LIBRARY_PATH=build/no_gpu_driver LEGATE_AUTO_CONFIG=0 \\
    LEGATE_CONFIG="--cpus 2 --gpus 0 --sysmem 6000" python3 bench/legate_read.py --mib 2048
"""
import argparse
import os
import statistics
import time

import h5py  # before legate's libraries, as the tests do
import numpy as np

from common import drop_caches, use_package


def options():
    """The command line, read before Legate starts (so that --help works without a driver)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=2048, help="size of the float32 dataset read")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", default="/tmp/h5tile-legate-bench")
    parser.add_argument("--cold", action="store_true", help="drop the page cache before every read (root)")
    parser.add_argument("--write-mib", type=int, default=0, help="also time writes of an array of this size")
    parser.add_argument("--no-tiny", action="store_true", help="skip the per-task overhead measurement")
    parser.add_argument("--only", default="", help="run only the read cases whose name starts with this (a case "
                        "that aborts the process, as legate.io.hdf5 out of ZCMEM does, then loses no other result)")
    return parser.parse_args()


ARGS = options() if __name__ == "__main__" else None

use_package()
import h5tile  # noqa: E402
import h5tile.legate as hl  # noqa: E402
import legate.io.hdf5 as lh  # noqa: E402
from legate.core import LogicalArray, TaskTarget, Type, get_legate_runtime, get_machine  # noqa: E402

GPUS = get_machine().count(TaskTarget.GPU)


def settle(out):
    """Waits until `out` is complete where the program would use it."""
    get_legate_runtime().issue_execution_fence(block=True)
    if GPUS:
        import cupy
        cupy.cuda.runtime.deviceSynchronize()
    elif isinstance(out, LogicalArray):
        np.asarray(out.data.get_physical_store())


def rounds(cases, repeat, cold, synced=False):
    """{name: [seconds]}: every case once per round, in turn, so that drift hits all alike. A
    case that fails (an engine that cannot read this size) is reported once and left out.
    ``synced``: an untimed sync(2) before each case, so that a write never pays for the
    writeback of the unsynced write before it."""
    times = {name: [] for name, _ in cases}
    failed = {}
    for _ in range(repeat):
        for name, call in cases:
            if name in failed:
                continue
            if cold:
                drop_caches()
            elif synced:
                os.sync()
            t0 = time.perf_counter()
            try:
                out = call()
                settle(out)
            except Exception as e:  # noqa: BLE001  (reported, not hidden)
                failed[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
                continue
            times[name].append(time.perf_counter() - t0)
            del out
    return times, failed


def report(times, failed, gb, skip_first):
    for name, ts in times.items():
        if name in failed:
            print(f"  {name:34s} FAILED: {failed[name]}")
            continue
        rest = ts[1:] if skip_first and len(ts) > 1 else ts
        med = statistics.median(rest)
        print(f"  {name:34s} median {med:.3f} s ({gb / med:6.2f} GB/s), all {', '.join(f'{t:.2f}' for t in ts)}")


def read_cases(path, name="x"):
    cases = [("h5tile.legate.from_file", lambda: hl.from_file(path, name)),
             ("legate.io.hdf5.from_file", lambda: lh.from_file(path, name))]
    if GPUS:
        import cupy
        cases += [("h5tile.from_file(device=0)", lambda: h5tile.from_file(path, name, device=0)),
                  ("h5py [...] -> cupy", lambda: cupy.asarray(h5py.File(path, "r")[name][...]))]
    else:
        cases += [("h5tile.from_file (numpy)", lambda: h5tile.from_file(path, name)),
                  ("h5py [...]", lambda: h5py.File(path, "r")[name][...])]
    return cases


def main():
    args = ARGS
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, "x.h5")
    rows = args.mib * 2**20 // (4 * 1024)
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", shape=(rows, 1024), dtype=np.float32)
        step = 2**28 // 4096
        rng = np.random.default_rng(0)
        for r in range(0, rows, step):
            d[r: r + step] = rng.random((min(step, rows - r), 1024), dtype=np.float32)
        f.create_dataset("tiny", data=np.arange(2, dtype=np.float32))
    os.sync()  # the first read must not pay for writing the file back
    gb = rows * 1024 * 4 / 1e9
    where = f"{GPUS} GPU(s)" if GPUS else f"{get_machine().count(TaskTarget.CPU)} CPU(s)"
    print(f"{args.mib} MiB float32 ({rows} x 1024), contiguous, {'cold' if args.cold else 'warm'}, Legate on {where}; "
          f"LEGATE_CONFIG={os.environ.get('LEGATE_CONFIG')}")
    cases = [(name, call) for name, call in read_cases(path) if name.startswith(args.only)]
    if args.cold:
        # What each engine sets up once per process (h5tile's pinned staging buffers, CUDA's
        # runtime, legate.io.hdf5's first task), made on the tiny dataset before the clock runs:
        # the cold rounds then time the disk, as the warm ones drop their first round.
        for _, call in read_cases(path, "tiny"):
            settle(call())
    report(*rounds(cases, args.repeat, args.cold), gb, skip_first=not args.cold)
    if not args.no_tiny:
        tiny = [("h5tile.legate tiny", lambda: hl.from_file(path, "tiny")),
                ("legate.io.hdf5 tiny", lambda: lh.from_file(path, "tiny"))]
        times, _ = rounds(tiny, 50, cold=False)
        for name, ts in times.items():
            print(f"  {name:34s} median {statistics.median(ts[5:]) * 1e3:.2f} ms per read + fence")
    if args.write_mib:
        write_cases(args)


def write_cases(args):
    """Writes of one array held by Legate (call + blocking fence; each syncs to disk but
    legate.io.hdf5's, which never does, and h5tile.legate's with sync=False), each after an
    untimed sync(2). On GPUs the array is in the framebuffer."""
    rows = args.write_mib * 2**20 // (4 * 1024)
    data = np.random.default_rng(1).random((rows, 1024), dtype=np.float32)
    source = os.path.join(args.dir, "w-source.h5")
    h5tile.to_file(data, source, "x", layout="contiguous").wait()
    array = hl.from_file(source, "x")  # where Legate keeps it: the framebuffer where it has GPUs
    settle(array)
    gb = data.nbytes / 1e9
    print(f"writes of {args.write_mib} MiB float32 from a Legate array ({'framebuffer' if GPUS else 'host memory'})")
    target = (lambda name: os.path.join(args.dir, f"w-{name.split()[0]}.h5"))
    cases = [("h5tile.legate.to_file", lambda: hl.to_file(array, target("h5tile.legate"), "x")),
             ("h5tile.legate.to_file sync=False", lambda: hl.to_file(array, target("h5tile.legate.nosync"), "x",
                                                                     sync=False)),
             ("legate.io.hdf5.to_file", lambda: lh.to_file(array, target("legate.io.hdf5"), "x"))]
    if GPUS:
        import cupy
        on_device = cupy.asarray(data)
        cases.append(("h5tile.to_file (cupy)", lambda: h5tile.to_file(on_device, target("h5tile"), "x").wait()))
    else:
        cases.append(("h5tile.to_file (numpy)", lambda: h5tile.to_file(data, target("h5tile"), "x").wait()))
    report(*rounds(cases, args.repeat, cold=False, synced=True), gb, skip_first=False)


if __name__ == "__main__":
    main()
