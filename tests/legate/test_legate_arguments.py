"""h5tile.legate's arguments under real Legate: a dataset name that would lead the tile folders out
of '<path>.tiles/' is refused at the call, with nothing created; a wrong argument is an error
naming it (never nanobind's signature dump); a store of a struct or binary type is written as
HDF5's opaque type, as to_file writes NumPy's V<n>, and h5py reads the same bytes back."""
import os

import h5py
import numpy as np
import pytest

import h5tile
import h5tile.legate as hl
from legate.core import LogicalArray, get_legate_runtime
from legate.core import types as ty

LEAKS = ["incompatible function arguments", "Invoked with", "std::", "h5tile::", "nanobind"]
ROOT_ESCAPE = "h5tile-legate-escaped"


def tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def int_array(rows=301):
    store = get_legate_runtime().create_store(ty.int32, shape=(rows, 3))
    np.asarray(store.get_physical_store())[...] = np.arange(rows * 3, dtype=np.int32).reshape(rows, 3)
    return LogicalArray.from_store(store)


@pytest.mark.parametrize("name", ["/a/../../../escaped", "/../escaped", "/" + "../" * 40 + ROOT_ESCAPE, "/a//b",
                                  "/.", ""])
def test_to_file_refuses_names_that_leave_the_tile_folder(tmp_path, name):
    target = tmp_path / "p" / "q" / "r" / "out.h5"
    target.parent.mkdir(parents=True)
    array = int_array()
    before = tree(tmp_path)
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        hl.to_file(array, target, name)
    assert ("component" in str(e.value) or "empty" in str(e.value)) and "out.h5" in str(e.value), str(e.value)
    get_legate_runtime().issue_execution_fence(block=True)
    assert tree(tmp_path) == before
    assert not os.path.exists(os.path.join("/", ROOT_ESCAPE))


@pytest.mark.parametrize("call,argument", [
    (lambda p: hl.from_file(p, None), "dataset_name"),
    (lambda p: hl.from_file(None, "/d"), "path"),
    (lambda p: hl.from_file(p, 5), "dataset_name"),
    (lambda p: hl.from_file_batched(p, None, (2, 3)), "dataset_name"),
    (lambda p: hl.from_file_batched(object(), "/d", (2, 3)), "path"),
    (lambda p: hl.from_file_batched(p, "/d", None), "chunk"),
    (lambda p: hl.from_file_batched(p, "/d", (2, "3")), "chunk"),
    (lambda p: hl.to_file(int_array(), p.parent / "o.h5", None), "dataset_name"),
    (lambda p: hl.to_file(int_array(), None, "/d"), "path"),
    (lambda p: hl.to_file(int_array(), p.parent / "o.h5", "/d", sync="yes"), "sync"),
])
def test_a_wrong_argument_is_named(tmp_path, call, argument):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["d"] = np.arange(12, dtype=np.int32).reshape(4, 3)
    with pytest.raises(h5tile.Error) as e:
        call(tmp_path / "f.h5")
    assert isinstance(e.value, TypeError), repr(e.value)
    assert argument in str(e.value) and not any(leak in str(e.value) for leak in LEAKS), str(e.value)


@pytest.mark.parametrize("legate_type,size", [
    (ty.struct_type([ty.int32, ty.float64], align=True), 16),
    (ty.struct_type([ty.int8, ty.int16], align=False), 3),
    (ty.binary_type(5), 5),
])
@pytest.mark.parametrize("shape", [(301,), (37, 4), ()])
def test_a_struct_or_binary_store_is_written_as_opaque_bytes(tmp_path, legate_type, size, shape):
    store = get_legate_runtime().create_store(legate_type, shape=shape or (1,))
    count = int(np.prod(shape or (1,)))
    data = np.frombuffer(np.random.default_rng(size).bytes(count * size), np.uint8).reshape((shape or (1,)) + (size,))
    mapped = store.get_physical_store()
    np.asarray(mapped).view(np.uint8).reshape(data.shape)[...] = data
    del mapped
    if not shape:  # a 0-d store: as legate.io.hdf5 holds a scalar, through a store of shape (1,)
        store = store.project(0, 0)
    hl.to_file(LogicalArray.from_store(store), tmp_path / "o.h5", "/d")
    get_legate_runtime().issue_execution_fence(block=True)
    with h5py.File(tmp_path / "o.h5", "r") as f:
        read = f["d"][()]
        assert f["d"].dtype == np.dtype(f"V{size}") and f["d"].shape == shape
    assert np.array_equal(np.frombuffer(np.asarray(read).tobytes(), np.uint8).reshape(data.shape), data)
