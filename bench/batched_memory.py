#!/usr/bin/env python3
"""Memory of streaming a dataset larger than the blocks read, compressed and not (issue 19: "memory
stays bounded, as in the uncompressed path"): from_file_batched over the whole array in blocks of
BLOCK_MIB, each block summed and dropped, in a fresh process per case, reporting the growth of the
process's peak resident memory (VmHWM) over the loop, against h5py reading the same blocks one by
one. The array is bench/common/compressible.py's field (float32, chunks of 1 MiB), written once per
codec by h5tile (layout "chunked": one file) in the temporary folder (TMPDIR, else /tmp).

    python3 bench/batched_memory.py [MiB (default 1024)] [block MiB (default 64)]
"""
import json
import argparse
import os
import subprocess
import sys
import tempfile

from common import PACKAGE, use_package
from common.compressible import CHUNK, CODECS, field

FOLDER = os.path.join(tempfile.gettempdir(), "h5tile-batched-memory")

LOOP = """
import json, sys, time
sys.path.insert(0, {package!r})
import h5py, numpy as np
import h5tile

def peak_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

rows = {rows}
with h5py.File({path!r}, "r") as f:  # both engines open the file first, so that HDF5 is loaded
    shape = f["x"].shape
before = peak_kib()
t0 = time.perf_counter()
total = 0.0
if {engine!r} == "h5tile":
    for block, offset in h5tile.from_file_batched({path!r}, "/x", (rows, shape[1])):
        total += float(block.sum(dtype=np.float64))
        del block
else:
    with h5py.File({path!r}, "r") as f:
        for lo in range(0, shape[0], rows):
            block = f["x"][lo:lo + rows]
            total += float(block.sum(dtype=np.float64))
            del block
print(json.dumps({{"seconds": time.perf_counter() - t0, "peak_added_mib": (peak_kib() - before) / 1024,
                  "total": total}}))
"""


def run(engine, path, rows):
    out = subprocess.run([sys.executable, "-c", LOOP.format(package=PACKAGE, path=path, rows=rows, engine=engine)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mib", nargs="?", type=int, default=1024, help="size of the array (default 1024)")
    parser.add_argument("block_mib", nargs="?", type=int, default=64, help="size of a block (default 64)")
    args = parser.parse_args()
    mib, block_mib = args.mib, args.block_mib
    use_package()
    import h5tile
    a = field(mib)
    rows = block_mib * (1 << 20) // (a.shape[1] * a.itemsize)
    os.makedirs(FOLDER, exist_ok=True)
    print(f"{a.nbytes / 2**20:.0f} MiB float32 {a.shape}, chunks {CHUNK} = 1 MiB, blocks of {rows} rows = "
          f"{block_mib} MiB, {os.cpu_count()} CPUs; peak resident memory added over the loop (VmHWM)")
    print(f"{'file':24}{'engine':10}{'seconds':>9}{'peak added MiB':>16}{'/ block':>9}")
    cases = {"uncompressed (chunked)": {}}
    cases.update({name: ours for name, (ours, _) in CODECS.items()})
    expected = float(a.sum(dtype="float64"))
    for name, ours in cases.items():
        path = os.path.join(FOLDER, "x.h5")
        try:
            h5tile.to_file(a, path, "/x", layout="chunked", chunks=CHUNK, keep_previous=False, **ours).wait()
        except h5tile.InvalidArgumentError as e:  # a codec this h5tile was built without
            print(f"{name:24}skipped: {e}")
            continue
        for engine in ("h5tile", "h5py"):
            if engine == "h5py" and ours.get("compression") not in (None, "gzip"):
                continue  # h5py needs hdf5plugin for the others
            r = run(engine, path, rows)
            assert abs(r["total"] - expected) <= 1e-9 * abs(expected) + 1e-3, (name, engine, r["total"], expected)
            print(f"{name:24}{engine:10}{r['seconds']:9.3f}{r['peak_added_mib']:16.1f}"
                  f"{r['peak_added_mib'] / block_mib:8.2f}x", flush=True)
        os.unlink(path)
    os.rmdir(FOLDER)


if __name__ == "__main__":
    main()
