"""The extension's HDF5 is its own: another HDF5 in the process's global symbol scope (as
cuPyNumeric puts Legate's there with RTLD_GLOBAL) does not take h5tile's HDF5 calls, in either
order, each in a fresh process. The other HDF5 here is the one h5py's wheel carries (or Legate's),
so this runs without Legate; tests/legate/test_import_order.py runs the real import orders."""
import ctypes
import glob
import json
import os
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
from h5tile import _h5tile  # noqa: E402


def other_hdf5_libraries():
    """HDF5 libraries that wheels carry (h5py's, Legate's), which are not the one h5tile built with."""
    import importlib.util
    found = []
    for package in ("h5py", "legate"):
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            continue
        site = pathlib.Path(spec.origin).parent.parent
        found += sorted(glob.glob(str(site / f"{package}.libs" / "libhdf5-*.so*")))
    return found


# The child: loads the other HDF5 with RTLD_GLOBAL before or after importing h5tile, then writes and
# reads with h5tile in every layout; what it read is saved for the parent to compare. It runs with
# LD_DEBUG=bindings: a mismatch does not always abort (HDF5 2.0 accepts 1.10's headers and runs
# on), so the test also asserts that nothing but the other library binds to the other library.
CHILD = r"""
import ctypes, json, sys
import numpy as np
args = json.loads(sys.argv[1])
if args["global_first"]:
    other = ctypes.CDLL(args["library"], mode=ctypes.RTLD_GLOBAL)
import h5tile
if not args["global_first"]:
    other = ctypes.CDLL(args["library"], mode=ctypes.RTLD_GLOBAL)
v = [ctypes.c_uint() for _ in range(3)]
other.H5get_libversion(*(ctypes.byref(x) for x in v))
print("other HDF5", ".".join(str(x.value) for x in v))
a = np.load(args["data"])
for layout in ("virtual", "contiguous", "chunked"):
    h5tile.to_file(a, f"{layout}.h5", "/x", layout=layout, ranks=3).wait()
    np.save(f"{layout}.npy", h5tile.from_file(f"{layout}.h5", "/x"))
"""


OTHER_HDF5 = other_hdf5_libraries()
SHARED_HDF5 = ("this build links HDF5's shared library into the extension (no static libhdf5 that can go into a "
               "shared object was found when it was configured: see CMake's warning), which takes the HDF5 "
               "that is in the global scope first")


@pytest.mark.parametrize("global_first", [True, False], ids=["other-hdf5-first", "h5tile-first"])
@pytest.mark.parametrize("other_hdf5", OTHER_HDF5 or [None], ids=[pathlib.Path(p).parent.name for p in OTHER_HDF5] or ["none"])
def test_another_hdf5_in_the_global_scope_leaves_h5tile_alone(other_hdf5, global_first, tmp_path):
    if other_hdf5 is None:
        pytest.skip("no other HDF5 library to load (neither h5py's wheel nor Legate's carries one here)")
    if global_first and _h5tile.hdf5_linkage() != "static":
        pytest.skip(SHARED_HDF5)
    data = random_array("float64", (301, 7), seed=3)
    np.save(tmp_path / "data.npy", data)
    args = {"library": other_hdf5, "global_first": global_first, "data": str(tmp_path / "data.npy")}
    (tmp_path / "ld").mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(BUILD / "python"), os.environ.get("PYTHONPATH")])),
               LD_DEBUG="bindings", LD_DEBUG_OUTPUT=str(tmp_path / "ld" / "bindings"))
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (f"h5tile with another HDF5 ({other_hdf5}) in the global scope: "
                                  f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-6000:]}")
    name = pathlib.Path(other_hdf5).name
    strays = set()
    for log in (tmp_path / "ld").iterdir():
        for line in log.read_text(errors="replace").splitlines():
            # "binding file <from> [0] to <to> [0]: normal symbol `H5open' [HDF5_SERIAL_1.8.7]"
            if " to " in line and "binding file " in line:
                source, target = line.split("binding file ", 1)[1].split(" to ", 1)
                if name in target and name not in source:
                    strays.add(f"{source.split(' [')[0]} -> {target.split(': ', 1)[-1]}")
    assert not strays, (f"{proc.stdout.strip()}: other libraries' symbols bound to {other_hdf5}: "
                        f"{sorted(strays)[:10]} ({len(strays)} in all)")
    for layout in ("virtual", "contiguous", "chunked"):
        assert same_bytes(np.load(tmp_path / f"{layout}.npy"), data), layout
        with h5py.File(tmp_path / f"{layout}.h5", "r") as f:
            assert same_bytes(f["x"][...], data), layout


def test_the_extension_neither_needs_nor_shows_hdf5_symbols():
    if _h5tile.hdf5_linkage() != "static":
        pytest.skip(SHARED_HDF5)
    module = pathlib.Path(_h5tile.__file__)
    needed = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True, check=True).stdout
    assert "hdf5" not in needed.lower(), needed
    symbols = subprocess.run(["nm", "-D", str(module)], capture_output=True, text=True, check=True).stdout.split("\n")
    hdf5_symbols = [line for line in symbols if line.split() and line.split()[-1].startswith(("H5", "h5tile_hdf5_"))]
    assert not hdf5_symbols, hdf5_symbols[:20]
