"""A dataset read into another numeric dtype (``Dataset.astype``, ``read_direct`` into an array of
another dtype, ``np.asarray(ds, dtype)``, ``read(out=)``) gives what h5py gives, since HDF5
converts for h5py: a value outside an integer type's range becomes the nearest limit (NumPy's
``astype`` would wrap it round). Every pair of integer and float dtypes, with the values at and
past each type's limits, compared bit for bit with h5py reading the same file."""
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

INTEGERS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]


def edge_values(dtype):
    """Values of `dtype` at, inside and (for the other types) past every integer type's limits."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        limits = [v for t in INTEGERS for v in (np.iinfo(t).min, np.iinfo(t).max)]
        finite = np.finfo(dtype).max
        values = [0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 127.5, -128.5, 255.5, 1e30, -1e30, finite, -finite,
                  np.inf, -np.inf] + [float(v) + d for v in limits for d in (-1.0, 0.0, 1.0)]
        with np.errstate(over="ignore"):
            return np.array(values, dtype=np.float64).astype(dtype)
    info = np.iinfo(dtype)
    values = {0, 1, -1, info.min, info.max, info.min + 1, info.max - 1}
    for t in INTEGERS:
        values.update(np.iinfo(t).min + d for d in (-1, 0, 1))
        values.update(np.iinfo(t).max + d for d in (-1, 0, 1))
    return np.array(sorted(v for v in values if info.min <= v <= info.max), dtype=dtype)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    path = tmp_path_factory.mktemp("conversions") / "edges.h5"
    with h5py.File(path, "w") as f:
        for name in INTEGERS + FLOATS:
            f[name] = edge_values(name)
    return path


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def h5py_converts(f, source, target):
    """What h5py gives, but for one pair: HDF5 2.0 (h5py's wheels) converts negative float16
    values to an unsigned type by wrapping them (-1.5 -> 65535 in uint16), unlike float32,
    float64 and every other pair, which give the limit (0). h5tile gives 0 there too."""
    expected = f[source].astype(target)[()]
    if source == "float16" and np.dtype(target).kind == "u":
        expected = expected.copy()
        expected[f[source][()] < 0] = 0
    return expected


@pytest.mark.parametrize("source", INTEGERS + FLOATS)
def test_every_numeric_conversion_equals_h5py(stored, source):
    with h5py.File(stored, "r") as f, h5tile.File(stored) as g:
        for target in INTEGERS + FLOATS:
            expected = h5py_converts(f, source, target)
            assert same(g[source].astype(target)[()], expected), (source, target, g[source].astype(target)[()],
                                                                  expected)
            into = np.zeros(expected.shape, target)
            g[source].read_direct(into)
            assert same(into, expected), (source, target, "read_direct")
            assert same(np.asarray(g[source], dtype=target), expected), (source, target, "__array__")
            part = np.zeros(4, target)
            g[source].read_direct(part, np.s_[2:6], np.s_[0:4])
            assert same(part, expected[2:6]), (source, target, "read_direct of a selection")


def test_nan_into_integers_equals_h5py(tmp_path):
    """NaN has no integer value: HDF5 converts it as the C cast does on this machine, and so does
    h5tile (both through the same instructions); h5py and h5tile agree here."""
    path = tmp_path / "nan.h5"
    with h5py.File(path, "w") as f:
        for name in FLOATS:
            f[name] = np.array([np.nan, 1.0, -np.nan], dtype=name)
    with h5py.File(path, "r") as f, h5tile.File(path) as g:
        for source in FLOATS:
            for target in INTEGERS:
                expected = h5py_converts(f, source, target)
                assert same(g[source].astype(target)[()], expected), (source, target)
