#!/usr/bin/env python3
"""Cold reads of one contiguous float32 file by h5tile's default (H5TILE_COLD_READS=auto) against
its parallel pattern (the default before it: H5TILE_COLD_READS=parallel) and the peers, into host
memory and, where CuPy imports, into device memory: h5py (one H5Dread; -> cupy.asarray on the
device), KvikIO's CuFile.pread where it imports, legate.io.hdf5.from_file and h5tile.legate.from_file
where Legate is installed (into the framebuffer of one GPU where the device reads run, else into
host memory with --gpus 0), and `dd bs=16M` (iflag=direct: the disk without the page cache;
buffered). Each read runs in its own process after the file is evicted from the page cache
(posix_fadvise(DONTNEED) after fsync, no root needed; --drop-caches: the whole cache, as root),
with CUDA's context, Legate's start-up and each engine's setup (a read of a small file) made
before its clock starts; a Legate read is from_file + a blocking execution fence (+ a device
synchronisation on a GPU). The order of the engines rotates from round to round. Every engine's
result is checked (64 rows sampled, each row holding its index); every h5tile read reports the
pattern that ran and what its page-cache sample found (last_read_pattern()). Printed last: issue
28's target lines (h5tile's device default against the best of h5py, KvikIO and legate.io.hdf5 in
this run; its host default against dd iflag=direct).

    python3 bench/cold_patterns.py [--gib 4] [--rounds 3] [--host-only | --device-only]
        [--default-only] [--no-legate] [--legate-config '--gpus 1 --cpus 1 ...'] [--budget SECONDS]
        [--extra 'label:H5TILE_COLD_READERS=1,H5TILE_COLD_REQUEST=32M;...']

Where the machine has no CUDA driver, the Legate processes get the build's no-GPU driver stand-in
(build/no_gpu_driver, as tests/python/test_legate.py does).
"""
import ctypes
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import build_dir, drop_caches, use_package
from common.cold import cold_parser, timed_dd

# Every engine's process checks what it read: row i of the file holds i (exact in float32 up to
# 2**24 rows), so a sample of 64 rows and the last one shows a wrong offset, a short read or a
# missing part. `xp` is numpy or cupy.
CHECK = """
def check(a, xp):
    if tuple(a.shape) != {shape!r}:
        return False
    step = max(1, a.shape[0] // 64)
    want = xp.arange(0, a.shape[0], step, dtype=xp.float32)[:, None]
    return bool((a[::step] == want).all()) and bool((a[-1] == a.shape[0] - 1).all())
"""

H5TILE = """
import json, sys, time
sys.path.insert(0, {python!r})
device = {device}
xp = None
if device is not None:
    import cupy as xp
    xp.empty(1)
    xp.cuda.runtime.deviceSynchronize()
import numpy
import h5tile
h5tile.from_file({small!r}, "/x", device=device)
t0 = time.perf_counter()
a = h5tile.from_file({path!r}, "/x", device=device)
if device is not None:
    xp.cuda.runtime.deviceSynchronize()
s = time.perf_counter() - t0
ok = check(a, xp or numpy)
print(json.dumps({{"s": s, "pattern": h5tile.last_read_pattern(), "ok": ok}}))
"""

H5PY = """
import json, time, h5py, numpy
device = {device}
xp = numpy
if device is not None:
    import cupy as xp
    xp.empty(1)
    xp.cuda.runtime.deviceSynchronize()
with h5py.File({small!r}, "r") as f:
    f["x"][...]
t0 = time.perf_counter()
with h5py.File({path!r}, "r") as f:
    a = f["x"][...]
if device is not None:
    a = xp.asarray(a)
    xp.cuda.runtime.deviceSynchronize()
s = time.perf_counter() - t0
print(json.dumps({{"s": s, "ok": check(a, xp)}}))
"""

WARM = """
import json, statistics, sys, time
sys.path.insert(0, {python!r})
device = {device}
if device is not None:
    import cupy
import h5tile
out = []
for i in range(6):
    t0 = time.perf_counter()
    a = h5tile.from_file({path!r}, "/x", device=device)
    if device is not None:
        cupy.cuda.runtime.deviceSynchronize()
    out.append(time.perf_counter() - t0)
    del a
print(json.dumps({{"s": statistics.median(out[1:]), "pattern": h5tile.last_read_pattern()}}))
"""

