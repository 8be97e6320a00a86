"""Types h5tile's core does not read (variable-length sequences, references, compounds with
variable-length members, 128-bit floats) read through h5py where it is installed, as h5py reads
them; without h5py, the core's UnsupportedTypeError naming the type (issue 40, item 2)."""
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import _via_h5py  # noqa: E402


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "v.h5"
    with h5py.File(p, "w") as f:
        seq = f.create_dataset("seq", (3,), dtype=h5py.vlen_dtype("i4"), chunks=(2,), compression="gzip")
        seq[0], seq[1], seq[2] = [1, 2, 3], [], [7]
        f["x"] = np.arange(10)
        refs = f.create_dataset("refs", (2,), dtype=h5py.ref_dtype)
        refs[0], refs[1] = f["x"].ref, f["seq"].ref
        f["region"] = f["x"].regionref[2:5]
        record = np.dtype([("n", "i4"), ("s", h5py.string_dtype())])
        table = f.create_dataset("table", (2,), dtype=record)
        table[0], table[1] = (1, "a"), (2, "bb")
        f["quad"] = np.arange(3, dtype=np.longdouble) / 3
    return p


def same(got, expected):
    assert type(got) is type(expected)
    if isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        if expected.dtype.hasobject and expected.dtype.names is None:
            for a, b in zip(got.ravel(), expected.ravel()):
                same(a, b)
            return
        np.testing.assert_array_equal(got, expected)


def test_what_only_hdf5_reads_is_read_as_h5py_reads_it(path):
    with h5py.File(path, "r") as ref, h5tile.File(path) as t:
        for name in ("seq", "refs", "table", "quad"):
            assert t[name].dtype == ref[name].dtype and t[name].shape == ref[name].shape, name
            assert t[name].chunks == ref[name].chunks, name
            for key in ((), np.s_[1:], 0):
                same(t[name][key], ref[name][key])
        assert t["seq"].compression == "gzip"
        assert [t[r].name for r in t["refs"][...]] == ["/x", "/seq"]
        assert t[t["refs"][0]] == t["x"]
        np.testing.assert_array_equal(t["x"][t["region"][()]], ref["x"][ref["region"][()]])
        same(t["table"]["s"], ref["table"]["s"])


def test_without_h5py_the_type_is_refused_naming_it(path, monkeypatch):
    monkeypatch.setattr(_via_h5py, "_h5py_file", lambda: None)
    with h5tile.File(path) as t:
        with pytest.raises(h5tile.UnsupportedTypeError, match="variable-length sequence"):
            t["seq"][...]


def test_attributes_only_hdf5_reads_and_references_as_paths(path):
    with h5py.File(path, "a") as f:
        f["x"].attrs.create("vlen", data=np.array([np.arange(2), np.arange(3)], dtype=object),
                            dtype=h5py.vlen_dtype("i8"))
        f["x"].attrs["target"] = f["seq"].ref
    with h5py.File(path, "r") as ref, h5tile.File(path) as t:
        for got, expected in zip(t["x"].attrs["vlen"], ref["x"].attrs["vlen"]):
            np.testing.assert_array_equal(got, expected)
            assert got.dtype == expected.dtype
        # h5tile reads an object reference as the paths it leads to; a group opens it as h5py's reference.
        assert t["x"].attrs["target"] == ("/seq",) and t[t["x"].attrs["target"]] == t["seq"]


def test_a_file_open_for_writing_is_read_through_h5py_too(path):
    """A File in a write mode holds its file open, with HDF5's lock: h5py (another HDF5 library in
    the process) reads it after h5tile's changes are flushed, without a lock of its own, and sees
    those changes (before: BlockingIOError "unable to lock file")."""
    with h5py.File(path, "r") as f:
        expected = {name: f[name][()] for name in ("seq", "table", "quad")}
    with h5tile.File(path, "a") as f:
        for name, value in expected.items():
            same(f[name][()], value)
        f["seq"].attrs["note"] = "changed"
        f.create_dataset("more", data=[[1, 2], [3, 4]])
        same(f["seq"][()], expected["seq"])  # read through h5py after the changes
        f["seq"][1:3] = f["seq"][1:3][::-1]  # written by h5py, which h5tile lends the file to
        same(f["seq"][1:3], expected["seq"][1:3][::-1])
        assert f["seq"].attrs["note"] == "changed" and f["more"][1, 0] == 3
        assert f["refs"][0] and f[f["refs"][0]].name == "/x"
    with h5py.File(path, "r") as f:  # the changes were written, and h5tile let go of the file
        assert f["seq"].attrs["note"] == "changed" and f["more"][1, 1] == 4


def test_low_level_ids_see_each_change_and_close_at_the_next(path):
    """``.id`` gives h5py's identifiers of the objects, as the file is after h5tile's last change
    (in a write mode h5py's read-write open, which h5tile lends the file to: test_lent_to_h5py.py);
    the next change through h5tile, and closing the File, close them, as h5py's closing does."""
    with h5py.File(path, "r") as f:
        chunks = f["seq"].id.get_create_plist().get_chunk()
        size = f["x"].id.get_storage_size()
    with h5tile.File(path, "a") as f:
        assert f["seq"].id.get_create_plist().get_chunk() == chunks
        assert f["x"].id.get_storage_size() == size and f["x"].id.get_type().get_size() == 8
        f.create_dataset("new", data=np.arange(6, dtype="i2"), chunks=(3,))
        assert f["new"].id.get_create_plist().get_chunk() == (3,)  # after the change: seen
        f["seq"].attrs["a"] = 1
        assert f["seq"].attrs.get_id("a").get_type().get_size() == 8
        assert isinstance(f.id, h5py.h5f.FileID) and f.id.get_filesize() > 0
        kept = f["x"].id
        kept.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(10, dtype="<i8") * 3)
        np.testing.assert_array_equal(f["x"][()], np.arange(10) * 3)  # h5tile reads what it wrote
        f["seq"].attrs["b"] = 2
        assert not kept.valid  # a change closes the identifiers taken before it
        kept = f["x"].id
    assert not kept.valid  # and so does closing the File
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["x"][()], np.arange(10) * 3)
    with h5tile.File(path, "r") as f:
        kept = f["x"].id
        with pytest.raises(OSError):  # mode "r": h5py's read-only open, a write through it HDF5's error
            kept.write(h5py.h5s.ALL, h5py.h5s.ALL, np.zeros(10, dtype="<i8"))


def test_object_references_made_by_h5tile_objects_lead_back_to_them(path):
    """``obj.ref`` is an object reference (h5py's, made on its read-only open of the file) that
    ``f[ref]`` opens as the object, in h5tile and in h5py; region references (made by h5py) read
    as h5py reads them."""
    with h5tile.File(path, "a") as f:
        group = f.create_group("g")
        refs = {name: f[name].ref for name in ("x", "seq", "g")}
        for name, ref in refs.items():
            assert f[ref] == f[name] and f[ref].name == "/" + name
        assert isinstance(refs["g"], h5py.Reference) and f[refs["g"]] == group
        region = f["x"].regionref[2:5]
        assert f["x"][region].tolist() == list(range(2, 5)) and f["x"].regionref.shape(region) == (10,)
    with h5py.File(path, "r") as f:
        assert f[refs["x"]].name == "/x" and f[refs["g"]].name == "/g"
