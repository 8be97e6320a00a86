#!/usr/bin/env python3
# Decided (GPU machine, one H200 + 16 cores + virtual disk, 2026-12-02, 2.15 GB, 3 rounds): stream 1 x 32 MiB, 1.73 GB/s against 1.62 for the parallel 16 x 8 MiB, so H5TILE_COLD_READS=auto streams cold reads with H5TILE_COLD_READERS=1 and H5TILE_COLD_REQUEST=32M.
"""Which reader count and request size read cold data fastest on this machine.

Sweeps buffered reads of one file by R readers (threads taking the next request in file order)
of Q bytes each, R x Q over --readers x --requests, with and without posix_fadvise(WILLNEED) of
the next round of requests ahead of the readers, the page cache emptied before every run
(posix_fadvise(DONTNEED) after fsync, which needs no root for clean pages; or, with
--drop-caches, `echo 3 > /proc/sys/vm/drop_caches` as root). `dd bs=16M iflag=direct` (the disk
without the cache) and h5tile's parallel pattern until now (one reader per core, 8 MiB tasks) run
beside them. The shapes take turns in every round; the median of the rounds counts.

Prints a table and, last, one line `decided: ...` that names the pattern for
H5TILE_COLD_READS=auto: `stream R x Q` (and the variables that set it) where the best stream
shape beats the parallel pattern by more than --margin, else `parallel`.

    python3 bench/probes/cold_read_shape.py [--gib 4] [--rounds 2] [--dir /var/tmp/h5tile-probe]
"""
import argparse
import itertools
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cold_patterns import evict  # noqa: E402  (the benchmark's eviction, the same in both)

MiB = 1 << 20


def write_file(path: Path, size: int) -> None:
    block = os.urandom(16 * MiB)
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n
        f.flush()
        os.fsync(f.fileno())


def cached_fraction(path: Path) -> float:
    """The share of the file's pages in the page cache (mincore(2) on a mapping, which reads nothing)."""
    import ctypes
    import mmap
    size = path.stat().st_size
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return -1.0
        vec = (ctypes.c_ubyte * pages)()
        ok = libc.mincore(addr, size, vec) == 0
        libc.munmap(addr, size)
        return sum(v & 1 for v in vec) / pages if ok else -1.0
    finally:
        os.close(fd)


def stream_read(path: Path, readers: int, request: int, ahead: bool) -> float:
    """Seconds to read the whole file by `readers` threads of `request`-byte preads in file order."""
    size = path.stat().st_size
    count = (size + request - 1) // request
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
    nxt = itertools.count()  # next() on it is atomic under the GIL: requests go out in file order
    errors = []

    def reader():
        buf = bytearray(request)
        view = memoryview(buf)
        try:
            while (i := next(nxt)) < count:
                if ahead and i + readers < count:
                    os.posix_fadvise(fd, (i + readers) * request, request, os.POSIX_FADV_WILLNEED)
                off = i * request
                want = min(request, size - off)
                got = 0
                while got < want:
                    n = os.preadv(fd, [view[got:want]], off + got)
                    if n <= 0:
                        raise OSError(f"short read at {off + got}")
                    got += n
        except Exception as e:  # noqa: BLE001 - reported after the run
            errors.append(e)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=reader) for _ in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    os.close(fd)
    if errors:
        raise errors[0]
    return seconds


def dd_direct(path: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(["dd", f"if={path}", "of=/dev/null", "bs=16M", "iflag=direct"], check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=4)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--dir", default="/var/tmp/h5tile-probe")
    p.add_argument("--readers", default="1,2,4,8")
    p.add_argument("--requests", default="4,16,64", help="request sizes in MiB")
    p.add_argument("--no-ahead", action="store_true", help="leave out the WILLNEED-ahead variants")
    p.add_argument("--margin", type=float, default=0.05, help="how much faster a stream must be than parallel")
    p.add_argument("--drop-caches", action="store_true", help="drop the whole page cache (root) instead of fadvise")
    a = p.parse_args()
    folder = Path(a.dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cold-probe.bin"
    size = int(a.gib * 2**30) // MiB * MiB
    write_file(path, size)
    evict(path, a.drop_caches)
    left = cached_fraction(path)
    if left > 0.05:
        print(f"the page cache kept {left:.0%} of the file after eviction (tmpfs?): no cold reads here")
        path.unlink()
        raise SystemExit(2)
    cores = os.cpu_count() or 1
    shapes = [("parallel", cores, 8 * MiB, False)]
    for r in (int(x) for x in a.readers.split(",")):
        for q in (int(x) * MiB for x in a.requests.split(",")):
            shapes.append(("stream", r, q, False))
            if not a.no_ahead:
                shapes.append(("stream+ahead", r, q, True))
    runs = {s: [] for s in shapes}
    dd = []
    try:
        for _ in range(a.rounds):
            for s in shapes:
                evict(path, a.drop_caches)
                runs[s].append(stream_read(path, s[1], s[2], s[3]))
                print(f"    {s[0]} {s[1]} x {s[2] // MiB} MiB: {size / 1e9 / runs[s][-1]:.2f} GB/s", flush=True)
            evict(path, a.drop_caches)
            dd.append(dd_direct(path))
    finally:
        path.unlink()
    gb = size / 1e9
    rate = {s: gb / statistics.median(t) for s, t in runs.items()}
    dd_rate = gb / statistics.median(dd)
    print(f"cold reads of {gb:.2f} GB, {cores} cores, load {os.getloadavg()[0]:.1f}, {a.rounds} rounds in turn "
          f"({'drop_caches' if a.drop_caches else 'fadvise DONTNEED'})")
    print(f"  {'dd bs=16M iflag=direct':32s} {dd_rate:5.2f} GB/s   all {', '.join(f'{gb / t:.2f}' for t in dd)}")
    for s, r in sorted(rate.items(), key=lambda kv: -kv[1]):
        name = f"{s[0]} {s[1]} x {s[2] // MiB} MiB"
        print(f"  {name:32s} {r:5.2f} GB/s  {r / dd_rate:4.2f}x dd direct   all "
              f"{', '.join(f'{gb / t:.2f}' for t in runs[s])}")
    parallel = rate[shapes[0]]
    best = max((s for s in shapes if s[0] != "parallel"), key=lambda s: rate[s])
    if rate[best] > parallel * (1 + a.margin):
        print(f"decided: stream {best[1]} x {best[2] // MiB} MiB{' with WILLNEED ahead' if best[3] else ''} "
              f"({rate[best]:.2f} GB/s, {rate[best] / parallel:.2f}x parallel): "
              f"H5TILE_COLD_READERS={best[1]} H5TILE_COLD_REQUEST={best[2] // MiB}M")
    else:
        print(f"decided: parallel (best stream {best[1]} x {best[2] // MiB} MiB {rate[best]:.2f} GB/s, "
              f"parallel {parallel:.2f})")


if __name__ == "__main__":
    main()