KVIKIO = """
import json, time, h5py, cupy, kvikio
cupy.empty(1)
cupy.cuda.runtime.deviceSynchronize()
with h5py.File({path!r}, "r") as f:
    d = f["x"]
    offset, shape, dtype = d.id.get_offset(), d.shape, d.dtype
out = cupy.empty(shape, dtype)
with kvikio.CuFile({small!r}, "r") as f:
    f.read(cupy.empty(1024, cupy.uint8))
t0 = time.perf_counter()
with kvikio.CuFile({path!r}, "r") as f:
    f.pread(out, file_offset=offset).get()
cupy.cuda.runtime.deviceSynchronize()
s = time.perf_counter() - t0
print(json.dumps({{"s": s, "ok": check(out, cupy)}}))
"""

# One Legate process per read: the runtime starts (LEGATE_CONFIG) and the engine reads the small
# file before the clock runs; the timed read is from_file + a blocking fence (+ a device
# synchronisation where Legate has a GPU, as bench/legate_read.py does; on CPUs the mapping of the
# result, which a program that looks at it pays). The check copies the result to host memory
# after the clock.
LEGATE = """
import json, sys, time
sys.path.insert(0, {python!r})
import h5py  # before Legate's libraries, as the tests do
import numpy
from legate.core import StoreTarget, TaskTarget, get_legate_runtime, get_machine
if {engine!r} == "h5tile.legate":
    import h5tile.legate as reader
else:
    import legate.io.hdf5 as reader
gpus = get_machine().count(TaskTarget.GPU)
device = {device}
if device is not None and not gpus:
    print(json.dumps({{"error": "Legate has no GPU here (LEGATE_CONFIG={config})"}}))
    sys.exit(0)
if gpus:
    import cupy
def settle(array):
    get_legate_runtime().issue_execution_fence(block=True)
    if gpus:
        cupy.cuda.runtime.deviceSynchronize()
    else:
        numpy.asarray(array.data.get_physical_store())
settle(reader.from_file({small!r}, "x"))
t0 = time.perf_counter()
a = reader.from_file({path!r}, "x")
settle(a)
s = time.perf_counter() - t0
ok = check(numpy.asarray(a.data.get_physical_store(StoreTarget.SYSMEM)), numpy)
print(json.dumps({{"s": s, "ok": ok, "gpus": gpus}}))
"""

DEVICE_PEERS = ("h5py device", "KvikIO CuFile.pread -> device", "legate.io.hdf5 device")
DD_DIRECT = "dd bs=16M iflag=direct"


def gb_of(path: Path) -> float:
    return path.stat().st_size / 1e9


def evict(path: Path, drop: bool) -> None:
    if drop:
        drop_caches()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run_json(code: str, env: dict, timeout: float) -> dict:
    """The last JSON line the engine's process printed; its error (the last line of stderr that
    names one, Legate's log being long) where it failed or printed none."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode == 0 and lines:
        res = json.loads(lines[-1])
        if "error" in res:
            raise RuntimeError(res["error"])
        return res
    raise RuntimeError(failure(out.stderr, out.returncode))


def failure(stderr: str, returncode: int) -> str:
    """The line of a failed process's stderr that says why: Legate's allocation failure or the
    exception it aborts with (its log and backtrace run long), else Python's last exception line."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in stderr.splitlines()]
    for pattern in (r"Failed to allocate", r"LEGATE ERROR: #0 [^ 0]", r"^[\w.]+(Error|Exception)\b"):
        hits = [line for line in lines if re.search(pattern, line)]
        if hits:
            return hits[-1][:300]
    return next((line for line in reversed(lines) if line), f"exit {returncode}")[:300]


def has_cuda_driver() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def legate_env(base: dict, config: str, build: Path) -> dict:
    env = {**base, "LEGATE_CONFIG": config, "LEGATE_AUTO_CONFIG": "0", "LEGATE_SHOW_CONFIG": "0"}
    stand_in = build / "no_gpu_driver"
    if not has_cuda_driver() and (stand_in / "libcuda.so.1").is_file():
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(stand_in), base.get("LD_LIBRARY_PATH")) if p)
    return env


def rate_text(gb: float, ts: list) -> str:
    return f"{gb / statistics.median(ts):.2f} GB/s ({', '.join(f'{gb / t:.2f}' for t in ts)})"


