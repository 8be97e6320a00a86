"""Issue 40, item 1: every name h5py shows, h5tile.File shows and reads the same way: hard links
to one object under each name, soft links (absolute, relative, to groups and datasets, dangling),
external links (followed inside the file's folder, refused outside it), cycles, and track_order's
creation order; the xarray backend sees the linked variables of a NeXus-style file as h5netcdf
does. h5py reading the same file is the reference throughout."""
import os
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


@pytest.fixture(params=[False, True], ids=["name-order", "track-order"])
def linked(tmp_path, request):
    """A file of every kind of link, written by h5py (with track_order or not)."""
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = np.arange(7, dtype="i2")
        f.create_group("g")["y"] = np.ones((2, 3))
    path = tmp_path / "l.h5"
    with h5py.File(path, "w", track_order=request.param) as f:
        f["z"] = np.arange(3)
        entry = f.create_group("entry", track_order=request.param)
        entry["data"] = np.arange(5.0)
        entry.create_group("sub")["deep"] = np.arange(4, dtype="u1")
        f["alias"] = f["z"]                      # a second hard link to one dataset
        f["b_alias_group"] = f["entry"]          # and to one group
        f["soft"] = h5py.SoftLink("/entry")
        f["soft_data"] = h5py.SoftLink("/entry/data")
        entry["rel"] = h5py.SoftLink("sub/deep")  # relative to the group holding it
        entry["up"] = h5py.SoftLink("/z")
        f["chain"] = h5py.SoftLink("/soft_data")  # a soft link to a soft link
        f["dangling"] = h5py.SoftLink("/nowhere")
        f["ext"] = h5py.ExternalLink("other.h5", "/x")
        f["ext_group"] = h5py.ExternalLink("other.h5", "/g")
        entry["back"] = f["entry"]               # a cycle
        f.create_group("a_empty")
    return path


def names_of(group):
    return list(group.keys())


def test_every_name_is_listed_as_h5py_lists_it(linked):
    with h5py.File(linked, "r") as h, h5tile.File(linked) as t:
        for group in ["/", "entry", "entry/sub", "soft", "b_alias_group", "entry/back/back"]:
            assert names_of(t[group]) == names_of(h[group]), group
            assert len(t[group]) == len(h[group])
            assert list(iter(t[group])) == list(iter(h[group]))
        for name in ["z", "alias", "soft", "dangling", "ext", "nowhere", "entry/rel", "entry/back/data", "soft/sub",
                     "dangling/x", "z/x", "", "..", "entry/..", "/", "./z", "chain", "entry/up"]:
            assert (name in t) == (name in h), name


def test_every_name_reads_what_h5py_reads(linked):
    with h5py.File(linked, "r") as h, h5tile.File(linked) as t:
        for name in ["z", "alias", "soft_data", "chain", "entry/rel", "entry/up", "soft/data", "soft/sub/deep",
                     "b_alias_group/data", "entry/back/back/sub/deep", "ext"]:
            assert isinstance(t[name], h5tile.Dataset), name
            assert same_bytes(t[name][...], h[name][...]), name
        for name in ["soft", "b_alias_group", "entry/back"]:
            assert isinstance(t[name], h5tile.Group), name
            assert sorted(t[name].keys()) == sorted(h[name].keys())
        with pytest.raises(KeyError):
            t["dangling"]
        with pytest.raises(KeyError):
            t["nowhere"]
        with pytest.raises(TypeError):
            5 in t  # noqa: B015 (h5py raises TypeError too)


def test_links_as_h5py_gives_them(linked):
    with h5py.File(linked, "r") as h, h5tile.File(linked) as t:
        for name, kind in [("z", "HardLink"), ("soft", "SoftLink"), ("dangling", "SoftLink"), ("ext", "ExternalLink"),
                           ("entry/rel", "SoftLink"), ("entry/back", "HardLink")]:
            mine, theirs = t.get(name, getlink=True), h.get(name, getlink=True)
            assert type(mine).__name__ == type(theirs).__name__ == kind, name
            assert t.get(name, getlink=True, getclass=True) is type(mine)
            if kind != "HardLink":
                assert mine.path == theirs.path
            if kind == "ExternalLink":
                assert mine.filename == theirs.filename
        assert t.get("nowhere", getlink=True) is None and t.get("nowhere", "d") == "d"


