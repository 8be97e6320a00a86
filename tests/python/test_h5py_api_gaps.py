"""Issue 40: parts of h5py's API that h5py's own tests found missing from h5tile.File, each compared
with h5py on the same file (equal results, the same exception class): ``visit_links`` and
``visititems_links``; ``reversed()`` of a group and of its views; attribute names given as bytes;
``Dataset.iter_chunks``, ``len()``, ``scaleoffset``, ``filter_ids`` and ``compression`` of an
unknown filter; the ``astype()``/``asstr()`` views' properties; h5py's keywords of ``File`` and
``Group.get``."""
import re
import sys
import warnings

import h5py
import numpy as np
import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def both(path, mode="r", **kwargs):
    """h5py's File and h5tile's on `path`, opened alike."""
    return h5py.File(path, mode, **kwargs), h5tile.File(path, mode, **kwargs)


def outcome(call):
    """What ``call()`` gives, or the class of what it raises (to compare h5py with h5tile)."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the class is the outcome
        return type(e)


def same_outcome(h, t, call):
    """``call(h)`` and ``call(t)`` give equal values, or raise alike (h5tile's exception classes
    are subclasses of the built-in ones h5py raises)."""
    expected, got = outcome(lambda: call(h)), outcome(lambda: call(t))
    if isinstance(expected, type) and issubclass(expected, BaseException):
        assert isinstance(got, type) and issubclass(got, expected), (expected, got)
    else:
        assert got == expected


# -- 1. visit_links, visititems_links

@pytest.fixture(params=[False, True], ids=["name-order", "track-order"])
def linked(tmp_path, request):
    """Every kind of link (as test_links.py's file): second hard links to a group and to a
    dataset, soft (absolute, relative, dangling), external, a cycle."""
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = np.arange(3)
    path = tmp_path / "l.h5"
    with h5py.File(path, "w", track_order=request.param) as f:
        f["z"] = np.arange(3)
        entry = f.create_group("entry", track_order=request.param)
        entry["data"] = np.arange(5.0)
        entry.create_group("sub")["deep"] = np.arange(4)
        f["alias"] = f["z"]
        f["b_alias_group"] = f["entry"]
        f["soft"] = h5py.SoftLink("/entry")
        entry["rel"] = h5py.SoftLink("sub/deep")
        f["dangling"] = h5py.SoftLink("/nowhere")
        f["ext"] = h5py.ExternalLink("other.h5", "/x")
        entry["back"] = f["entry"]
        f.create_group("a_empty")
    return path


def link_items(group):
    """visititems_links as (name, link class name, its path and file where it has them)."""
    out = []
    group.visititems_links(lambda name, link: out.append((name, type(link).__name__, getattr(link, "path", None),
                                                          getattr(link, "filename", None))))
    return out


@pytest.mark.parametrize("start", ["/", "entry", "entry/sub", "b_alias_group", "a_empty"])
def test_visit_links_lists_every_link_as_h5py(linked, start):
    h, t = both(linked)
    with h, t:
        expected, got = [], []
        h[start].visit_links(expected.append)
        t[start].visit_links(got.append)
        assert got == expected
        assert link_items(t[start]) == link_items(h[start])


def test_visit_links_stops_at_the_first_answer(linked):
    h, t = both(linked)
    with h, t:
        for f in (h, t):
            seen = []
            assert f.visit_links(lambda name: seen.append(name) or (name if name == "dangling" else None)) == "dangling"
            assert seen[-1] == "dangling"
        seen_h, seen_t = [], []
        assert h.visititems_links(lambda n, link: seen_h.append(n) or -1) == -1
        assert t.visititems_links(lambda n, link: seen_t.append(n) or -1) == -1
        assert seen_t == seen_h and len(seen_t) == 1


def test_visit_links_through_groups_nested_deeper_than_the_recursion_limit(tmp_path):
    path = tmp_path / "deep.h5"
    depth = sys.getrecursionlimit() + 100
    with h5py.File(path, "w") as f:
        f.create_group("/".join(["g"] * depth))
    h, t = both(path)
    with h, t:
        expected, got = [], []
        h.visit_links(expected.append)
        t.visit_links(got.append)
        assert got == expected and len(got) == depth


# -- 2. reversed()

@pytest.mark.parametrize("start", ["/", "entry"])
def test_reversed_group_and_views_as_h5py(linked, start):
    h, t = both(linked)
    with h, t:
        assert list(reversed(t[start])) == list(reversed(h[start]))
        assert list(reversed(t[start].keys())) == list(reversed(h[start].keys()))
        assert [getattr(v, "name", v) for v in reversed(t[start].values())] == \
            [getattr(v, "name", v) for v in reversed(h[start].values())]
        assert [(k, getattr(v, "name", v)) for k, v in reversed(t[start].items())] == \
            [(k, getattr(v, "name", v)) for k, v in reversed(h[start].items())]
        # A dangling link's value is None in both (h5py's views use get).
        assert [getattr(v, "name", v) for v in t[start].values()] == [getattr(v, "name", v) for v in h[start].values()]
        same_outcome(h, t, lambda f: reversed(f[start].attrs))


def test_keys_view_is_shown_with_its_names(linked):
    with h5tile.File(linked) as t:
        assert repr(t["entry/sub"].keys()) == "<KeysView ['deep']>"


# -- 3. attribute names as bytes

def test_attribute_names_as_bytes_as_h5py(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f:
        f.attrs["ascii"] = 42
        f.attrs["non-ascii\xfe"] = 7
    h, t = both(path)
    with h, t:
        for name in [b"ascii", "non-ascii\xfe".encode(), b"missing"]:
            same_outcome(h, t, lambda f: f.attrs[name])
            same_outcome(h, t, lambda f: name in f.attrs)
            same_outcome(h, t, lambda f: f.attrs.get(name, "default"))
        # Bytes that are not UTF-8 name nothing h5tile lists: not found (h5py fails to word its
        # KeyError: UnicodeDecodeError).
        assert (b"non-ascii\xfe" in t.attrs) is (b"non-ascii\xfe" in h.attrs) is False
        assert t.attrs.get(b"non-ascii\xfe", "default") == "default"
        with pytest.raises(KeyError):
            t.attrs[b"non-ascii\xfe"]


def test_attribute_written_and_deleted_by_a_bytes_name(tmp_path):
    path = tmp_path / "w.h5"
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(3)
    with h5tile.File(path, "a") as t:
        t["x"].attrs[b"units"] = "m"
        assert t["x"].attrs["units"] == "m"
    with h5py.File(path, "r") as h:
        assert h["x"].attrs["units"] == "m"
    with h5tile.File(path, "a") as t:
        del t["x"].attrs[b"units"]
        assert b"units" not in t["x"].attrs


# -- 5. iter_chunks, len(), scaleoffset, filter_ids, compression

@pytest.fixture
def chunked(tmp_path):
    path = tmp_path / "c.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("d1", (100,), chunks=(32,), dtype="f4")
        f.create_dataset("d2", (100, 100), chunks=(32, 64), dtype="f4")
        f.create_dataset("d3", (5, 7, 9), chunks=(2, 3, 4), dtype="i2")
        f.create_dataset("tiny", (5, 5), chunks=(2, 2), dtype="f4")
        f.create_dataset("empty", (0,), chunks=(4,), maxshape=(None,), dtype="f4")
        f.create_dataset("contiguous", (10,), dtype="f4")
        f.create_dataset("scalar", (), dtype="f4")
    return path


ITER_CHUNKS = {
    "d1": [None, np.s_[50:97], np.s_[:50], np.s_[96], slice(0, 0), slice(10, 20, 3), (slice(5, 70),), 99, 100, -1,
           slice(-5, None), (slice(19, 67), 9), np.int64(3), "x"],
    "d2": [None, np.s_[48:52, 40:50], np.s_[:52, 40:], np.s_[96, 19:67], (slice(0, 100), slice(0, 101)),
           np.s_[3:5, 3:5], slice(0, 10)],
    "d3": [None, np.s_[1:4, 2:6, 3:9], np.s_[4, 6, 8], np.s_[0:5, 0:7, 1]],
    "tiny": [(slice(3, 5), slice(3, 5)), None],
    "empty": [None, slice(0, 1)],
    "contiguous": [None],
    "scalar": [None],
}


@pytest.mark.parametrize("name", list(ITER_CHUNKS))
def test_iter_chunks_as_h5py(chunked, name):
    h, t = both(chunked)
    with h, t:
        for sel in ITER_CHUNKS[name]:
            same_outcome(h, t, lambda f: list(f[name].iter_chunks(sel)))
            same_outcome(h, t, lambda f: f[name].iter_chunks(sel) is None)  # raised on the call, as h5py


def test_iter_chunks_is_an_iterator(chunked):
    with h5tile.File(chunked) as t:
        it = t["d1"].iter_chunks()
        assert next(it) == (slice(0, 32, 1),)
        assert list(it) == [(slice(32, 64, 1),), (slice(64, 96, 1),), (slice(96, 100, 1),)]


def test_len_method_as_h5py(chunked):
    h, t = both(chunked)
    with h, t:
        for name in ("d1", "d2", "scalar", "empty"):
            same_outcome(h, t, lambda f: f[name].len())
            same_outcome(h, t, lambda f: len(f[name]))


@pytest.fixture
def filtered(tmp_path):
    """Datasets of every filter h5py writes, and of a filter HDF5 does not have (256, which h5py
    writes with allow_unknown_filter)."""
    path = tmp_path / "f.h5"
    data = np.arange(1000, dtype="i8").reshape(10, 100)
    with h5py.File(path, "w") as f:
        f.create_dataset("plain", data=data)
        f.create_dataset("chunked", data=data, chunks=(5, 50))
        f.create_dataset("gzip", data=data, compression="gzip", compression_opts=7, shuffle=True, fletcher32=True)
        f.create_dataset("lzf", data=data.astype("f4"), compression="lzf", shuffle=True, fletcher32=True)
        f.create_dataset("so_auto", data=data, scaleoffset=True)
        f.create_dataset("so_bits", data=data, scaleoffset=12)
        f.create_dataset("so_float", data=data / 7.0, scaleoffset=4)
        f.create_dataset("so_gzip", data=data, scaleoffset=0, compression="gzip")
        f.create_dataset("unknown", (10, 10), dtype="u1", compression=256, allow_unknown_filter=True)
    return path


FILTERED = ["plain", "chunked", "gzip", "lzf", "so_auto", "so_bits", "so_float", "so_gzip", "unknown"]


@pytest.mark.parametrize("prop", ["filter_ids", "scaleoffset", "compression", "shuffle", "fletcher32"])
def test_filter_properties_as_h5py(filtered, prop):
    h, t = both(filtered)
    with h, t:
        for name in FILTERED:
            assert getattr(t[name], prop) == getattr(h[name], prop), name


def test_an_unknown_filter_id_is_read_from_its_name(filtered):
    with h5tile.File(filtered) as t:
        assert t["unknown"].filters == ("filter 256 (unknown to h5tile)",)
        assert t["unknown"].filter_ids == (256,)
        assert t["unknown"].compression == "unknown"


def test_every_filter_the_core_names_has_its_id():
    """Dataset._FILTER_IDS is the core's filter_name() (src/core/filter_ids.hpp) read backwards:
    a filter the core learns to name gets its ID in filter_ids too."""
    header = (ROOT / "src" / "core" / "filter_ids.hpp").read_text()
    constants = dict(re.findall(r"constexpr unsigned (kFilter\w+) = (\d+);", header))
    named = {name: int(constants.get(case, case)) for case, name in re.findall(r'case (\w+): return "(\w+)";', header)}
    assert len(named) > 20 and h5tile.Dataset._FILTER_IDS == named


def test_scaleoffset_data_reads_as_h5py(filtered):
    h, t = both(filtered)
    with h, t:
        for name in ("so_auto", "so_bits", "so_float", "so_gzip"):
            assert np.array_equal(t[name][...], h[name][...]), name


# -- 6. astype() and asstr() views

@pytest.fixture
def strings(tmp_path):
    path = tmp_path / "s.h5"
    ascii_vlen = h5py.string_dtype(encoding="ascii")
    with h5py.File(path, "w") as f:
        f.create_dataset("vlen", (5, 6), dtype=ascii_vlen, fillvalue=b"fill")
        f.create_dataset("vlen_scalar", (), dtype=ascii_vlen, fillvalue=b"fill")
        f["fixed"] = np.array([b"ab", b"cd", b"ef"])
        f["numbers"] = np.arange(12, dtype="i4").reshape(3, 4)
        f["number_scalar"] = np.int32(7)
    return path


VIEWS = {
    "astype_object": ("vlen", lambda ds: ds.astype(object)),
    "astype_object_scalar": ("vlen_scalar", lambda ds: ds.astype(object)),
    "asstr": ("vlen", lambda ds: ds.asstr()),
    "asstr_scalar": ("vlen_scalar", lambda ds: ds.asstr()),
    "asstr_fixed": ("fixed", lambda ds: ds.asstr()),
    "astype_f8": ("numbers", lambda ds: ds.astype("f8")),
    "astype_i1_scalar": ("number_scalar", lambda ds: ds.astype("i1")),
}


def same_value(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
    else:
        assert a == b


@pytest.mark.parametrize("view", list(VIEWS))
def test_views_as_h5py(strings, view):
    name, make = VIEWS[view]
    h, t = both(strings)
    with h, t:
        hv, tv = make(h[name]), make(t[name])
        for prop in ("dtype", "ndim", "shape", "size"):
            assert getattr(tv, prop) == getattr(hv, prop), prop
        same_outcome(hv, tv, len)
        same_value(np.asarray(tv), np.asarray(hv))
        if hv.dtype.kind == "O":  # (h5py converts numbers to no string dtype)
            same_value(np.array(tv, dtype="S10"), np.array(hv, dtype="S10"))
        keys = [(), ...] + ([] if hv.ndim == 0 else [0, (-1,) * hv.ndim, np.s_[1:3]])
        for key in keys:
            same_value(tv[key], hv[key])
        with pytest.raises(ValueError, match="memory allocation cannot be avoided"):
            np.array(tv, copy=False)


# -- 7. h5py's keywords of File and Group.get

@pytest.fixture
def plain(tmp_path):
    path = tmp_path / "p.h5"
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(10)
        f.create_group("g").attrs["a"] = 1
    return path


TAKEN = [dict(libver="latest"), dict(libver=("earliest", "v110")),
         dict(rdcc_nbytes=1 << 20, rdcc_nslots=521, rdcc_w0=0.5),
         dict(page_buf_size=16384, min_meta_keep=10, min_raw_keep=10), dict(locking=False), dict(locking="best-effort"),
         dict(swmr=True), dict(alignment_threshold=1, alignment_interval=4096, meta_block_size=4096),
         dict(track_order=True, track_times=False, fs_persist=False, fs_threshold=1), dict(driver="sec2"),
         dict(driver="stdio"), dict(driver="core"), dict(driver="core", backing_store=False, block_size=1 << 16)]


@pytest.mark.parametrize("kwargs", TAKEN, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_keywords_that_change_nothing_read_are_taken(plain, kwargs):
    h, t = both(plain, **kwargs)
    with h, t:
        assert np.array_equal(t["x"][...], h["x"][...])
        assert list(t) == list(h) and t["g"].attrs["a"] == h["g"].attrs["a"]
        assert t.driver == "sec2"  # h5tile's own reads of the file, whatever the driver asked
        assert t.userblock_size == h.userblock_size == 0
        assert t.swmr_mode is False  # never HDF5's SWMR mode


REFUSED = [dict(fs_strategy="page"), dict(locking="bogus"), dict(rdcc_w0=2), dict(rdcc_nslots="many"),
           dict(userblock_size=512), dict(driver="bogus"), dict(no_such_keyword=1), dict(driver="sec2", block_size=1),
           dict(driver="core", no_such_keyword=1), dict(track_times="yes")]


@pytest.mark.parametrize("kwargs", REFUSED, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("mode", ["r", "r+"])
def test_keywords_refused_as_h5py_refuses_them(plain, kwargs, mode):
    expected = outcome(lambda: h5py.File(plain, mode, **kwargs).close())
    assert isinstance(expected, type), kwargs  # h5py refuses them
    with pytest.raises(expected):
        h5tile.File(plain, mode, **kwargs)


@pytest.mark.parametrize("driver", ["family", "split", "multi", "fileobj", "mpio", "mpiposix", "ros3", 7])
def test_drivers_h5tile_cannot_read_through_are_refused_naming_them(plain, driver):
    with pytest.raises(ValueError, match=f"driver {driver!r}"):
        h5tile.File(plain, driver=driver)


def test_core_without_a_backing_store_is_refused_for_writing(plain):
    with pytest.raises(ValueError, match="backing_store=False"):
        h5tile.File(plain, "a", driver="core", backing_store=False)
    with h5tile.File(plain, "a", driver="core") as t:  # writes reach the file, as h5py's at close
        t.attrs["w"] = 1
    with h5py.File(plain, "r") as h:
        assert h.attrs["w"] == 1


def test_swmr_outside_mode_r_warns_as_h5py(plain):
    for library in (h5py, h5tile):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            library.File(plain, "a", swmr=True).close()
        assert [w.category for w in caught] == [UserWarning], library
        assert "swmr=True only affects read ('r') mode" in str(caught[0].message)


@pytest.mark.parametrize("size", [0, 512, 4096])
def test_userblock_size_as_h5py(tmp_path, size):
    path = tmp_path / "u.h5"
    with h5py.File(path, "w", userblock_size=size or None) as f:
        f["x"] = np.arange(3)
    with h5tile.File(path) as t, h5py.File(path, "r") as h:
        assert t.userblock_size == h.userblock_size == size
        assert np.array_equal(t["x"][...], h["x"][...])
    for asked in (size, size + 512, "many"):
        expected = outcome(lambda: h5py.File(path, "a", userblock_size=asked).close())
        if isinstance(expected, type):
            with pytest.raises(expected):
                h5tile.File(path, "a", userblock_size=asked)
        else:
            h5tile.File(path, "a", userblock_size=asked).close()


@pytest.fixture
def external(tmp_path):
    with h5py.File(tmp_path / "ext.h5", "w") as f:
        f.create_group("group")["data"] = np.arange(3)
    path = tmp_path / "main.h5"
    with h5py.File(path, "w") as f:
        f["ext_data"] = h5py.ExternalLink("ext.h5", "/group/data")
        f["x"] = np.arange(4)
    return path


@pytest.mark.parametrize("kwargs", [dict(elink_mode="r"), dict(elink_swmr=True), dict(elink_swmr=False),
                                    dict(elink_locking=False), dict(elink_locking="best-effort"),
                                    dict(elink_mode="r+"), dict(elink_locking="bogus"), dict(elink_mode="w")])
@pytest.mark.parametrize("name", ["ext_data", "x", "missing"])
def test_get_takes_h5py_external_link_keywords(external, kwargs, name):
    h, t = both(external)
    with h, t:
        same_outcome(h, t, lambda f: type(f.get(name, "default", **kwargs)).__name__)
        same_outcome(h, t, lambda f: f.get(name, getlink=True, **kwargs).__class__.__name__)
        got = outcome(lambda: t.get(name, **kwargs))
        if isinstance(got, h5tile.Dataset):
            assert np.array_equal(got[...], h[name][...])


def test_get_elink_mode_opens_the_other_file_in_that_mode(external):
    with h5tile.File(external, "a") as t:
        assert t.get("ext_data", elink_mode="r+").file.mode == "r+" and t["ext_data"].file.mode == "r+"
        read_only = t.get("ext_data", elink_mode="r")
        assert read_only.file.mode == "r" and np.array_equal(read_only[...], np.arange(3))
        with pytest.raises(OSError, match="read-only"):
            read_only[0] = 5