def targets(gb: float, times: dict, bad: set, rounds: int) -> list:
    """Issue 28's two lines: h5tile's default into device memory against the best peer of this
    run, into host memory against dd iflag=direct (medians of the rounds, every value after)."""
    lines = [f"targets (issue 28), medians of {rounds} round(s), every round's value in brackets:"]
    pairs = [("device", "h5tile device, default (auto)", [p for p in DEVICE_PEERS if times.get(p)]),
             ("host", "h5tile host, default (auto)", [DD_DIRECT] if times.get(DD_DIRECT) else [])]
    for where, ours, peers in pairs:
        if not times.get(ours):
            lines.append(f"  {where}: h5tile's default did not run here")
            continue
        missing = [p for p in (DEVICE_PEERS if where == "device" else (DD_DIRECT,)) if not times.get(p)]
        if not peers:
            lines.append(f"  {where}: h5tile default {rate_text(gb, times[ours])}; no peer ran "
                         f"(missing: {', '.join(missing)})")
            continue
        best = min(peers, key=lambda p: statistics.median(times[p]))
        ratio = statistics.median(times[best]) / statistics.median(times[ours])
        flag = "" if not (bad & {ours, best}) else "  WRONG DATA in " + ", ".join(sorted(bad & {ours, best}))
        lines.append(f"  {where}: h5tile default {rate_text(gb, times[ours])} / {best} {rate_text(gb, times[best])}"
                     f" = {ratio:.2f}x ({'met' if ratio >= 1.0 else 'NOT met'}: >= 1.0x)"
                     + (f"; not in this run: {', '.join(missing)}" if missing else "") + flag)
    return lines


