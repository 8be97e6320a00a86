"""Writes the fuzzer's seed corpus (tests/fuzz/corpus/) and the files its virtual datasets map
(tests/fuzz/sources/, copied beside each input as it runs). Small files of every storage kind
h5tile reads: contiguous, chunked (partly allocated, filtered), compact, big-endian, 0-d,
virtual datasets written by h5tile (with the tile table) and by h5py (strided, same-file,
missing and outside sources). Rerun after changing it; the outputs are checked in.

    H5TILE_BUILD_DIR=build python3 tests/fuzz/make_corpus.py
"""
import os
import pathlib
import shutil
import sys

import h5py
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / os.environ.get("H5TILE_BUILD_DIR", "build") / "python"))
os.environ.setdefault("H5TILE_ALIGNMENT", "512")  # small seeds
import h5tile  # noqa: E402

corpus, sources = HERE / "corpus", HERE / "sources"
for d in (corpus, sources):
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
a = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)


def seed(name):
    return h5py.File(corpus / name, "w", libver="earliest")


with seed("contiguous.h5") as f:
    f["data"] = a
    f.create_group("grp")["scalar"] = np.int64(7)
with seed("chunked.h5") as f:
    d = f.create_dataset("data", (10, 12), np.int16, chunks=(4, 5), fillvalue=7)
    d[0:4, 0:5] = 1  # one chunk allocated, the rest fill value
    f.create_dataset("gzip", data=a, chunks=(4, 8), compression="gzip", shuffle=True, fletcher32=True)
with seed("compact_be.h5") as f:
    space = h5py.h5s.create_simple((6,))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_U8LE, space, dcpl=dcpl).write(
        h5py.h5s.ALL, h5py.h5s.ALL, np.arange(6, dtype=np.uint8))
    f.create_dataset("be", data=a.astype(">f8"))
    f.create_dataset("empty", shape=(0, 3), dtype=np.int32)

# Written by h5tile: the tiles live in sources/, the main files become seeds (each input is
# written as main.h5, so the relative tile paths resolve).
for layout in ("contiguous", "virtual"):
    h5tile.to_file(a, sources / "main.h5", "/data", ranks=4, layout=layout).wait()
    shutil.move(sources / "main.h5", corpus / f"h5tile_{layout}.h5")
h5tile.to_file(a.astype(np.complex64), sources / "main.h5", "/g/c", ranks=3, mode="w").wait()
shutil.move(sources / "main.h5", corpus / "h5tile_group.h5")
for p in sources.glob(".main.h5*"):
    p.unlink()
for p in sources.rglob(".superseded"):
    p.unlink()

# Virtual datasets written by h5py: a strided mapping from a source file, a same-file source,
# a missing source and one outside the folder.
with h5py.File(sources / "src.h5", "w", libver="earliest") as s:
    s["x"] = np.arange(40, dtype=np.int32).reshape(4, 10)
layout = h5py.VirtualLayout(shape=(4, 20), dtype=np.int32)
src = h5py.VirtualSource("src.h5", "x", shape=(4, 10))
layout[:, 0:20:2] = src
layout[:, 1:20:2] = h5py.VirtualSource(".", "plain", shape=(4, 10))
with seed("h5py_virtual.h5") as f:
    f["plain"] = np.ones((4, 10), np.int32)
    f.create_virtual_dataset("strided", layout, fillvalue=-1)
    missing = h5py.VirtualLayout(shape=(4, 10), dtype=np.int32)
    missing[:, :] = h5py.VirtualSource("nowhere.h5", "x", shape=(4, 10))
    f.create_virtual_dataset("missing", missing)
    outside = h5py.VirtualLayout(shape=(4, 10), dtype=np.int32)
    outside[:, :] = h5py.VirtualSource("../outside.h5", "x", shape=(4, 10))
    f.create_virtual_dataset("outside", outside)

for p in sorted(corpus.iterdir()):
    print(f"{p.name}: {p.stat().st_size} bytes")
