"""h5py's Dataset API beyond reads, compared with h5py on the same file (issue 40): fillvalue,
is_virtual, asstr()."""
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

RECORD = np.dtype([("n", "<i4"), ("x", "<f8"), ("tag", "S3")])


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "api.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("seven", (4,), "i2", fillvalue=7)
        f.create_dataset("plain", (4,), "f4")
        f.create_dataset("chunked", (40,), "f8", chunks=(8,), fillvalue=-1.5, compression="gzip")
        f.create_dataset("record", (3,), RECORD, fillvalue=np.array((3, 2.5, b"ab"), RECORD))
        f.create_dataset("colour", (3,), h5py.enum_dtype({"R": 1, "G": 2}, "u1"), fillvalue=2)
        f.create_dataset("fixed", data=np.array([b"abc", b"de"], "S4"))
        f.create_dataset("utf8", data=["h\u00e9llo", "w\u00f6rld"], dtype=h5py.string_dtype("utf-8"))
        f.create_dataset("latin", data=np.array(["caf\u00e9".encode("latin-1")], "S5"))
        layout = h5py.VirtualLayout((4,), "f4")
        layout[:] = h5py.VirtualSource(".", "plain", shape=(4,))
        f.create_virtual_dataset("virtual", layout)
    return p


def test_fillvalue_as_h5py(path):
    with h5py.File(path, "r") as f, h5tile.File(path) as t:
        for name in ("seven", "plain", "chunked", "record", "colour", "fixed"):
            got, expected = t[name].fillvalue, f[name].fillvalue
            assert type(got) is type(expected), name
            assert np.asarray(got).dtype == np.asarray(expected).dtype, name
            assert np.asarray(got).tobytes() == np.asarray(expected).tobytes(), name
        assert t["seven"].fillvalue == 7 and t["chunked"].fillvalue == -1.5


def test_is_virtual_as_h5py(path):
    with h5py.File(path, "r") as f, h5tile.File(path) as t:
        for name in ("plain", "chunked", "virtual"):
            assert t[name].is_virtual == f[name].is_virtual, name
        assert t["virtual"].is_virtual


def test_asstr_as_h5py(path):
    with h5py.File(path, "r") as f, h5tile.File(path) as t:
        for name in ("fixed", "utf8"):
            got, expected = t[name].asstr()[...], f[name].asstr()[...]
            assert got.dtype == expected.dtype == object and list(got) == list(expected), name
            assert t[name].asstr()[1] == f[name].asstr()[1]
            assert np.asarray(t[name].asstr()).tolist() == np.asarray(f[name].asstr()).tolist()
        with pytest.raises(UnicodeDecodeError):
            f["latin"].asstr()[0]
        with pytest.raises(UnicodeDecodeError):
            t["latin"].asstr()[0]
        assert t["latin"].asstr("latin-1")[0] == f["latin"].asstr("latin-1")[0] == "caf\u00e9"
        assert t["latin"].asstr(errors="replace")[0] == f["latin"].asstr(errors="replace")[0]
        with pytest.raises(TypeError):
            f["plain"].asstr()
        with pytest.raises(TypeError, match="string"):
            t["plain"].asstr()


@pytest.mark.parametrize("chunks", [None, (64,)])
def test_storage_never_written_with_fill_time_never_reads_as_zeros_as_h5py(tmp_path, chunks):
    """HDF5 leaves the buffer as it was where nothing was written and the fill time is "never":
    h5py's buffers start as zeros; h5tile's are zeroed too, never what the memory held before
    (a read of sevens just before, whose memory the next read may reuse)."""
    path = tmp_path / "never.h5"
    with h5py.File(path, "w") as f:
        f["sevens"] = np.full(4096, 7.0)
        f.create_dataset("never", (4096,), "f8", chunks=chunks, fillvalue=3.0, fill_time="never")
        if chunks:
            f["never"][64:128] = 1.0  # one chunk written, the others never
    with h5py.File(path, "r") as ref, h5tile.File(path) as t:
        for _ in range(3):
            assert (t["sevens"][...] == 7.0).all()
            np.testing.assert_array_equal(t["never"][...], ref["never"][...])
        assert (t["never"][:64] == 0).all()