def main():
    p = cold_parser(__doc__, 4, "/var/tmp/h5tile-cold-patterns")
    p.set_defaults(rounds=3)
    p.add_argument("--host-only", action="store_true")
    p.add_argument("--device-only", action="store_true")
    p.add_argument("--drop-caches", action="store_true", help="drop the whole page cache (root) instead of fadvise")
    p.add_argument("--default-only", action="store_true", help="h5tile's default only (not its parallel pattern)")
    p.add_argument("--no-legate", action="store_true", help="leave out legate.io.hdf5 and h5tile.legate")
    p.add_argument("--legate-config", default="", help="LEGATE_CONFIG of the Legate processes (default: --gpus 1 "
                   "--cpus 1 --sysmem 16000 --fbmem 60000 --zcmem 12288 for device reads; --gpus 0 --cpus 1 and "
                   "a --sysmem the file fits in for host reads)")
    p.add_argument("--timeout", type=float, default=300, help="seconds one engine's process may take")
    p.add_argument("--budget", type=float, default=0, help="seconds this run may take: no round starts that the "
                   "slowest round so far says would end past them (0: no limit)")
    p.add_argument("--extra", default="", help="more h5tile variants: 'label:VAR=value,VAR=value;label2:...'")
    p.add_argument("--json", default="", help="write every run here too")
    p.add_argument("--warm", action="store_true", help="then warm reads (median of 5 after one) by the default "
                   "and the parallel pattern, each in its own process")
    a = p.parse_args()
    started = time.monotonic()
    build = build_dir(a.build)
    python = use_package(build)
    import numpy as np
    import h5tile
    try:
        import cupy
        gpu = not a.host_only and cupy.cuda.runtime.getDeviceCount() > 0
    except Exception as e:  # noqa: BLE001 - no CuPy, or CuPy without a driver or a GPU
        gpu = False
        if not a.host_only:
            print(f"no device reads: {type(e).__name__}: {e}", flush=True)
    try:
        import kvikio  # noqa: F401
        kvik = gpu
    except ImportError:
        kvik = False
    legate = not a.no_legate and importlib.util.find_spec("legate") is not None
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    path, small = d / "cold.h5", d / "small.h5"
    rows = int(a.gib * 2**30) // 4 // 4096
    assert 0 < rows <= 2**24, "--gib: 16 KiB to 256 GiB (row indices are exact in float32)"
    data = np.empty((rows, 4096), np.float32)
    data[:] = np.arange(rows, dtype=np.float32)[:, None]
    h5tile.to_file(data, path, "/x", layout="contiguous").wait()
    del data
    h5tile.to_file(np.ones((64, 4096), np.float32), small, "/x", layout="contiguous").wait()
    gb = rows * 4096 * 4 / 1e9
    check = CHECK.format(shape=(rows, 4096))
    base = dict(os.environ)
    variants = [("default (auto)", {})]
    if not a.default_only:
        variants.append(("parallel (before)", {"H5TILE_COLD_READS": "parallel"}))
    for item in filter(None, a.extra.split(";")):
        label, _, assigns = item.partition(":")
        variants.append((label, dict(kv.split("=", 1) for kv in assigns.split(","))))
    engines = []  # (name, the Python code of its process and that process's environment) or (dd, None, direct)
    devices = ([] if a.device_only else [None]) + ([0] if gpu else [])
    # Legate reads into the framebuffer where the device reads run, else into host memory.
    legate_device = 0 if gpu else None
    if legate and legate_device is None and a.device_only:
        legate = False
    if not a.legate_config:
        a.legate_config = ("--gpus 1 --cpus 1 --sysmem 16000 --fbmem 60000 --zcmem 12288" if gpu else
                           f"--gpus 0 --cpus 1 --sysmem {int(gb * 1e9 / 2**20 * 1.25) + 512}")
    for device in devices:
        where = "host" if device is None else "device"
        for label, extra in variants:
            code = check + H5TILE.format(python=python, device=device, path=str(path), small=str(small))
            engines.append((f"h5tile {where}, {label}", code, {**base, **extra}))
        engines.append((f"h5py {where}", check + H5PY.format(device=device, path=str(path), small=str(small)), base))
        if device is not None and kvik:
            engines.append((DEVICE_PEERS[1], check + KVIKIO.format(path=str(path), small=str(small)), base))
        if legate and device == legate_device:
            env = legate_env(base, a.legate_config, build)
            for engine in ("legate.io.hdf5", "h5tile.legate"):
                code = check + LEGATE.format(python=python, engine=engine, device=device, path=str(path),
                                             small=str(small), config=a.legate_config)
                engines.append((f"{engine} {where}", code, env))
    engines.append((DD_DIRECT, None, True))
    engines.append(("dd bs=16M buffered", None, False))
    if legate:
        print(f"Legate engines into {'device' if legate_device is not None else 'host'} memory, "
              f"LEGATE_CONFIG={a.legate_config}", flush=True)
    else:
        print("Legate engines: " + ("left out (--no-legate)" if a.no_legate else
                                    "not installed here" if importlib.util.find_spec("legate") is None else
                                    "no device reads here (--device-only without a GPU)"), flush=True)
    times = {name: [] for name, _, _ in engines}
    notes = {}
    bad = set()
    slowest, rounds = 0.0, 0
    for r in range(a.rounds):
        if a.budget and r and time.monotonic() - started + slowest > a.budget:
            print(f"    stopped after {r} round(s): another would end past --budget {a.budget:.0f} s", flush=True)
            break
        round_start, rounds = time.monotonic(), r + 1
        k = r % len(engines)
        for name, code, env in engines[k:] + engines[:k]:
            evict(path, a.drop_caches)
            try:
                if code is None:
                    times[name].append(timed_dd(path, direct=env))
                    print(f"    {name}: {gb_of(path) / times[name][-1]:.2f} GB/s", flush=True)
                    continue
                res = run_json(code, env, a.timeout)
            except Exception as e:  # noqa: BLE001 - a peer that fails is reported, not fatal
                notes[name] = f"failed: {e}"
                print(f"    {name}: {notes[name]}", flush=True)
                continue
            times[name].append(res["s"])
            if not res["ok"]:
                bad.add(name)
            print(f"    {name}: {gb_of(path) / res['s']:.2f} GB/s {res.get('pattern', {}).get('detection', '')}"
                  + ("" if res["ok"] else " WRONG DATA"), flush=True)
            if "pattern" in res:
                pat = res["pattern"]
                notes[name] = (f"{pat['pattern']} {pat['readers']} x {pat['request_bytes'] >> 20} MiB; "
                               f"{pat['detection']}")
        slowest = max(slowest, time.monotonic() - round_start)
    for name in bad:
        notes[name] = notes.get(name, "") + "; WRONG DATA"
    warm = []
    if a.warm:
        for device in devices:
            for label, extra in variants[:2]:
                code = WARM.format(python=python, device=device, path=str(path))
                res = run_json(code, {**base, **extra}, a.timeout)
                warm.append((f"warm h5tile {'host' if device is None else 'device'}, {label}", gb / res["s"],
                             res["pattern"]["detection"]))
    path.unlink()
    small.unlink()
    print(f"cold reads of {gb:.2f} GB float32 ({rounds} rounds, engines rotated, "
          f"{'drop_caches' if a.drop_caches else 'fadvise DONTNEED'}), {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    ref = times.get(DD_DIRECT) or [float("nan")]
    ref_rate = gb / statistics.median(ref)
    for name, ts in times.items():
        if not ts:
            print(f"  {name:44s}   -    {notes.get(name, '')}")
            continue
        rate = gb / statistics.median(ts)
        print(f"  {name:44s} {rate:5.2f} GB/s {rate / ref_rate:5.2f}x dd direct  all "
              f"{', '.join(f'{gb / t:.2f}' for t in ts)}  {notes.get(name, '')}")
    for name, rate, detection in warm:
        print(f"  {name:44s} {rate:5.2f} GB/s (median of 5 after one)  {detection}")
    print("\n".join(targets(gb, times, bad, rounds)))
    if a.json:
        Path(a.json).write_text(json.dumps({"gb": gb, "times": times, "notes": notes,
                                            "wrong_data": sorted(bad)}, indent=1))
    if bad:
        sys.exit(f"wrong data from: {', '.join(sorted(bad))}")


if __name__ == "__main__":
    main()
