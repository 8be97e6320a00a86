"""h5tile's h5py-style objects (File, Group, Dataset, attrs) against h5py itself: the same calls on
the same files (written by h5py), the same results and the same exception classes."""
import pickle
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

# name -> (array, create_dataset options): several dtypes, contiguous, chunked, compressed, scalar.
DATASETS = {
    "f8_contiguous": (random_array("float64", (23, 17), 1), {}),
    "i4_chunked": (random_array("int32", (40, 9), 2), {"chunks": (7, 4)}),
    "u2_gzip": ((np.arange(31 * 12 * 5) % 91).astype("uint16").reshape(31, 12, 5),
                {"chunks": (8, 5, 5), "compression": "gzip", "compression_opts": 6, "shuffle": True}),
    "c8_fletcher": (random_array("complex64", (19,), 3), {"chunks": (4,), "fletcher32": True}),
    "b_1d": (random_array("bool", (50,), 4), {}),
    "f2_chunked": (random_array("float16", (6, 7, 8), 5), {"chunks": (2, 3, 4)}),
    "grp/temp": (random_array("float32", (30, 20), 6), {"chunks": (10, 10), "compression": "gzip"}),
    "grp/sub/deep": (random_array("int64", (5, 4), 7), {}),
    "scalar_f8": (np.float64(2.5), {}),
    "scalar_i2": (np.int16(-7), {}),
    "empty_rows": (np.zeros((0, 4), "float32"), {}),
    "unlimited": (random_array("float32", (6, 3), 8), {"chunks": (2, 3), "maxshape": (None, 3)}),
}

ATTRIBUTES = {
    "int": np.int64(42),
    "float": 1.5,
    "f4_array": np.arange(6, dtype="float32").reshape(2, 3),
    "u8_array": np.arange(4, dtype="uint8"),
    "bool": np.bool_(True),
    "complex": np.complex128(1 - 2j),
    "text": "metres per second",
    "unicode": "Grüße, 温度",
    "texts": ["a", "bc", "def"],
    "fixed": np.bytes_(b"fixed"),
    "fixed_array": np.array([b"x", b"yz"], dtype="S2"),
    "empty": h5py.Empty("float32"),
}


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    path = tmp_path_factory.mktemp("parity") / "sample.h5"
    with h5py.File(path, "w") as f:
        for name, (data, options) in DATASETS.items():
            f.create_dataset(name, data=data, **options)
        for target in (f, f["grp"], f["grp/temp"], f["f8_contiguous"]):
            for name, value in ATTRIBUTES.items():
                target.attrs[name] = value
    return path


def equal(a, b) -> bool:
    """The same type, dtype, shape and bytes (NaN-safe), or equal strings."""
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return type(a) is type(b) and a == b
    if isinstance(a, h5py.Empty) or isinstance(b, h5tile.Empty):
        return isinstance(a, h5py.Empty) and isinstance(b, h5tile.Empty) and a.dtype == b.dtype
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if isinstance(a, np.ndarray) != isinstance(b, np.ndarray):
        return False
    if a_arr.dtype == object:
        return b_arr.dtype == object and a_arr.shape == b_arr.shape and a_arr.tolist() == b_arr.tolist()
    return same_bytes(a_arr, b_arr)


def test_groups_list_and_visit_as_h5py(sample):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        assert list(f.keys()) == list(ref.keys())
        assert list(f["grp"].keys()) == list(ref["grp"].keys())
        assert len(f) == len(ref) and len(f["grp"]) == len(ref["grp"])
        for name in ("grp", "grp/temp", "/grp/temp", "grp/sub/deep", "grp/sub", "nope", "grp/nope", "/"):
            assert (name in f) == (name in ref), name
        assert ("temp" in f["grp"]) == ("temp" in ref["grp"]) is True
        seen, ref_seen = [], []
        f.visit(seen.append)
        ref.visit(ref_seen.append)
        assert seen == ref_seen
        items, ref_items = [], []
        f["grp"].visititems(lambda n, o: items.append((n, type(o).__name__)))
        ref["grp"].visititems(lambda n, o: ref_items.append((n, type(o).__name__)))
        assert items == ref_items
        assert f.visit(lambda n: n if n.endswith("deep") else None) == ref.visit(
            lambda n: n if n.endswith("deep") else None)
        assert [k for k, _ in f.items()] == [k for k, _ in ref.items()]
        assert [type(v).__name__ for v in f.values()] == [type(v).__name__ for v in ref.values()]
        ds = f["grp"]["sub/deep"]
        assert ds.name == ref["grp"]["sub/deep"].name == "/grp/sub/deep"
        assert ds.parent.name == "/grp/sub" and ds.file == f and f["/grp/temp"].name == "/grp/temp"
        assert f["grp"].parent.name == "/" and f.name == "/"


