#!/usr/bin/env python3
# To find where a whole from_file(device=0) of compressed chunks spends the ~9 ms per GiB that its GPU decode (decode_to_device, timed by auto) does not (issue 28, lz4 at 24.6 GB/s where its decode runs at 29-31): each layer of the read timed alone, GPU decode on and off.
"""Where a device read's time goes outside the decoder.

    H5TILE_BUILD_DIR=build-gpu H5TILE_NVCOMP_LIBRARY=... python3 bench/probes/device_read_overhead.py [--mib 1024]

For each file (lz4, zstd + shuffle, uncompressed; bench/compressible.py's field, 1 MiB chunks) and
decoder (H5TILE_GPU_DECODE=on / off, each in a process of its own), the best of 5 of:
from_file(device=0) as users call it; the same into a buffer allocated once (out=); a kept reader
(_Reader.read_into, no open per read); describe() alone (what from_file adds to find the shape);
and the decoder's own wall (last_device_io()["decode_phases"]["wall"]); of the kept reader's last
read, the core's whole read, its planning and the decoder's setup (last_device_io()'s "seconds",
"plan_seconds", decode_phases "setup"). Every result is compared
with the host read.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from compressible import CODECS, PACKAGE, field  # noqa: E402

CHILD = r"""
import json, sys, time
sys.path.insert(0, {package!r})
import cupy, numpy as np, h5tile
from h5tile import _h5tile
path = {path!r}
host = h5tile.from_file(path, "/x")
def sync():
    cupy.cuda.runtime.deviceSynchronize()
def best(run, n=5):
    run(); sync()
    times = []
    for _ in range(n):
        t0 = time.perf_counter(); run(); sync(); times.append(time.perf_counter() - t0)
    return min(times)
out = {{}}
def whole():
    a = h5tile.from_file(path, "/x", device=0)
    return a
out["from_file"] = best(whole)
assert bool((cupy.asnumpy(whole()) == host).all()), "from_file differs"
out["wall_from_file"] = h5tile.last_device_io()["decode_phases"]["wall"]
out["decoder"] = h5tile.last_device_io()["decoder"]
buf = cupy.empty(host.shape, host.dtype)
out["out="] = best(lambda: h5tile.from_file(path, "/x", device=0, out=buf))
reader = _h5tile._Reader(path, "/x", 0, 0)
out["kept reader"] = best(lambda: reader.read_into(buf, "", [0, 0]))
r = h5tile.last_device_io()
out["wall_kept"] = r["decode_phases"]["wall"]
out["setup"] = r["decode_phases"].get("setup", 0.0)
out["core"] = r.get("seconds", 0.0)
out["plan"] = r.get("plan_seconds", 0.0)
assert bool((cupy.asnumpy(buf) == host).all()), "kept reader differs"
out["describe"] = best(lambda: h5tile.describe(path, "/x"))
out["cupy.empty"] = best(lambda: cupy.empty(host.shape, host.dtype))
print("RESULT", json.dumps(out))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    sys.path.insert(0, PACKAGE)
    import h5tile
    a = field(args.mib)
    files = {"lz4 + shuffle": CODECS["lz4 + shuffle"][0], "zstd 3 + shuffle": CODECS["zstd 3 + shuffle"][0],
             "uncompressed (chunked)": {}}
    print(f"{a.nbytes / 2**30:.2f} GiB float32 {a.shape}, chunks (64, 4096), best of 5, ms")
    print(f"{'file':24}{'decode':8}{'from_file':>10}{'out=':>8}{'kept':>8}{'describe':>9}{'empty':>7}"
          f"{'wall(ff)':>9}{'wall(kept)':>11}{'core':>7}{'plan':>7}{'setup':>7}  decoder")
    with tempfile.TemporaryDirectory(prefix="h5tile-overhead-", dir=args.dir) as folder:
        path = os.path.join(folder, "x.h5")
        for label, opts in files.items():
            h5tile.to_file(a, path, "/x", layout="chunked", chunks=(64, 4096), **opts).wait()
            for mode in ("on", "off") if opts else ("auto",):
                env = dict(os.environ, H5TILE_GPU_DECODE=mode)
                run = subprocess.run([sys.executable, "-c", CHILD.format(package=PACKAGE, path=path)], env=env,
                                     capture_output=True, text=True)
                lines = [x for x in run.stdout.splitlines() if x.startswith("RESULT ")]
                if run.returncode != 0 or not lines:
                    print(f"{label:24}{mode:8} failed: {run.stderr.strip()[-400:]}")
                    continue
                r = json.loads(lines[-1][7:])
                ms = {k: v * 1e3 for k, v in r.items() if isinstance(v, float)}
                print(f"{label:24}{mode:8}{ms['from_file']:10.1f}{ms['out=']:8.1f}{ms['kept reader']:8.1f}"
                      f"{ms['describe']:9.2f}{ms['cupy.empty']:7.2f}{ms['wall_from_file']:9.1f}{ms['wall_kept']:11.1f}"
                      f"{ms['core']:7.1f}{ms['plan']:7.1f}{ms['setup']:7.2f}"
                      f"  {r['decoder'] or '-'}", flush=True)


if __name__ == "__main__":
    main()
