"""Dimension scales as h5py shows them (ds.dims, is_scale), compared with h5py on the same files:
one written with h5py's dimension-scale calls, one by netCDF4-python (issue 40)."""
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def scales_file(path):
    with h5py.File(path, "w") as f:
        f["data"] = np.ones((4, 3, 2), "f")
        f["plain"] = np.ones((4, 3), "f")
        for name, size, scale_name, axis in (("x1", 2, None, 2), ("x2", 2, "x2 name", 2), ("y1", 3, "y1 name", 1)):
            f[name] = np.arange(size, dtype="f")
            f[name].make_scale(scale_name or "")
            f["data"].dims[axis].attach_scale(f[name])
        f["data"].dims[0].label = "z"
        f["data"].dims[2].label = "x"


def describe(module, path, name):
    """What h5py's API shows of ds.dims, as plain values."""
    with module.File(path, "r") as f:
        ds = f[name]
        dims = ds.dims
        return {"len": len(dims), "labels": [d.label for d in dims], "counts": [len(d) for d in dims],
                "keys": [list(d.keys()) if len(d) else [] for d in dims],
                "values": [[v.name for v in d.values()] if len(d) else [] for d in dims],
                "names": [[k for k in d] if len(d) else [] for d in dims],
                "is_scale": ds.is_scale, "repr": repr(dims[ds.ndim - 1])[1:].split(" of ")[0]}


def test_dims_as_h5py(tmp_path):
    path = tmp_path / "scales.h5"
    scales_file(path)
    for name in ("data", "plain", "x1"):
        assert describe(h5tile, path, name) == describe(h5py, path, name), name
    with h5py.File(path, "r") as ref, h5tile.File(path) as f:
        assert f["data"].dims[2][1] == f["x2"] and f["data"].dims[2]["x2 name"] == f["x2"]
        assert f["data"].dims[2][""] == f["x1"] and ref["data"].dims[2][""] == ref["x1"]
        assert [d for d in f["data"].dims] == [f["data"].dims[i] for i in range(3)]
        for bad, error in (((lambda d: d.dims[3]), IndexError), ((lambda d: d.dims[2]["nothing"]), KeyError),
                           ((lambda d: d.dims[2][5]), IndexError)):
            with pytest.raises(error):
                bad(ref["data"])
            with pytest.raises(error):
                bad(f["data"])
        with pytest.raises(RuntimeError):
            ref["data"].dims[0][0]  # an axis without scales where others have some
        with pytest.raises(RuntimeError, match="no dimension scales"):
            f["data"].dims[0][0]
        with pytest.raises(RuntimeError):
            ref["plain"].dims[0][0]
        with pytest.raises(RuntimeError, match="no dimension scales"):
            f["plain"].dims[0][0]


def test_dims_of_a_netcdf4_file_as_h5py(tmp_path):
    netCDF4 = pytest.importorskip("netCDF4")
    netcdf4_file = tmp_path / "nc4.nc"
    with netCDF4.Dataset(netcdf4_file, "w", format="NETCDF4") as nc:
        nc.createDimension("time", None)
        nc.createDimension("lat", 3)
        nc.createDimension("lon", 4)
        nc.createDimension("bare", 2)  # a dimension without a variable: netCDF's phony scale
        for name, dims in (("time", ("time",)), ("lat", ("lat",)), ("lon", ("lon",)),
                           ("temp", ("time", "lat", "lon")), ("other", ("bare", "lon"))):
            nc.createVariable(name, "f4", dims)[:] = np.zeros([2 if d == "time" else 3 if d == "lat" else
                                                                4 if d == "lon" else 2 for d in dims])
    with h5py.File(netcdf4_file, "r") as ref:
        names = [n for n, o in ref.items() if isinstance(o, h5py.Dataset)]
    assert names
    for name in names:
        assert describe(h5tile, netcdf4_file, name) == describe(h5py, netcdf4_file, name), name
