#!/usr/bin/env python3
# Decides h5tile's lz4 block size (settings::lz4_block_size): the default stays 0 (one block per chunk, as hdf5plugin writes). H200 machine, 16 cores, 1 GiB, 2026-12-02: 64 KiB blocks take GPU decoding from 18.8 to 27.4 GB/s but host reads from 20.3 to 17.5 (2 cores: 2.97 to 2.26), so they stay a setting for files read on GPUs (BENCHMARKS.md, session 15).
"""The lz4 block size h5tile writes, by what it costs and gives: for each block size, one file of
float32 (the compressed benchmarks' field, lz4 + shuffle, chunks of 1 MiB) written by h5tile with
H5TILE_LZ4_BLOCK_SIZE set, then in a process of its own: warm reads into host memory (the CPU
codec) and, where CuPy sees a device, warm reads into device memory with the GPU decoding
(H5TILE_GPU_DECODE=on) and with the CPU decoding (off); the best of 3 after an untimed read.
Every device result is compared byte for byte with the host read, every host read with the data.

    python3 bench/probes/lz4_blocks.py [--mib 1024] [--blocks 0,16K,64K,256K]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from compressible import CHUNK, PACKAGE, field  # noqa: E402

READS = """
import json, sys, time
sys.path.insert(0, {package!r})
import numpy as np
import h5tile
out = {{}}
host = np.empty({shape!r}, np.float32)
def best(read, sync=lambda: None):
    read(); sync()
    times = []
    for _ in range(3):
        t0 = time.perf_counter(); read(); sync(); times.append(time.perf_counter() - t0)
    return min(times)
out["host"] = best(lambda: h5tile.from_file({path!r}, "/x", out=host))
expected = np.load({expected!r})
out["host_equal"] = bool(np.array_equal(host, expected))
try:
    import cupy
    cupy.cuda.runtime.getDeviceCount()
    cupy.empty(1)
except Exception as e:
    out["device"] = f"no device: {{type(e).__name__}}"
else:
    sync = cupy.cuda.runtime.deviceSynchronize
    for mode in ("on", "off"):
        h5tile.settings.set_gpu_decode(mode)
        last = {{}}
        def read():
            last["a"] = h5tile.from_file({path!r}, "/x", device=0)
        out[mode] = best(read, sync)
        out[mode + "_equal"] = bool((cupy.asnumpy(last["a"]) == host).all())
        out[mode + "_decoder"] = h5tile.last_device_io().get("decoder")
        del last["a"]
print(json.dumps(out))
"""


def size(text):
    units = {"K": 1 << 10, "M": 1 << 20}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--blocks", default="0,16K,64K,256K", help="block sizes (0: one block per chunk)")
    args = parser.parse_args()
    sys.path.insert(0, PACKAGE)
    import numpy as np
    import h5tile

    a = field(args.mib)
    rows = []
    with tempfile.TemporaryDirectory() as where:
        expected = os.path.join(where, "expected.npy")
        np.save(expected, a)
        for text in args.blocks.split(","):
            block = size(text)
            path = os.path.join(where, f"lz4-{block}.h5")
            h5tile.settings.set_lz4_block_size(block)
            t0 = time.perf_counter()
            h5tile.to_file(a, path, "/x", layout="chunked", chunks=CHUNK, compression="lz4", shuffle=True).wait()
            write = time.perf_counter() - t0
            ratio = a.nbytes / os.path.getsize(path)
            code = READS.format(package=PACKAGE, shape=a.shape, path=path, expected=expected)
            out = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                            text=True).stdout.splitlines()[-1])
            rows.append((text, ratio, write, out))
            os.unlink(path)
    gb = a.nbytes / 1e9
    print(f"{a.nbytes / 2**30:.2f} GiB float32, lz4 + shuffle, chunks {CHUNK} (1 MiB), {os.cpu_count()} CPUs; GB/s, "
          f"best of 3 warm reads")
    print(f"{'block':>8} {'ratio':>6} {'write':>7} {'host':>7} {'GPU on':>8} {'GPU off':>8}  equal")
    for text, ratio, write, out in rows:
        dev = [f"{gb / out[m]:8.2f}" if m in out else f"{'-':>8}" for m in ("on", "off")]
        equal = all(out.get(k, True) for k in ("host_equal", "on_equal", "off_equal"))
        print(f"{text:>8} {ratio:6.3f} {gb / write:7.2f} {gb / out['host']:7.2f} {dev[0]} {dev[1]}  "
              f"{'yes' if equal else 'NO'}" + (f"  ({out['device']})" if "device" in out else ""))


if __name__ == "__main__":
    main()
