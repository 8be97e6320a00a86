"""String datasets, read as h5py's ds[...] reads them: fixed-length strings (ASCII or UTF-8) as
NumPy S<n>, byte for byte (null-terminated and space-padded ones converted by HDF5, as for h5py);
variable-length strings as object arrays of bytes, read through HDF5. Whole, by box, 1-D, 2-D,
scalar, empty strings; describe names the character set. Fixed-length strings written (NumPy S<n>)
are what h5py and h5dump read; str and object arrays are refused clearly."""
import re
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

# Bytes after a null and trailing spaces: HDF5 zeroes them when it converts a null-terminated or
# space-padded type to the null-padded one h5py reads as (h5tile must too).
WORDS = [b"", b"a", b"tile", b"hdf5 file", b"\xc3\xa9t\xc3\xa9", b"x" * 17, b"", b"end", b"ab\x00zz", b"sp  "]


def words(shape, seed=0):
    rng = np.random.default_rng(seed)
    return np.array([WORDS[i] for i in rng.integers(0, len(WORDS), size=int(np.prod(shape)))],
                    dtype=object).reshape(shape)


def fixed_type(size, cset, pad):
    t = h5py.h5t.C_S1.copy()
    t.set_size(size)
    t.set_cset(cset)
    t.set_strpad(pad)
    return t


def write(path, name, data, h5type, shape, chunks=None, compression=None):
    """A dataset of HDF5 type `h5type` holding `data` (object array of bytes), written with h5py's
    low-level API so that the type (padding, character set) is exactly `h5type`."""
    with h5py.File(path, "a") as f:
        space = h5py.h5s.create_simple(shape) if shape != () else h5py.h5s.create(h5py.h5s.SCALAR)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        if chunks:
            dcpl.set_chunk(chunks)
        if compression:
            dcpl.set_deflate(4)
        ds = h5py.h5d.create(f.id, name.encode(), h5type, space, dcpl=dcpl)
        if h5type.is_variable_str():
            mem = h5py.h5t.C_S1.copy()
            mem.set_size(h5py.h5t.VARIABLE)
            mem.set_cset(h5type.get_cset())
            buf = np.array(data, dtype=h5py.string_dtype("utf-8" if h5type.get_cset() else "ascii"))
        else:
            mem = h5type
            buf = np.array(data, dtype=f"S{h5type.get_size()}")
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, buf, mtype=mem)


def h5py_read(path, name, region=None):
    with h5py.File(path) as f:
        return f[name][...] if region is None else f[name][region]


ASCII, UTF8 = h5py.h5t.CSET_ASCII, h5py.h5t.CSET_UTF8
FIXED = {
    "nullpad-ascii": (ASCII, h5py.h5t.STR_NULLPAD),
    "nullpad-utf8": (UTF8, h5py.h5t.STR_NULLPAD),
    "nullterm-ascii": (ASCII, h5py.h5t.STR_NULLTERM),
    "spacepad-utf8": (UTF8, h5py.h5t.STR_SPACEPAD),
}
SHAPES = {"1d": ((37,), (8,)), "2d": ((9, 7), (4, 3)), "scalar": ((), None)}


def layouts(storages):
    """(shape, storage) pairs: a scalar dataset is contiguous only (HDF5 cannot chunk it)."""
    return [pytest.param(shape, storage, id=f"{shape}-{storage}") for shape in SHAPES for storage in storages
            if shape != "scalar" or storage == "contiguous"]


@pytest.mark.parametrize("shape,storage", layouts(["contiguous", "chunked", "chunked-gzip"]))
@pytest.mark.parametrize("kind", FIXED)
def test_fixed_length_strings(tmp_path, kind, shape, storage):
    cset, pad = FIXED[kind]
    dims, chunks = SHAPES[shape]
    path = tmp_path / "fixed.h5"
    data = words(dims, seed=1)
    write(path, "s", data, fixed_type(12, cset, pad), dims, chunks if storage != "contiguous" else None,
          storage == "chunked-gzip")
    reference = h5py_read(path, "s")
    assert reference.dtype == np.dtype("S12")
    info = h5tile.describe(path, "/s")
    assert info["dtype"] == "S12" and info["charset"] == ("utf-8" if cset == UTF8 else "ascii"), info
    whole = h5tile.from_file(path, "/s")
    assert same_bytes(whole, reference)
    if dims:
        region = tuple(slice(1, n - 1) for n in dims)
        box = h5tile.read_box(path, "/s", [1] * len(dims), [n - 2 for n in dims])
        assert same_bytes(box, h5py_read(path, "s", region))
    if shape == "1d" and kind == "nullpad-ascii":
        blocks = [b for b, _ in h5tile.from_file_batched(path, "/s", (10,))]
        assert same_bytes(np.concatenate(blocks), reference)