def test_named_datatypes_as_h5py(tmp_path):
    path = tmp_path / "types.h5"
    with h5py.File(path, "w") as f:
        f["fixed"] = np.dtype("S10")
        f["record"] = RECORD
        f["text"] = h5py.string_dtype()
        f["colour"] = h5py.enum_dtype({"R": 1, "G": 2}, "u1")
        f["record"].attrs["about"] = "a record"
        f["data"] = np.arange(3)
    with h5py.File(path, "r") as ref, h5tile.File(path) as t:
        for name in ("fixed", "record", "text", "colour"):
            mine, theirs = t[name], ref[name]
            assert isinstance(mine, h5tile.Datatype), name
            assert mine.dtype == theirs.dtype and mine.dtype.metadata == theirs.dtype.metadata, name
            assert repr(mine) == repr(theirs), name
        assert t["record"].attrs["about"] == ref["record"].attrs["about"]
        assert t.get("record", getclass=True) is h5tile.Datatype
        seen, expected = [], []
        t.visititems(lambda name, obj: seen.append((name, type(obj).__name__)))
        ref.visititems(lambda name, obj: expected.append((name, type(obj).__name__)))
        assert seen == expected
    assert repr(mine) == "<Closed HDF5 named type>"


def test_read_direct_refuses_what_h5py_refuses(tmp_path):
    path = tmp_path / "direct.h5"
    with h5py.File(path, "w") as f:
        f["a"] = np.arange(100)
        f["m"] = np.arange(100).reshape(10, 10)
        f["z"] = np.zeros((0, 20), "i8")
        f.create_dataset("text", (3,), dtype=h5py.string_dtype("ascii"), fillvalue=b"bar")
    with h5py.File(path, "r") as ref, h5tile.File(path) as t:
        for name, dest in (("a", np.ones(200)), ("m", np.ones((10, 10), order="F")), ("z", np.zeros((0, 25), "i8"))):
            with pytest.raises(TypeError):
                ref[name].read_direct(dest.copy(order="K"))
            with pytest.raises(TypeError):
                t[name].read_direct(dest.copy(order="K"))
        mine, theirs = np.zeros((0, 20), "i8"), np.zeros((0, 20), "i8")
        t["z"].read_direct(mine)
        ref["z"].read_direct(theirs)
        one = np.zeros(100)
        t["a"].read_direct(one)
        assert (one == np.arange(100)).all()
        assert t["text"].fillvalue == ref["text"].fillvalue == b"bar"


def test_external_filter_names_virtual_sources_and_attribute_order_as_h5py(tmp_path):
    path = tmp_path / "meta.h5"
    with h5py.File(path, "w") as f:
        f["a"] = np.arange(4.0)
        layout = h5py.VirtualLayout((4,), "f8")
        layout[:] = h5py.VirtualSource(".", "a", shape=(4,))
        f.create_virtual_dataset("v", layout)
        f.create_dataset("e", (10,), "i4", external=[("ext.bin", 0, 40)])
        f.create_dataset("g", (10,), "i4", compression="gzip", shuffle=True)
        ordered = f.create_group("ordered", track_order=True)
        for name in ("b", "a", "10", "2"):
            ordered.attrs[name] = 1
    with h5py.File(path, "r") as ref, h5tile.File(path) as t:
        assert t["e"].external == ref["e"].external
        assert t["g"].filter_names == ref["g"].filter_names
        assert [(s.file_name, s.dset_name) for s in t["v"].virtual_sources()] == \
            [(s.file_name, s.dset_name) for s in ref["v"].virtual_sources()]
        assert list(t["ordered"].attrs) == list(ref["ordered"].attrs) == ["b", "a", "10", "2"]
        assert list(t["g"].attrs) == list(ref["g"].attrs)


def test_group_writes_on_a_read_only_file_raise_as_h5py(tmp_path):
    path = tmp_path / "ro.h5"
    with h5py.File(path, "w") as f:
        f["g/x"] = np.arange(3)
    with h5py.File(path, "r") as ref, h5tile.File(path) as t:
        for make in (lambda f: f.create_group("new"), lambda f: f["g"].create_group("inner")):
            with pytest.raises(ValueError):
                make(ref)
            with pytest.raises(ValueError, match="read-only"):
                make(t)
        with pytest.raises(KeyError):
            del ref["g/x"]
        with pytest.raises(KeyError, match="read-only"):
            del t["g/x"]
    with h5tile.File(path) as t:
        assert "g/x" in t  # nothing was deleted
