#!/usr/bin/env python3
"""Compressed reads: h5tile decoding chunks on its own workers (default), h5tile through HDF5
(H5TILE_RAW_IO=0, as before h5tile decoded them; hdf5plugin's plugins for the non-gzip codecs) and
h5py (+ hdf5plugin), on files h5py wrote of the same float32 data (a smooth field plus noise,
bench/compressible.py) in chunks of 1 MiB: gzip 4 + shuffle, zstd 3 + shuffle, lz4 + shuffle and
blosc (lz4, level 5, its own shuffle). Warm page cache. Each h5tile run is a fresh process (the
setting is read once); one warm-up read, then the best of REPEATS timed reads. Prints the ratio
of h5tile's time to h5py's. Uses the package in $H5TILE_BUILD_DIR/python (default build/python).

    python3 bench/compressed_read.py [MiB (default 512)] [codec names, comma-separated (default: all)]
"""
import os
import subprocess
import sys

import h5py
import hdf5plugin

from compressible import CHUNK, CODECS, PACKAGE, best_of, field

PATH = "/tmp/h5tile-compressed-read.h5"
REPEATS = 3
TIMED_READ = f"""
import sys
sys.path.insert(0, {PACKAGE!r})
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import h5tile
from compressible import best_of
print(best_of({REPEATS}, lambda: h5tile.from_file({PATH!r}, "/x")))
"""


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(CODECS)
    a = field(mib)
    print(f"{a.nbytes / 2**20:.0f} MiB float32 {a.shape}, chunks {CHUNK} = 1 MiB, {os.cpu_count()} CPUs, "
          f"hdf5plugin {hdf5plugin.version}, warm page cache")
    print(f"{'codec (ratio)':32}{'engine':32}{'time':>9}{'GB/s':>8}{'vs h5py':>9}")
    for name in names:
        with h5py.File(PATH, "w") as f:
            f.create_dataset("x", data=a, chunks=CHUNK, **CODECS[name][1](hdf5plugin))
        ratio = a.nbytes / os.path.getsize(PATH)
        with h5py.File(PATH) as f:
            h5py_s = best_of(REPEATS, lambda: f["x"][...])
        print(f"{name + f' ({ratio:.2f}x)':32}{'h5py':32}{h5py_s:8.3f}s{a.nbytes / h5py_s / 1e9:8.2f}{1:8.2f}x")
        for label, raw in (("h5tile (decodes itself)", "1"), ("h5tile H5TILE_RAW_IO=0 (HDF5)", "0")):
            env = dict(os.environ, H5TILE_RAW_IO=raw, HDF5_PLUGIN_PATH=hdf5plugin.PLUGIN_PATH)
            s = float(subprocess.run([sys.executable, "-c", TIMED_READ], env=env, check=True, capture_output=True,
                                     text=True).stdout)
            print(f"{'':32}{label:32}{s:8.3f}s{a.nbytes / s / 1e9:8.2f}{h5py_s / s:8.2f}x")
    os.unlink(PATH)


if __name__ == "__main__":
    main()