@pytest.mark.parametrize("name", list(DATASETS))
def test_dataset_properties_as_h5py(sample, name):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        r, d = ref[name], f[name]
        for attribute in ("shape", "dtype", "ndim", "size", "nbytes", "chunks", "compression", "compression_opts",
                          "shuffle", "fletcher32", "name", "maxshape"):
            assert getattr(d, attribute) == getattr(r, attribute), attribute
        if r.shape:
            assert len(d) == len(r)
        else:
            with pytest.raises(TypeError):
                len(r)
            with pytest.raises(TypeError):
                len(d)


SELECTIONS_2D = [
    (), Ellipsis, (slice(None),), 0, -1, 5, (3, 4), (-2, -3), (slice(10, 20), slice(None, None, 2)),
    (slice(2, 3),), (slice(None, None, 3), 1), (Ellipsis, 2), (1, Ellipsis), (slice(5, 100),),
    (slice(-5, None), slice(-3, -1)), (slice(7, 2),), (slice(0, 0), slice(None)), (slice(1, 18, 4), slice(0, 17, 16)),
    (slice(100, 200),), (np.int64(3), np.uint8(2)),
]


@pytest.mark.parametrize("name", ["f8_contiguous", "i4_chunked", "grp/temp"])
@pytest.mark.parametrize("key", SELECTIONS_2D, ids=repr)
def test_slicing_2d_as_h5py(sample, name, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        expected, got = ref[name][key], f[name][key]
        assert equal(expected, got), (key, expected, got)
        if isinstance(got, np.ndarray):
            assert got.flags.c_contiguous


@pytest.mark.parametrize("key", [(slice(None), 3, slice(1, 4)), (Ellipsis, slice(None, None, 2)), (-1, -1, -1),
                                 (slice(2, 30, 7), slice(None), 4), (Ellipsis,), (0,), ()], ids=repr)
def test_slicing_3d_compressed_as_h5py(sample, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        assert equal(ref["u2_gzip"][key], f["u2_gzip"][key])
        assert equal(ref["f2_chunked"][key[:3] if isinstance(key, tuple) else key],
                     f["f2_chunked"][key[:3] if isinstance(key, tuple) else key])


@pytest.mark.parametrize("name", ["c8_fletcher", "b_1d", "empty_rows"])
@pytest.mark.parametrize("key", [(), Ellipsis, slice(2, 9, 3), slice(None, 4)], ids=repr)
def test_slicing_1d_and_empty_as_h5py(sample, name, key):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        assert equal(ref[name][key], f[name][key])


@pytest.mark.parametrize("name", ["scalar_f8", "scalar_i2"])
def test_scalar_datasets_as_h5py(sample, name):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        for key in ((), Ellipsis):
            expected, got = ref[name][key], f[name][key]
            assert type(got) is type(expected) and equal(expected, got), key
        assert equal(np.asarray(ref[name]), np.asarray(f[name]))
        with pytest.raises(ValueError):
            ref[name][0]
        with pytest.raises(ValueError):
            f[name][0]


def test_negative_steps_are_refused_as_h5py_refuses_them(sample):
    """h5py refuses negative steps (ValueError), and so does h5tile (it reversed the box, as
    NumPy, before it followed h5py's rules: tests/python/test_h5py_selections.py)."""
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        for key in [(slice(None, None, -1),), (slice(30, 2, -3), slice(None, None, -2)), (slice(-1, -5, -1), 2)]:
            with pytest.raises(ValueError):
                ref["i4_chunked"][key]
            with pytest.raises(ValueError, match="i4_chunked"):
                f["i4_chunked"][key]


@pytest.mark.parametrize("key, expected", [
    ((slice(None, None, 0),), ValueError),      # a step of 0
    ((40,), IndexError), ((-41,), IndexError),  # out of range
    ((1, 2, 3), (ValueError, IndexError)),     # too many indices (h5py: ValueError; NumPy: IndexError)
    ((Ellipsis, Ellipsis), (ValueError, IndexError)),
], ids=repr)
def test_bad_selections_raise_as_h5py(sample, key, expected):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        with pytest.raises(expected):
            ref["i4_chunked"][key]
        with pytest.raises(expected):
            f["i4_chunked"][key]


def test_a_fancy_selection_reads_as_h5py(sample):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        assert equal(ref["i4_chunked"][[1, 2, 3]], f["i4_chunked"][[1, 2, 3]])


def test_attributes_as_h5py(sample):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        for name in ("/", "grp", "grp/temp", "f8_contiguous"):
            r, a = ref[name].attrs, f[name].attrs
            assert sorted(a.keys()) == sorted(r.keys()) == sorted(ATTRIBUTES)
            for key in ATTRIBUTES:
                assert equal(r[key], a[key]), (name, key, r[key], a[key])
            assert "text" in a and "nope" not in a
            with pytest.raises(KeyError):
                r["nope"]
            with pytest.raises(KeyError):
                a["nope"]
            assert a.get("nope", 5) == 5


def test_attribute_writes_read_back_by_h5py(tmp_path, sample):
    path = tmp_path / "w.h5"
    path.write_bytes(sample.read_bytes())
    with h5tile.File(path, "r") as f:
        with pytest.raises(OSError, match="read-only"):
            f.attrs["x"] = 1
        with pytest.raises(OSError, match="read-only"):
            f["grp/temp"][...] = 0
    with h5tile.File(path, "a") as f:
        for name, value in ATTRIBUTES.items():
            f["grp"].attrs["new_" + name] = value
        f.attrs["text"] = "replaced"
        del f["f8_contiguous"].attrs["int"]
        with pytest.raises(KeyError):
            del f["f8_contiguous"].attrs["int"]
    with h5py.File(path) as ref, h5tile.File(path) as f:
        for name, value in ATTRIBUTES.items():
            if isinstance(value, h5py.Empty):
                assert ref["grp"].attrs["new_" + name] == value, name
            else:
                assert equal(ref["grp"].attrs[name], ref["grp"].attrs["new_" + name]), name
            assert equal(ref["grp"].attrs["new_" + name], f["grp"].attrs["new_" + name]), name
        assert ref.attrs["text"] == "replaced" and "int" not in ref["f8_contiguous"].attrs


def test_dataset_writes_keep_layout_filters_and_attributes(tmp_path, sample):
    path = tmp_path / "w.h5"
    path.write_bytes(sample.read_bytes())
    new = random_array("float32", (30, 20), 9)
    with h5tile.File(path, "r+") as f:
        ds = f["grp/temp"]
        ds[...] = new
        assert same_bytes(ds[...], new)
        ds[()] = 7  # broadcast, as h5py
        ds[2:4] = 1  # a part, in place (issue 41)
        f["f8_contiguous"][:] = np.ones((23, 17))
    with h5py.File(path) as ref:
        r = ref["grp/temp"]
        expected = np.full((30, 20), 7, np.float32)
        expected[2:4] = 1
        assert same_bytes(r[()], expected)
        assert r.chunks == (10, 10) and r.compression == "gzip" and r.compression_opts == 4
        for name in ATTRIBUTES:  # every attribute written back, as on the untouched group
            kept, untouched = r.attrs[name], ref["grp"].attrs[name]
            assert kept == untouched if isinstance(kept, h5py.Empty) else equal(untouched, kept), name
        assert r.attrs["empty"] == h5py.Empty("float32")
        assert (ref["f8_contiguous"][()] == 1).all() and ref["f8_contiguous"].chunks is None
        assert ref["f8_contiguous"].attrs["unicode"] == ATTRIBUTES["unicode"]
        assert same_bytes(ref["i4_chunked"][()], DATASETS["i4_chunked"][0])  # the other datasets stay


def test_create_dataset_in_append_mode(tmp_path, sample):
    path = tmp_path / "w.h5"
    path.write_bytes(sample.read_bytes())
    data = random_array("int16", (64, 3), 11)
    with h5tile.File(path, "a") as f:
        f.create_dataset("grp/made", data=data, chunks=(16, 3), compression="gzip", compression_opts=2)
        assert "made" in f["grp"]
        with pytest.raises(ValueError, match="already exists"):  # h5py 3: ValueError
            f.create_dataset("grp/made", data=data)
    with h5py.File(path) as ref:
        assert same_bytes(ref["grp/made"][()], data) and ref["grp/made"].compression_opts == 2


def test_read_direct_and_array_protocol(sample):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        r, d = ref["i4_chunked"], f["i4_chunked"]
        out_ref, out = np.zeros((40, 9), "int32"), np.zeros((40, 9), "int32")
        r.read_direct(out_ref)
        d.read_direct(out)
        assert same_bytes(out, out_ref)
        out_ref, out = np.zeros((10, 10), "int32"), np.zeros((10, 10), "int32")
        r.read_direct(out_ref, np.s_[5:10, 1:6], np.s_[2:7, 3:8])
        d.read_direct(out, np.s_[5:10, 1:6], np.s_[2:7, 3:8])
        assert same_bytes(out, out_ref)
        converted = np.zeros((40, 9), "float64")
        assert same_bytes(d.read(out=converted), r[()].astype("float64"))
        assert same_bytes(np.asarray(d), np.asarray(r))
        assert same_bytes(np.asarray(d, dtype="float32"), np.asarray(r, dtype="float32"))
        assert same_bytes(d.astype("float64")[3:5], r.astype("float64")[3:5])


def test_objects_pickle_and_reopen(sample):
    with h5tile.File(sample) as f:
        ds = f["grp/temp"]
        expected = ds[4:9, 2:]
        again = pickle.loads(pickle.dumps(ds))
        assert again.name == ds.name and again.shape == ds.shape and same_bytes(again[4:9, 2:], expected)
        group = pickle.loads(pickle.dumps(f["grp"]))
        assert list(group.keys()) == ["sub", "temp"]
        assert pickle.loads(pickle.dumps(f)).filename == str(sample)


def test_missing_names_are_key_errors_as_in_h5py(sample):
    with h5py.File(sample) as ref, h5tile.File(sample) as f:
        for name in ("nope", "grp/nope", "/grp/sub/nope", "nope/deeper"):
            with pytest.raises(KeyError):
                ref[name]
            with pytest.raises(KeyError) as e:
                f[name]
            assert isinstance(e.value, h5tile.DatasetNotFoundError) and isinstance(e.value, h5tile.Error)
            assert "sample.h5" in str(e.value) and not str(e.value).startswith("'")  # printed as other errors
    # The module-level functions raise the same class (ValueError as before, KeyError too).
    with pytest.raises(KeyError):
        h5tile.from_file(sample, "/nope")
    with pytest.raises(ValueError):
        h5tile.from_file(sample, "/nope")


def test_file_errors_as_in_h5py(tmp_path):
    cases = {"missing": (tmp_path / "missing.h5", FileNotFoundError),
             "directory": (tmp_path, IsADirectoryError),
             "not hdf5": (tmp_path / "text.h5", OSError)}
    (tmp_path / "text.h5").write_text("not an HDF5 file\n" * 100)
    for what, (path, expected) in cases.items():
        with pytest.raises(expected):
            h5py.File(path, "r")
        with pytest.raises(expected) as e:
            h5tile.File(path, "r")
        assert isinstance(e.value, h5tile.Error), what
        assert str(path) in str(e.value) or path.name in str(e.value), what
        with pytest.raises(expected):  # the module-level functions too
            h5tile.from_file(path, "/x")
    with pytest.raises(h5tile.NotHdf5FileError):  # existing except clauses still catch them
        h5tile.File(tmp_path / "text.h5")
    with pytest.raises(RuntimeError):
        h5tile.File(tmp_path / "text.h5")
    with pytest.raises(ValueError, match="mode"):
        h5tile.File(tmp_path / "text.h5", "rw")


def test_an_empty_file_name_is_an_error_that_says_so():
    """h5py refuses File("") with an OSError; h5tile's File raises its own (a FileNotFoundError, as
    Python's open("")), saying that the name is empty, not a bare RuntimeError."""
    with pytest.raises(OSError):
        h5py.File("", "r")
    with pytest.raises(OSError) as e:
        h5tile.File("")
    assert isinstance(e.value, (h5tile.NoSuchFileError, FileNotFoundError)) and "empty" in str(e.value)


def test_an_empty_file_name_is_named_by_every_reader_and_writer(tmp_path, monkeypatch):
    """The module's readers and writers say that the name is empty (or ends in '/', for a file to
    write), not a bare RuntimeError of the C++ library, and write nothing."""
    monkeypatch.chdir(tmp_path)
    calls = {"from_file": lambda: h5tile.from_file("", "/x"), "describe": lambda: h5tile.describe("", "/x"),
             "read_box": lambda: h5tile.read_box("", "/x", [0], [1]),
             "from_file_batched": lambda: h5tile.from_file_batched("", "/x", [1]),
             "to_file": lambda: h5tile.to_file(np.ones(3), "", "/x").wait()}
    for what, call in calls.items():
        with pytest.raises(h5tile.Error) as e:
            call()
        assert "empty" in str(e.value).replace(str(tmp_path), ""), (what, str(e.value))
    with pytest.raises(h5tile.IsADirectoryPathError, match="'out/'.*ending in '/'"):
        h5tile.to_file(np.ones(3), "out/", "/x").wait()
    assert list(tmp_path.iterdir()) == []


def test_closed_file_and_reprs(sample):
    f = h5tile.File(sample)
    ds = f["grp/temp"]
    assert "grp/temp" in repr(ds) and "(30, 20)" in repr(ds) and "sample.h5" in repr(f)
    assert bool(f) and bool(ds)
    f.close()
    assert not f and not ds and "Closed" in repr(f)
    with pytest.raises(ValueError, match="closed"):
        ds[0]
    with pytest.raises(ValueError, match="closed"):
        f["grp"]


def test_url_opens_read_only(nginx_server, sample):
    (nginx_server.root / "sample.h5").write_bytes(sample.read_bytes())
    url = f"{nginx_server.url}/sample.h5"
    with h5py.File(sample) as ref, h5tile.File(url) as f:
        assert list(f.keys()) == list(ref.keys())
        assert equal(ref["grp/temp"][3:7, ::3], f["grp/temp"][3:7, ::3])
        assert f.attrs["text"] == ref.attrs["text"]
    with pytest.raises(ValueError, match="URL"):
        h5tile.File(url, "a")


@pytest.mark.parametrize("key", [(slice(None, None, 7),), (slice(1, None, 5), slice(None, None, 3)),
                                 (slice(None, None, 9), 2), (slice(None, None, 11), 1),
                                 (slice(2, 30, 13), Ellipsis, slice(1, 4))], ids=repr)
def test_sparse_selections_read_in_slabs_as_numpy(sample, monkeypatch, key):
    """Where steps leave most of the covering box unread, one box per picked index is read (the
    memory stays at the result): the same values as one covering box gives."""
    from h5tile import _dataset
    reads = []
    original = _dataset.Dataset._read_box
    monkeypatch.setattr(_dataset.Dataset, "_read_box", lambda self, o, e, out=None, reader=None:
                        reads.append(tuple(e)) or original(self, o, e, out, reader))
    monkeypatch.setattr(_dataset, "_COVERING_BOX_BYTES", 0)
    with h5tile.File(sample) as f:
        for name in ("i4_chunked", "u2_gzip"):
            whole = f[name][()]
            reads.clear()
            got = f[name][key]
            assert equal(whole[key], got), (name, key)
            assert len(reads) > 1 and sum(e[0] for e in reads) < whole.shape[0], reads  # not one covering box
