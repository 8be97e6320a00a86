#!/usr/bin/env python3
"""Makes the damaged files of this folder: a virtual dataset written by h5tile (2 tiles, HDF5
1.10.8), with one field of the global heap object that holds its mapping changed. HDF5 1.10.8
decodes that object in H5Dopen, and crashes or loops forever on each:

  global-heap-loop.h5          the first heap object's size grown to 0x140 (from 0x103): H5HG_read
                               (H5HG__protect) loops forever
  global-heap-size-segv.h5     that size's byte 3 set to 0xff (about 4 GiB): SIGSEGV reading past
                               the heap
  selection-rank-64-abort.h5   the rank of the first mapping's virtual selection set to 64 (HDF5
                               allows 32): H5S_select_deserialize overflows a fixed array, and
                               glibc's fortify check aborts (SIGABRT, "buffer overflow detected")

They are not fuzz inputs (scripts/fuzz.sh does not replay them: they fail in HDF5, not in
h5tile); tests/python/test_probe.py reads them. The files are kept, not made at test time: a
newer HDF5 writes the mapping otherwise. Usage: make_damaged.py [FOLDER] (default: beside it).
"""
import os
import pathlib
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(pathlib.Path(os.environ.get("H5TILE_BUILD_DIR", ROOT / "build")) / "python"))
import h5tile  # noqa: E402

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
with tempfile.TemporaryDirectory() as tmp:
    path = pathlib.Path(tmp) / "v.h5"
    h5tile.to_file(np.arange(64 * 8, dtype=np.int32).reshape(64, 8), path, "/data", ranks=2).wait()
    good = path.read_bytes()
heap = good.find(b"GCOL")
# Object 1 starts at heap + 16 (index, references, reserved, its size at heap + 24); its data at
# heap + 32: version, the number of mappings (8 bytes), then per mapping the source file and
# dataset names (each ending in a zero byte) and two serialised selections: the source's (all,
# 16 bytes), then the virtual one (a hyperslab: type, version, reserved, length, then its rank).
size = int.from_bytes(good[heap + 24:heap + 32], "little")
assert heap > 0 and 0x100 <= size < 0x140, "not the layout these offsets assume"
names_end = good.index(b"\0", good.index(b"\0", heap + 41) + 1) + 1
rank_at = names_end - heap + 16 + 16
assert good[heap + rank_at:heap + rank_at + 4] == (2).to_bytes(4, "little"), "the rank is not where expected"
for name, offset, value in [("global-heap-loop.h5", 24, 0x40), ("global-heap-size-segv.h5", 27, 0xff),
                            ("selection-rank-64-abort.h5", rank_at, 0x40)]:
    damaged = bytearray(good)
    damaged[heap + offset] = value
    (out / name).write_bytes(bytes(damaged))
    print(f"{out / name}: byte {heap + offset} set to {value:#x}")
