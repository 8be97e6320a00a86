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