def test_an_external_link_out_of_the_folder_is_refused_naming_it(tmp_path):
    (tmp_path / "in").mkdir()
    with h5py.File(tmp_path / "outside.h5", "w") as f:
        f["x"] = np.arange(3)
    with h5py.File(tmp_path / "in" / "m.h5", "w") as f:
        f["out"] = h5py.ExternalLink("../outside.h5", "/x")
    with h5tile.File(tmp_path / "in" / "m.h5") as t:
        assert list(t.keys()) == ["out"] and "out" in t
        with pytest.raises(h5tile.VirtualSourceError, match="outside"):
            t["out"][...]


def test_the_xarray_backend_sees_linked_variables_as_h5netcdf_does(tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    path = tmp_path / "nexus.h5"
    with h5py.File(path, "w") as f:
        instrument = f.create_group("entry/instrument/detector")
        instrument["counts"] = np.arange(12.0).reshape(3, 4)
        instrument["x"] = np.arange(4.0)
        data = f.create_group("entry/data")
        data["counts"] = h5py.SoftLink("/entry/instrument/detector/counts")  # NeXus: the plottable data
        data["x"] = f["entry/instrument/detector/x"]                         # a hard link
        data["own"] = np.arange(3)
    with xr.open_dataset(path, engine="h5tile", group="entry/data", phony_dims="sort") as got, \
            xr.open_dataset(path, engine="h5netcdf", group="entry/data", phony_dims="sort") as expected:
        assert sorted(got.variables) == sorted(expected.variables) == ["counts", "own", "x"]
        xr.testing.assert_identical(got.load(), expected.load())


def test_a_cycle_of_groups_is_listed_once_by_visit(linked):
    with h5py.File(linked, "r") as h, h5tile.File(linked) as t:
        seen_h, seen_t = [], []
        h.visit(seen_h.append)
        t.visit(seen_t.append)
        assert seen_t == seen_h  # each object once, under the name h5py visits it by, in its order


def test_info_and_verify_check_every_dataset_once_naming_every_name(linked):
    import json
    import subprocess
    h5tile_command = str(BUILD / "cli" / "h5tile")
    # h5py's reference: every hard-linked name of each dataset, by object identity.
    names = {}
    with h5py.File(linked, "r") as f:
        def collect(group, prefix):
            for key in group:
                link = group.get(key, getlink=True)
                if isinstance(link, h5py.HardLink):
                    obj = group[key]
                    if isinstance(obj, h5py.Dataset):
                        names.setdefault(obj.id, set()).add(prefix + key)  # equal ids: one object
                    elif prefix + key + "/" not in seen:
                        seen.add(prefix + key + "/")
                        if obj.id not in groups:
                            groups.add(obj.id)
                            collect(obj, prefix + key + "/")
        seen, groups = set(), set()
        collect(f, "/")
    expected = sorted(sorted(v) for v in names.values())
    info = json.loads(subprocess.run([h5tile_command, "info", str(linked), "--json"], capture_output=True, text=True,
                                     timeout=120, check=True).stdout)
    got = sorted(sorted([d["name"], *d.get("also", [])]) for d in info["datasets"])
    assert got == expected
    out = subprocess.run([h5tile_command, "verify", "--read", str(linked), "--json"], capture_output=True, text=True,
                         timeout=120)
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["ok"], out.stdout
    assert sorted(sorted([d["name"], *d.get("also", [])]) for d in report["datasets"]) == expected
    text = subprocess.run([h5tile_command, "verify", str(linked)], capture_output=True, text=True, timeout=120).stdout
    assert "ok: /alias (also /z)" in text, text


@pytest.mark.parametrize("libver", [("earliest", "v110"), ("v110", "v112")])
def test_h5pys_documented_virtual_dataset_of_1d_sources_in_a_2d_layout_reads(tmp_path, libver):
    # Issue 40: h5py's own example (1-D sources stacked into a 2-D layout) was refused
    # ("it has shape [100] but the mapping reads [0:100] of it into [0:1, 0:100]"): HDF5 reads it.
    for i in range(4):
        with h5py.File(tmp_path / f"{i}.h5", "w") as f:
            f["data"] = np.arange(100) + i * 100
    layout = h5py.VirtualLayout(shape=(4, 100), dtype="i8")
    for i in range(4):
        layout[i] = h5py.VirtualSource(f"{i}.h5", "data", shape=(100,))
    path = tmp_path / "VDS.h5"
    with h5py.File(path, "w", libver=libver) as f:
        f.create_virtual_dataset("vdata", layout, fillvalue=-5)
    with h5py.File(path, "r") as f:
        expected = f["vdata"][...]
    assert same_bytes(h5tile.from_file(path, "/vdata"), expected)
    assert same_bytes(h5tile.read_box(path, "/vdata", [1, 10], [2, 50]), expected[1:3, 10:60])
    with h5tile.File(path) as f:
        assert same_bytes(f["vdata"][2:, ::3], expected[2:, ::3])
    import subprocess
    out = subprocess.run([str(BUILD / "cli" / "h5tile"), "verify", "--read", str(path)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and "ok: /vdata" in out.stdout, out.stdout
    (tmp_path / "2.h5").unlink()  # a missing source is still an error, never fill values
    with pytest.raises(h5tile.VirtualSourceError, match="2.h5"):
        h5tile.from_file(path, "/vdata")


def test_two_names_of_one_object_are_equal_as_in_h5py(linked):
    with h5py.File(linked, "r") as h, h5tile.File(linked) as t:
        for a, b in [("z", "alias"), ("entry", "soft"), ("entry", "b_alias_group"), ("entry/data", "soft_data"),
                     ("entry/data", "chain"), ("z", "entry/data"), ("entry", "entry/sub")]:
            assert (t[a] == t[b]) == (h[a] == h[b]), (a, b)
            if h[a] == h[b]:
                assert hash(t[a]) == hash(t[b])
        assert len({t["z"], t["alias"], t["entry/data"]}) == 2


def test_visit_from_a_group_and_named_datatypes_as_h5py(tmp_path):
    path = tmp_path / "t.h5"
    with h5py.File(path, "w") as f:
        f["t"] = np.dtype("i4")  # a named datatype
        g = f.create_group("g")
        g["d"] = np.arange(3)
        f.create_group("h")["alias"] = g["d"]
        g["sub/t2"] = np.dtype("f8")
    with h5py.File(path, "r") as h, h5tile.File(path) as t:
        for group in ["/", "g", "h"]:
            seen_h, seen_t = [], []
            h[group].visit(seen_h.append)
            t[group].visit(seen_t.append)
            assert seen_t == seen_h, group


def test_a_review_of_names_and_links_beside_h5py(tmp_path):
    # A review's cases: '..' is a literal link name to HDF5 (never the parent), '' is no name,
    # get() gives the default for names that cannot be opened, a name that is not UTF-8 does
    # not make the file unreadable, thousands of nested groups visit, equality across spellings.
    path = tmp_path / "r.h5"
    with h5py.File(path, "w") as f:
        f["x"] = np.array([1, 1])
        g = f.create_group("g")
        g["d"] = np.arange(3)
        g.create_group("..")["x"] = np.array([7, 7])  # a group literally named '..'
        f["dang"] = h5py.SoftLink("/nowhere")
        f["emiss"] = h5py.ExternalLink("missing.h5", "/x")
        f.create_group(b"lat\xe9n")  # not UTF-8
        deep = f.create_group("deep")
        for _ in range(1200):
            deep = deep.create_group("n")
    with h5py.File(path, "r") as h, h5tile.File(path) as t:
        # The core reads no path with a '..' part (it refuses it by name), so the literal '..' link's
        # data is an error; never /x's [1, 1], as when '..' was taken for the parent.
        with pytest.raises(h5tile.InvalidArgumentError, match=r"'\.\.'"):
            t["g/../x"][...]
        assert same_bytes(h["g/../x"][...], np.array([7, 7]))
        for name in ["g/..", "g/../x", "g/../g/d", "", "x"]:
            assert (name in t) == (name in h), name
        for name in ["g/../g/d", ""]:
            with pytest.raises(KeyError):
                t[name]
            with pytest.raises(KeyError):
                h[name]
        assert t.get("dang") is None and h.get("dang") is None
        assert t.get("emiss") is None and h.get("emiss") is None
        assert t.get("", "d") == "d"
        assert same_bytes(t["x"][...], h["x"][...])  # the name that is not UTF-8 does not stop the read
        assert len(t.keys()) == len(h.keys())
        seen_h, seen_t = [], []
        h.visit(seen_h.append)
        t.visit(seen_t.append)
        assert len(seen_t) == len(seen_h) > 1200
    with h5tile.File(path) as a, h5tile.File(str(tmp_path / ".." / tmp_path.name / "r.h5")) as b:
        assert a["g"] == b["g"] and hash(a["g"]) == hash(b["g"])
        kept = a["g"]
        before = hash(kept)
    assert hash(kept) == before  # the hash stays after the File closes


def test_one_groups_keys_list_that_group_and_a_walk_reads_attributes_in_one_call(tmp_path, monkeypatch):
    """A group's keys list that group (and those on the way), not every group of the file; the
    attributes of a visititems walk's objects are read in one call, equal to h5py's."""
    path = tmp_path / "many.h5"
    with h5py.File(path, "w") as f:
        for g in range(5):
            for d in range(4):
                f[f"g{g}/d{d}"] = np.arange(3) + d
                f[f"g{g}/d{d}"].attrs["d"] = d
            f[f"g{g}"].attrs["g"] = g
            f[f"g{g}/latest"] = h5py.SoftLink(f"/g{g}/d0")
    from h5tile import _h5tile, _objects
    calls = []
    for name in ("list_links", "list_group_links", "read_attributes", "read_attributes_of_each"):
        original = getattr(_h5tile, name)
        monkeypatch.setattr(_objects._h5tile, name,
                            lambda *a, _n=name, _o=original: calls.append(_n) or _o(*a))
    with h5py.File(path, "r") as ref, h5tile.File(path) as f:
        assert list(f["g3"].keys()) == list(ref["g3"].keys())
        assert calls.count("list_group_links") == 2 and "list_links" not in calls  # the root, g3
        assert f["g3/latest"] == f["g3/d0"]
        calls.clear()
        seen, expected = {}, {}
        f.visititems(lambda name, obj: seen.__setitem__(name, dict(obj.attrs)))
        ref.visititems(lambda name, obj: expected.__setitem__(name, dict(obj.attrs)))
        assert seen == expected
        assert calls.count("read_attributes_of_each") == 1 and "read_attributes" not in calls


def test_groups_and_datasets_behind_external_links_as_h5py(tmp_path):
    """An external link to a group gives that group of the other file (its file and name there),
    as h5py; datasets and groups below it too; one outside the folder is refused, naming it."""
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["g/sub/x"] = np.arange(6).reshape(2, 3)
        f["g"].attrs["where"] = "other"
    (tmp_path / "far").mkdir()
    with h5py.File(tmp_path / "far" / "away.h5", "w") as f:
        f["y"] = np.arange(3)
    with h5py.File(tmp_path / "main.h5", "w") as f:
        f["ext"] = h5py.ExternalLink("other.h5", "/g")
        f["ext_x"] = h5py.ExternalLink("other.h5", "/g/sub/x")
        f["alias"] = h5py.SoftLink("/ext/sub")
        f["sub/far"] = h5py.ExternalLink("../main.h5", "/ext")  # a link that leaves the folder
    with h5py.File(tmp_path / "main.h5", "r") as ref, h5tile.File(tmp_path / "main.h5") as t:
        for name in ("ext", "ext/sub", "alias", "ext_x", "ext/sub/x", "alias/x"):
            mine, theirs = t[name], ref[name]
            assert type(mine).__name__ == type(theirs).__name__, name
            if not name.startswith("alias"):  # through a soft link HDF5 names it as typed ('/alias'): h5tile by its target
                assert mine.name == theirs.name, name
            assert os.path.realpath(mine.file.filename) == os.path.realpath(theirs.file.filename), name
        assert list(t["ext"].keys()) == list(ref["ext"].keys()) == ["sub"]
        assert t["ext"].attrs["where"] == "other"
        np.testing.assert_array_equal(t["alias/x"][...], ref["alias/x"][...])
        np.testing.assert_array_equal(t["ext_x"][1], ref["ext_x"][1])
    with h5py.File(tmp_path / "in.h5", "w") as f:
        f["out"] = h5py.ExternalLink("far/away.h5", "/y")
    (tmp_path / "inner").mkdir()
    (tmp_path / "in.h5").rename(tmp_path / "inner" / "in.h5")
    with h5py.File(tmp_path / "inner" / "in.h5", "a") as f:
        del f["out"]
        f["out"] = h5py.ExternalLink("../far/away.h5", "/y")
    with h5tile.File(tmp_path / "inner" / "in.h5") as t:
        with pytest.raises(h5tile.VirtualSourceError, match="outside the folder"):
            t["out"]
    with h5tile.File(tmp_path / "inner" / "in.h5", allow_external_sources=True) as t:
        np.testing.assert_array_equal(t["out"][...], np.arange(3))


def test_a_loop_of_external_links_is_a_key_error_as_h5py(tmp_path):
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f["loop"] = h5py.ExternalLink("b.h5", "/back")
    with h5py.File(tmp_path / "b.h5", "w") as f:
        f["back"] = h5py.ExternalLink("a.h5", "/loop")
    with h5py.File(tmp_path / "a.h5", "r") as ref:
        with pytest.raises(KeyError):
            ref["loop"]
    with h5tile.File(tmp_path / "a.h5") as t:
        with pytest.raises(KeyError, match="too many links"):
            t["loop"]
