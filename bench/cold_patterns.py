#!/usr/bin/env python3
"""Cold reads of one contiguous float32 file by h5tile's default (H5TILE_COLD_READS=auto) against
its parallel pattern (the default before it: H5TILE_COLD_READS=parallel) and the peers, into host
memory and, where CuPy imports, into device memory: h5py (one H5Dread; -> cupy.asarray on the
device), KvikIO's CuFile.pread where it imports, and `dd bs=16M` (iflag=direct: the disk without
the page cache; buffered). Each read runs in its own process after the file is evicted from the
page cache (posix_fadvise(DONTNEED) after fsync, no root needed; --drop-caches: the whole cache,
as root), with CUDA's context and each engine's setup (a read of a small file) made before its
clock starts; the order of the engines rotates from round to round. Every h5tile read reports the
pattern that ran and what its page-cache sample found (last_read_pattern()).

    python3 bench/cold_patterns.py [--gib 4] [--rounds 3] [--host-only | --device-only]
        [--extra 'label:H5TILE_COLD_READERS=1,H5TILE_COLD_REQUEST=32M;...']
"""
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cold_read_modes import cold_parser, timed_dd

H5TILE = """
import json, sys, time
sys.path.insert(0, {python!r})
device = {device}
if device is not None:
    import cupy
    cupy.empty(1)
    cupy.cuda.runtime.deviceSynchronize()
import h5tile
h5tile.from_file({small!r}, "/x", device=device)
t0 = time.perf_counter()
a = h5tile.from_file({path!r}, "/x", device=device)
if device is not None:
    cupy.cuda.runtime.deviceSynchronize()
s = time.perf_counter() - t0
ok = bool((a[:: max(1, a.shape[0] // 64)] == 1).all())
print(json.dumps({{"s": s, "pattern": h5tile.last_read_pattern(), "ok": ok}}))
"""

H5PY = """
import json, time, h5py
device = {device}
if device is not None:
    import cupy
    cupy.empty(1)
    cupy.cuda.runtime.deviceSynchronize()
with h5py.File({small!r}, "r") as f:
    f["x"][...]
t0 = time.perf_counter()
with h5py.File({path!r}, "r") as f:
    a = f["x"][...]
if device is not None:
    a = cupy.asarray(a)
    cupy.cuda.runtime.deviceSynchronize()
print(json.dumps({{"s": time.perf_counter() - t0}}))
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
print(json.dumps({{"s": time.perf_counter() - t0}}))
"""


def gb_of(path: Path) -> float:
    return path.stat().st_size / 1e9


def evict(path: Path, drop: bool) -> None:
    if drop:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run_json(code: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = cold_parser(__doc__, 4, "/var/tmp/h5tile-cold-patterns")
    p.set_defaults(rounds=3)
    p.add_argument("--host-only", action="store_true")
    p.add_argument("--device-only", action="store_true")
    p.add_argument("--drop-caches", action="store_true", help="drop the whole page cache (root) instead of fadvise")
    p.add_argument("--extra", default="", help="more h5tile variants: 'label:VAR=value,VAR=value;label2:...'")
    p.add_argument("--json", default="", help="write every run here too")
    p.add_argument("--warm", action="store_true", help="then warm reads (median of 5 after one) by the default "
                   "and the parallel pattern, each in its own process")
    a = p.parse_args()
    python = str(Path(a.build).resolve() / "python")
    sys.path.insert(0, python)
    import numpy as np
    import h5tile
    try:
        import cupy  # noqa: F401
        gpu = not a.host_only
    except ImportError:
        gpu = False
    try:
        import kvikio  # noqa: F401
        kvik = gpu
    except ImportError:
        kvik = False
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    path, small = d / "cold.h5", d / "small.h5"
    rows = int(a.gib * 2**30) // 4 // 4096
    h5tile.to_file(np.ones((rows, 4096), np.float32), path, "/x", layout="contiguous").wait()
    h5tile.to_file(np.ones((64, 4096), np.float32), small, "/x", layout="contiguous").wait()
    gb = rows * 4096 * 4 / 1e9
    base = dict(os.environ)
    variants = [("default (auto)", {}), ("parallel (before)", {"H5TILE_COLD_READS": "parallel"})]
    for item in filter(None, a.extra.split(";")):
        label, _, assigns = item.partition(":")
        variants.append((label, dict(kv.split("=", 1) for kv in assigns.split(","))))
    engines = []
    devices = ([] if a.device_only else [None]) + ([0] if gpu else [])
    for device in devices:
        where = "host" if device is None else "device"
        for label, extra in variants:
            code = H5TILE.format(python=python, device=device, path=str(path), small=str(small))
            engines.append((f"h5tile {where}, {label}", code, extra))
        engines.append((f"h5py {where}", H5PY.format(device=device, path=str(path), small=str(small)), {}))
        if device is not None and kvik:
            engines.append(("KvikIO CuFile.pread -> device", KVIKIO.format(path=str(path), small=str(small)), {}))
    engines.append(("dd bs=16M iflag=direct", None, True))
    engines.append(("dd bs=16M buffered", None, False))
    times = {name: [] for name, _, _ in engines}
    notes = {}
    for r in range(a.rounds):
        k = r % len(engines)
        for name, code, extra in engines[k:] + engines[:k]:
            evict(path, a.drop_caches)
            try:
                if code is None:
                    times[name].append(timed_dd(path, extra))
                    print(f"    {name}: {gb_of(path) / times[name][-1]:.2f} GB/s", flush=True)
                    continue
                res = run_json(code, {**base, **extra})
            except Exception as e:  # noqa: BLE001 - a peer that fails is reported, not fatal
                notes[name] = f"failed: {e}"
                continue
            times[name].append(res["s"])
            print(f"    {name}: {gb_of(path) / res['s']:.2f} GB/s {res.get('pattern', {}).get('detection', '')}",
                  flush=True)
            if "pattern" in res:
                pat = res["pattern"]
                notes[name] = (f"{pat['pattern']} {pat['readers']} x {pat['request_bytes'] >> 20} MiB; "
                               f"{pat['detection']}" + ("" if res["ok"] else "; WRONG DATA"))
    warm = []
    if a.warm:
        for device in devices:
            for label, extra in variants[:2]:
                code = WARM.format(python=python, device=device, path=str(path))
                res = run_json(code, {**base, **extra})
                warm.append((f"warm h5tile {'host' if device is None else 'device'}, {label}", gb / res["s"],
                             res["pattern"]["detection"]))
    path.unlink()
    small.unlink()
    print(f"cold reads of {gb:.2f} GB float32 ({a.rounds} rounds, engines rotated, "
          f"{'drop_caches' if a.drop_caches else 'fadvise DONTNEED'}), {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    ref = times.get("dd bs=16M iflag=direct") or [float("nan")]
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
    if a.json:
        Path(a.json).write_text(json.dumps({"gb": gb, "times": times, "notes": notes}, indent=1))


if __name__ == "__main__":
    main()