def test_fixed_strings_h5py_wrote(tmp_path):
    # h5py's own writes: NumPy S<n> (ASCII), string_dtype('utf-8', n), a scalar np.bytes_.
    path = tmp_path / "h5py.h5"
    utf8 = h5py.string_dtype("utf-8", 8)
    with h5py.File(path, "w") as f:
        f["a"] = np.array([[b"ab", b""], [b"xyz", b"hdf5"]], dtype="S4")
        f.create_dataset("u", data=np.array(["é".encode(), b"", "日本".encode()], dtype=utf8), dtype=utf8)
        f["scalar"] = np.bytes_(b"hi")
    for name, charset in [("a", "ascii"), ("u", "utf-8"), ("scalar", "ascii")]:
        reference = h5py_read(path, name)
        got = h5tile.from_file(path, "/" + name)
        assert same_bytes(got, reference), name
        assert h5tile.describe(path, "/" + name)["charset"] == charset


@pytest.mark.parametrize("shape,storage", layouts(["contiguous", "chunked-gzip"]))
@pytest.mark.parametrize("cset", [ASCII, UTF8], ids=["ascii", "utf8"])
def test_variable_length_strings(tmp_path, cset, shape, storage):
    dims, chunks = SHAPES[shape]
    t = h5py.h5t.C_S1.copy()
    t.set_size(h5py.h5t.VARIABLE)
    t.set_cset(cset)
    path = tmp_path / "vlen.h5"
    data = words(dims, seed=2)
    write(path, "v", data, t, dims, chunks if storage != "contiguous" else None, storage == "chunked-gzip")
    reference = h5py_read(path, "v")
    info = h5tile.describe(path, "/v")
    assert info["dtype"] == "object" and info["charset"] == ("utf-8" if cset == UTF8 else "ascii"), info
    whole = h5tile.from_file(path, "/v")
    assert whole.dtype == np.dtype(object) and whole.shape == reference.shape
    assert all(type(x) is bytes for x in whole.flat)
    assert whole.tolist() == reference.tolist()
    if dims:
        region = tuple(slice(1, n - 1) for n in dims)
        box = h5tile.read_box(path, "/v", [1] * len(dims), [n - 2 for n in dims])
        assert box.dtype == np.dtype(object) and box.tolist() == h5py_read(path, "v", region).tolist()
        empty = h5tile.read_box(path, "/v", [0] * len(dims), [0] * len(dims))
        assert empty.dtype == np.dtype(object) and empty.shape == (0,) * len(dims)


def test_variable_length_strings_h5py_wrote(tmp_path):
    path = tmp_path / "h5py.h5"
    with h5py.File(path, "w") as f:
        f["str"] = np.array(["ab", "", "été"], dtype=h5py.string_dtype())
        f["bytes"] = np.array([[b"ab", b""], [b"", b"x" * 1000]], dtype=h5py.string_dtype("ascii"))
        f["scalar"] = "hello"
    for name in ["str", "bytes", "scalar"]:
        reference = h5py_read(path, name)
        got = h5tile.from_file(path, "/" + name)
        assert got.dtype == reference.dtype == np.dtype(object) and got.shape == reference.shape, name
        assert got.tolist() == reference.tolist(), name


def test_variable_length_string_errors(tmp_path):
    path = tmp_path / "v.h5"
    with h5py.File(path, "w") as f:
        f["v"] = np.array(["a", "b", "c"], dtype=h5py.string_dtype())
    with pytest.raises(h5tile.InvalidArgumentError, match="does not fit"):
        h5tile.read_box(path, "/v", [2], [2])
    with pytest.raises(h5tile.UnsupportedTypeError, match="out: unsupported dtype object: h5tile does not read into"):
        h5tile.from_file(path, "/v", out=np.empty(3, dtype=object))
    with pytest.raises(h5tile.UnsupportedTypeError, match="variable-length strings"):
        h5tile.from_file(path, "/v", out=np.empty(3, dtype="uint64"))
    with pytest.raises(h5tile.UnsupportedTypeError, match="variable-length strings"):
        next(iter(h5tile.from_file_batched(path, "/v", (2,))))


@pytest.mark.parametrize("layout,kwargs", [("contiguous", {}), ("chunked", {"chunks": (4, 3)}),
                                           ("chunked", {"chunks": (4, 3), "compression": "gzip", "shuffle": True}),
                                           ("virtual", {})], ids=["contiguous", "chunked", "gzip", "virtual"])
