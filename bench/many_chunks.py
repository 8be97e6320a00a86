#!/usr/bin/env python3
"""Reads of a dataset of many small chunks (256 MiB float32 in 16384 chunks of 16 KiB, raw and gzip 1,
written by h5py, and the raw ones again as h5tile writes them: HDF5's implicit chunk index) by h5py
and by h5tile, warm (the second read of each, every h5tile read checked equal to h5py's), then writes of the same
array in the same chunks (h5py's create_dataset against h5tile's to_file, layout chunked,
sync=False; one each): the case of BENCHMARKS.md where finding each chunk one by one costs time in
the square of the chunk count (HDF5 before 1.14).

    python3 bench/many_chunks.py [--build build] [--dir /tmp] [--keep] [--chunk-rows 4] [--rows 65536]
"""
import argparse
import time
from pathlib import Path

from common import build_dir, use_package


def warm_seconds(read, expected=None):
    """The second of two calls of `read`, seconds; each result checked equal to `expected`."""
    import numpy as np
    got = read()
    t0 = time.perf_counter()
    again = read()
    seconds = time.perf_counter() - t0
    if expected is not None:
        assert np.array_equal(got, expected) and np.array_equal(again, expected), "a read differs from h5py's"
    return seconds


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=str(build_dir()))
    p.add_argument("--dir", default="/tmp")
    p.add_argument("--keep", action="store_true", help="keep the file (for a run with another h5tile build)")
    p.add_argument("--chunk-rows", type=int, default=4,
                   help="rows of 1024 float32 per chunk (default 4: 16384 chunks of 16 KiB; 1: 65536 of 4 KiB)")
    p.add_argument("--reads-only", action="store_true",
                   help="no writes (h5tile's compressed writes of 65536 chunks take minutes without H5Dchunk_iter)")
    p.add_argument("--rows", type=int, default=65536, help="rows of 1024 float32 (default 65536: 256 MiB)")
    a = p.parse_args()
    use_package(a.build)
    import h5py
    import numpy as np
    import h5tile
    rows = a.chunk_rows
    chunks = a.rows // rows
    path = Path(a.dir) / f"h5tile-many-chunks-{rows}.h5"
    if not path.exists():
        data = np.arange(a.rows * 1024, dtype=np.float32).reshape(a.rows, 1024)
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=data, chunks=(rows, 1024))
            f.create_dataset("z", data=data, chunks=(rows, 1024), compression="gzip", compression_opts=1)
    print(f"{path}: {a.rows * 4096 / 2**20:g} MiB float32, {chunks} chunks of {4 * rows} KiB; "
          f"h5tile {h5tile.__version__} from {a.build}; warm seconds")
    with h5py.File(path, "r") as f:
        for name in ("x", "z"):
            h5py_s = warm_seconds(lambda: f[name][...])
            ours = warm_seconds(lambda: h5tile.from_file(path, name), f[name][...])
            print(f"  {name} ({'gzip 1' if name == 'z' else 'raw'}): h5py {h5py_s:.3f}, h5tile {ours:.3f} "
                  f"({h5py_s / ours:.2f}x h5py)")
    # The same raw chunks written by h5tile: HDF5's implicit chunk index (no lookups at all).
    mine = Path(a.dir) / "h5tile-many-chunks-implicit.h5"
    with h5py.File(path, "r") as f:
        h5tile.to_file(f["x"][...], mine, "/x", layout="chunked", chunks=(rows, 1024), sync=False).wait()
    with h5py.File(mine, "r") as f:
        h5py_s = warm_seconds(lambda: f["x"][...])
        ours = warm_seconds(lambda: h5tile.from_file(mine, "x"), f["x"][...])
    print(f"  x written by h5tile (implicit chunk index): h5py {h5py_s:.3f}, h5tile {ours:.3f} "
          f"({h5py_s / ours:.2f}x h5py)")
    mine.unlink()
    if a.reads_only:
        if not a.keep:
            path.unlink()
        return
    data = np.arange(a.rows * 1024, dtype=np.float32).reshape(a.rows, 1024)
    written = Path(a.dir) / "h5tile-many-chunks-write.h5"
    print("writes of the same array and chunks, seconds (one each)")
    for name, theirs, ours in (("raw", {}, {}), ("gzip 1", {"compression": "gzip", "compression_opts": 1},
                                                  {"compression": "gzip", "level": 1})):
        t0 = time.perf_counter()
        with h5py.File(written, "w") as f:
            f.create_dataset("x", data=data, chunks=(rows, 1024), **theirs)
        h5py_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        h5tile.to_file(data, written, "/x", layout="chunked", chunks=(rows, 1024), sync=False, **ours).wait()
        ours_s = time.perf_counter() - t0
        with h5py.File(written, "r") as f:
            assert np.array_equal(f["x"][...], data)
        print(f"  {name}: h5py {h5py_s:.3f}, h5tile {ours_s:.3f} ({h5py_s / ours_s:.2f}x h5py)")
    written.unlink()
    if not a.keep:
        path.unlink()


if __name__ == "__main__":
    main()
