"""Every import order of a Legate program works, each in a fresh process: cuPyNumeric loads its
library with RTLD_GLOBAL, which puts the HDF5 of Legate's wheel (1.14) in the process's global
symbol scope, where a shared libhdf5 of h5tile's loaded later would bind to it (HDF5 aborted the
process: "Headers are 1.10.8, library is 1.14.6"). Each order runs a real h5tile.legate round trip
(from_file of a file h5py wrote, to_file of what was read) checked here against h5py and NumPy;
one also runs legate.io.hdf5 beside h5tile.legate in the same process, each reading the other's
file."""
import importlib.util
import json
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array, same_bytes
from h5tile import _h5tile

HAS_CUPYNUMERIC = importlib.util.find_spec("cupynumeric") is not None
SHARED_HDF5 = ("this build links HDF5's shared library into the extension (no static libhdf5 that can go into a "
               "shared object was found when it was configured: see CMake's warning), which takes Legate's "
               "HDF5 when cupynumeric is imported first")
SHAPE = (301, 7)

# The child: the imports in the order given, then the round trip. It saves what from_file read.
CHILD = r"""
import json, sys
args = json.loads(sys.argv[1])
for name in args["imports"]:
    __import__(name)
import numpy as np
import h5tile, h5tile.legate as hl
from legate.core import get_legate_runtime
runtime = get_legate_runtime()
a = hl.from_file(args["input"], "/in")
hl.to_file(a, args["output"], "/out")
runtime.issue_execution_fence(block=True)
np.save(args["read"], np.asarray(a.data.get_physical_store()))
if args.get("legate_io"):
    import legate.io.hdf5 as lh
    b = lh.from_file(args["output"], "/out")  # what h5tile.legate wrote, read by legate.io.hdf5
    lh.to_file(b, args["legate_io"], "/legate")
    runtime.issue_execution_fence(block=True)
    c = hl.from_file(args["legate_io"], "/legate")  # what legate.io.hdf5 wrote, read by h5tile
    runtime.issue_execution_fence(block=True)
    np.save(args["read_back"], np.asarray(c.data.get_physical_store()))
"""

ORDERS = {
    "cupynumeric-then-h5tile": ["cupynumeric"],
    "h5py-cupynumeric-then-h5tile": ["h5py", "cupynumeric"],
    "legate-then-h5tile": ["legate.core"],
    "legate-io-hdf5-then-h5tile": ["legate.io.hdf5"],
    "h5tile-then-cupynumeric": ["h5tile.legate", "cupynumeric"],
}


def run_child(imports, tmp_path, legate_io=False):
    if "cupynumeric" in imports and not HAS_CUPYNUMERIC:
        pytest.skip("cupynumeric is not installed (scripts/install_legate.sh installs it)")
    first = imports.index("h5tile.legate") if "h5tile.legate" in imports else len(imports)
    if "cupynumeric" in imports[:first] and _h5tile.hdf5_linkage() != "static":
        pytest.skip(SHARED_HDF5)
    data = random_array("float64", SHAPE, seed=len(imports))
    with h5py.File(tmp_path / "in.h5", "w") as f:
        f.create_dataset("in", data=data, chunks=(40, 7))
    args = {"imports": imports, "input": str(tmp_path / "in.h5"), "output": str(tmp_path / "out.h5"),
            "read": str(tmp_path / "read.npy")}
    if legate_io:
        args.update(legate_io=str(tmp_path / "legate.h5"), read_back=str(tmp_path / "read_back.npy"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(BUILD / "python"), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    err = proc.stderr if len(proc.stderr) <= 8000 else f"{proc.stderr[:3000]}\n[...]\n{proc.stderr[-5000:]}"
    assert proc.returncode == 0, f"imports {imports} then h5tile.legate: exit {proc.returncode}\n{proc.stdout}\n{err}"
    assert same_bytes(np.load(tmp_path / "read.npy"), data)
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert same_bytes(f["out"][...], data)
    return data


@pytest.mark.parametrize("order", ORDERS, ids=list(ORDERS))
def test_every_import_order_in_a_fresh_process(order, tmp_path):
    run_child(ORDERS[order], tmp_path)


def test_legate_io_hdf5_beside_h5tile_legate_in_one_process(tmp_path):
    # h5py first: legate.io.hdf5 imports h5py, which itself breaks when cupynumeric came first.
    data = run_child(["h5py", "cupynumeric", "legate.io.hdf5"], tmp_path, legate_io=True)
    assert same_bytes(np.load(tmp_path / "read_back.npy"), data)
    with h5py.File(tmp_path / "legate.h5", "r") as f:
        assert same_bytes(f["legate"][...], data)