def test_fixed_strings_written_are_what_h5py_and_h5dump_read(tmp_path, layout, kwargs):
    # NumPy S<n> written as h5py writes it: HDF5's null-padded ASCII string of n bytes.
    a = np.array(words((9, 7), seed=4).tolist(), dtype="S12")
    path = tmp_path / "w.h5"
    h5tile.to_file(a, path, "/s", layout=layout, ranks=3, **kwargs).wait()
    with h5py.File(path) as f:
        t = f["s"].id.get_type()
        assert (t.get_size(), t.get_strpad(), t.get_cset()) == (12, h5py.h5t.STR_NULLPAD, ASCII)
        assert same_bytes(f["s"][...], a)
    assert same_bytes(h5tile.from_file(path, "/s"), a)
    out = np.empty((9, 7), dtype="S12")
    assert h5tile.from_file(path, "/s", out=out) is out and same_bytes(out, a)
    # h5dump prints strings (its binary output leaves them out): every element, as HDF5 reads it.
    dump = subprocess.run(["h5dump", "-d", "/s", "-w", "0", "w.h5"], capture_output=True, text=True, cwd=tmp_path)
    assert dump.returncode == 0, dump.stderr
    assert "STRSIZE 12;" in dump.stdout and "H5T_STR_NULLPAD" in dump.stdout, dump.stdout
    data = dump.stdout[dump.stdout.index("DATA {"):]
    data = data[:data.index("}")]
    printed = re.findall(r'"((?:[^"\\]|\\.)*)"', data)
    # h5dump prints bytes over 127 sign-extended (\37777777703 for \303): keep their low byte.
    printed = [re.sub(r"\\(\d{4,})", lambda m: f"\\{int(m.group(1), 8) & 0xFF:03o}", p) for p in printed]
    as_h5dump = ["".join(chr(c) if 32 <= c < 127 else f"\\{c:03o}" for c in w.ljust(12, b"\0")) for w in a.flat]
    assert printed == as_h5dump


def test_scalar_fixed_string_written(tmp_path):
    h5tile.to_file(np.array(b"hello", dtype="S8"), tmp_path / "w.h5", "/s", layout="contiguous").wait()
    assert h5py_read(tmp_path / "w.h5", "s") == np.bytes_(b"hello")


@pytest.mark.parametrize("array", [np.array(["ab", "c"]), np.array([b"ab", b"c"], dtype=object)], ids=["U", "object"])
def test_writing_str_and_object_arrays_is_refused_clearly(tmp_path, array):
    with pytest.raises(h5tile.UnsupportedTypeError, match=r"does not write str or object arrays.*S<n>"):
        h5tile.to_file(array, tmp_path / "w.h5", "/s", layout="contiguous")
    assert not (tmp_path / "w.h5").exists()


def test_a_fill_value_made_undefined_reads_as_h5py_reads_it(tmp_path):
    """HDF5 lets a dataset's fill value be undefined (H5Pset_fill_value with no value); h5py reads
    such datasets (unwritten elements: zeros, empty strings), and so must h5tile (it used to fail
    asking HDF5 for the fill value)."""
    import ctypes
    import glob
    import os
    libraries = [p for p in glob.glob(os.path.join(os.path.dirname(h5py.__file__), "..", "h5py.libs", "libhdf5-*"))
                 if "hl" not in os.path.basename(p)]
    if not libraries:
        pytest.skip("h5py's wheel has no bundled HDF5 library to call H5Pset_fill_value(..., NULL) through")
    hdf5 = ctypes.CDLL(libraries[0])
    path = tmp_path / "undefined.h5"
    with h5py.File(path, "w") as f:
        for name, dtype in (("v", h5py.string_dtype()), ("i", np.dtype("i4"))):
            tid = h5py.h5t.py_create(dtype, logical=True)
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            assert hdf5.H5Pset_fill_value(ctypes.c_int64(dcpl.id), ctypes.c_int64(tid.id), None) >= 0
            h5py.h5d.create(f.id, name.encode(), tid, h5py.h5s.create_simple((3,)), dcpl=dcpl)
        f["v"][0], f["i"][0] = "x", 1
    with h5py.File(path, "r") as f:
        expected = {name: f[name][...] for name in ("v", "i")}
    with h5tile.File(path) as f:
        for name, value in expected.items():
            got = f[name][...]
            assert got.dtype == value.dtype and got.tolist() == value.tolist(), name
