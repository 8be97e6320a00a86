"""An h5tile.File in a write mode lends its file to h5py for what h5tile does not write itself
(issue 41): h5py's low-level identifiers (``.id``) that write, dimension scales, variable-length
sequences, references, region references, HDF5 array attributes. h5tile closes its own open of
the file first and takes it back at its next change (closing h5py's), so that two HDF5 libraries
never change one file at once. Each result is compared with h5py making the same calls."""
import gc
import os
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402
from h5tile import _h5tile  # noqa: E402


def scales_of(path):
    """Every dataset's dimension scales as h5py reads them: labels and scale names per axis."""
    out = {}
    with h5py.File(path, "r") as f:
        for name, ds in f.items():
            out[name] = ([d.label for d in ds.dims], [[s.name for s in d.values()] for d in ds.dims],
                         h5py.h5ds.is_scale(ds.id), ds[...].tolist())
    return out


def low_level_scales(m, path):
    """h5py's test_dimension_scales setUp, through `m`'s File and h5py's low-level calls on .id."""
    with m.File(path, "w") as f:
        f["data"] = np.arange(24, dtype="f4").reshape(4, 3, 2)
        f["x1"] = np.ones(2, "f")
        h5py.h5ds.set_scale(f["x1"].id)
        h5py.h5ds.attach_scale(f["data"].id, f["x1"].id, 2)
        f["x2"] = np.arange(2, dtype="f")
        h5py.h5ds.set_scale(f["x2"].id, b"x2 name")
        h5py.h5ds.attach_scale(f["data"].id, f["x2"].id, 2)
        f["y1"] = np.ones(3, "f")
        h5py.h5ds.set_scale(f["y1"].id, b"y1 name")
        h5py.h5ds.attach_scale(f["data"].id, f["y1"].id, 1)
        h5py.h5ds.set_label(f["data"].id, 0, b"z")
        h5py.h5ds.set_label(f["data"].id, 2, b"x")
        seen = (f["data"].dims[2].label, list(f["data"].dims[2].keys()), len(f["data"].dims[1]))
    return seen


def test_low_level_dimension_scales_on_id_match_h5py(tmp_path):
    theirs = low_level_scales(h5py, tmp_path / "h5py.h5")
    ours = low_level_scales(h5tile, tmp_path / "h5tile.h5")
    assert ours == theirs == ("x", ["", "x2 name"], 1)
    assert scales_of(tmp_path / "h5tile.h5") == scales_of(tmp_path / "h5py.h5")


def high_level_scales(m, path):
    with m.File(path, "w") as f:
        f["t"] = np.arange(5.0)
        f["v"] = np.zeros((5, 2))
        f["w"] = np.ones(2)
        f["t"].make_scale("time")
        f["w"].make_scale()
        f["v"].dims[0].attach_scale(f["t"])
        f["v"].dims[1].attach_scale(f["w"])
        f["v"].dims[0].label = "T"
        f["v"].dims[1].label = "side"
        f["v"].dims[1].detach_scale(f["w"])
        return f["v"].dims[0]["time"].name, f["t"].is_scale, len(f["v"].dims[1])


def test_dimension_scale_writes_match_h5py(tmp_path):
    theirs = high_level_scales(h5py, tmp_path / "h5py.h5")
    ours = high_level_scales(h5tile, tmp_path / "h5tile.h5")
    assert ours == theirs == ("/t", True, 0)
    assert scales_of(tmp_path / "h5tile.h5") == scales_of(tmp_path / "h5py.h5")


def test_low_level_writes_are_read_at_once_and_identifiers_close_at_the_next_change(tmp_path):
    path = tmp_path / "a.h5"
    with h5tile.File(path, "w") as f:
        f["a"] = np.zeros(6, "i4")
        space = h5py.h5s.create_simple((3,))
        made = h5py.h5d.create(f.id, b"low", h5py.h5t.NATIVE_INT32, space)
        made.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([7, 8, 9], "i4"))
        f["a"].id.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(6, dtype="i4") * 2)
        assert f["low"][...].tolist() == [7, 8, 9]  # h5tile reads what h5py's identifiers wrote
        assert f["a"][...].tolist() == [0, 2, 4, 6, 8, 10]
        with h5tile.File(path, "r") as other:  # another File of the path sees them too
            assert other["low"][...].tolist() == [7, 8, 9]
        f["b"] = np.ones(2)  # a change through h5tile: the file taken back, h5py's identifiers closed
        assert not made.valid
        with pytest.raises((ValueError, RuntimeError)):
            made.get_space()
        f["low"][1] = -1  # h5tile writes where h5py made
    with h5py.File(path, "r") as g:
        assert g["low"][...].tolist() == [7, -1, 9]
        assert g["a"][...].tolist() == [0, 2, 4, 6, 8, 10]
        assert g["b"][...].tolist() == [1.0, 1.0]


def hdf5_only_types(m, path):
    """Datasets and attributes of types h5tile's core does not write: made by h5py for h5tile."""
    with m.File(path, "w") as f:
        seq = f.create_dataset("seq", (3,), dtype=h5py.vlen_dtype("i4"))
        seq[0] = np.arange(3, dtype="i4")
        seq[2] = np.arange(5, dtype="i4")
        f["num"] = np.arange(10)
        refs = f.create_dataset("refs", (2,), dtype=h5py.ref_dtype)
        refs[0] = f["num"].ref
        regions = f.create_dataset("regions", (1,), dtype=h5py.regionref_dtype)
        regions[0] = f["num"].regionref[2:5]
        f["num"].attrs.create("lengths", [np.arange(2), np.arange(4)], dtype=h5py.vlen_dtype("i8"))
        f["num"].attrs.create("triple", np.arange(6).reshape(2, 3), dtype=np.dtype(("i4", (3,))))
        f.create_dataset("quad", data=np.arange(3, dtype=np.longdouble))
        compound = np.dtype([("n", "i4"), ("s", h5py.string_dtype())])
        f.create_dataset("rec", data=np.array([(1, "a"), (2, "bc")], dtype=compound))
        # read back through the same File
        return ([list(x) for x in f["seq"][...]], f[f["refs"][0]].name, f["num"][f["regions"][0]].tolist(),
                [list(x) for x in f["num"].attrs["lengths"]], f["num"].attrs["triple"].tolist(),
                f["quad"][...].tolist(), f["rec"][...].tolist())


def test_types_only_hdf5_writes_made_through_h5py_match_h5py(tmp_path):
    theirs = hdf5_only_types(h5py, tmp_path / "h5py.h5")
    ours = hdf5_only_types(h5tile, tmp_path / "h5tile.h5")
    assert ours == theirs
    with h5py.File(tmp_path / "h5tile.h5", "r") as a, h5py.File(tmp_path / "h5py.h5", "r") as b:
        for name in b:
            assert a[name].id.get_type().encode() == b[name].id.get_type().encode(), name
        for name in b["num"].attrs:
            assert a["num"].attrs.get_id(name).get_type().encode() == b["num"].attrs.get_id(name).get_type().encode()


def test_read_only_files_refuse_what_h5py_would_write(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as g:
        g["x"] = np.arange(4)
    with h5tile.File(path, "r") as f:
        with pytest.raises(h5tile.UnsupportedTypeError, match="read-only"):
            f["x"].regionref[1:2]
        with pytest.raises(OSError, match="read-only"):
            f["x"].make_scale("x")
        with pytest.raises(h5tile.InvalidArgumentError, match="read-only"):
            f.create_dataset("v", (2,), dtype=h5py.vlen_dtype("i4"))
        assert not h5py.h5ds.is_scale(f["x"].id)  # .id in mode "r": h5py's read-only open
    with h5py.File(path, "r") as g:
        assert list(g) == ["x"]


def test_the_core_refuses_changes_while_the_file_is_lent(tmp_path):
    path = str(tmp_path / "a.h5")
    with h5py.File(path, "w") as g:
        g["x"] = np.arange(4)
    with pytest.raises(h5tile.InvalidArgumentError, match="does not hold it"):
        _h5tile.lend_for_writing(path)
    _h5tile.hold_for_writing(path)
    try:
        _h5tile.lend_for_writing(path)
        with pytest.raises(h5tile.InvalidArgumentError, match="lent to h5py"):
            _h5tile.create_group(path, "/g")
        _h5tile.take_back_for_writing(path)
        _h5tile.create_group(path, "/g")
    finally:
        _h5tile.release_for_writing(path)
    with h5py.File(path, "r") as g:
        assert sorted(g) == ["g", "x"]


def test_a_file_closed_while_lent_keeps_h5py_changes(tmp_path):
    path = tmp_path / "a.h5"
    f = h5tile.File(path, "w")
    f["x"] = np.arange(3.0)
    h5py.h5ds.set_scale(f["x"].id, b"xs")
    f.close()
    with h5py.File(path, "r") as g:
        assert g["x"].is_scale and h5py.h5ds.get_scale_name(g["x"].id) == b"xs"
    f = h5tile.File(path, "a")
    f["x"].attrs.create("v", [np.arange(2), np.arange(3)], dtype=h5py.vlen_dtype("i4"))
    h5py.h5ds.set_label(f["x"].id, 0, b"n")  # lent again
    del f  # collected, not closed: h5py's open closed and the hold released all the same
    gc.collect()
    with h5py.File(path, "r") as g:
        assert g["x"].attrs["v"][1].tolist() == [0, 1, 2]
        assert g["x"].dims[0].label == "n"


def test_a_read_only_files_identifiers_never_keep_h5pys_open_alive(tmp_path):
    """A mode-"r" File's .id shares h5py's open of a lent file: it is closed when the file is
    lent and when it is taken back, so that h5py's HDF5 never writes its stale view over h5tile's
    changes (it truncated the file before: "addr overflow")."""
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as g:
        g["x"] = np.arange(10)
    writer, reader = h5tile.File(path, "r+"), h5tile.File(path, "r")
    before = reader.id  # h5py's read-only open, before the lend
    assert writer.id and not before  # lent: the read-only view closed first (h5py cannot reopen it r+ beside it)
    taken = reader.id  # while lent: shares h5py's read-write open
    writer.create_dataset("big", data=np.arange(200_000, dtype="f8"))  # taken back: both closed
    writer.attrs["note"] = 7
    assert not taken and reader["x"][...].tolist() == list(range(10))
    writer.close()
    reader.close()
    with h5py.File(path, "r") as g:
        assert sorted(g) == ["big", "x"] and g.attrs["note"] == 7 and g["big"][-1] == 199_999


def test_module_level_reads_see_what_h5py_wrote_while_lent(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as g:
        g.create_dataset("c", data=np.zeros((8, 8)), chunks=(4, 4), compression="gzip")
        g.create_dataset("r", (0,), "f8", maxshape=(None,), chunks=(4,))
    with h5tile.File(path, "a") as f:
        h5f = h5py.File(f.id)  # h5py's read-write File of the lent file
        h5f["c"][3, 3] = 7
        h5f["r"].resize((5,))
        h5f["r"][...] = 1.5
        h5f["new"] = np.arange(3)
        assert h5tile.from_file(path, "c")[3, 3] == 7
        assert tuple(h5tile.describe(path, "r")["shape"]) == (5,)
        assert h5tile.read_box(path, "r", [0], [5]).tolist() == [1.5] * 5
        assert h5tile.from_file(path, "new").tolist() == [0, 1, 2]
        f["c"][0, 0] = 1  # taken back: h5py's File closed
        assert not h5f.id.valid


def test_a_hold_ends_even_where_taking_the_file_back_fails(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as g:
        g["x"] = np.arange(3)
    f = h5tile.File(path, "a")
    assert f.id  # lent
    path.unlink()
    with pytest.raises(FileNotFoundError):
        f.close()  # h5tile cannot open the removed file again
    with h5py.File(path, "w") as g:  # a new file at the path: writable through h5tile
        g["y"] = np.arange(2)
    with h5tile.File(path, "a") as f:
        f["y"][0] = 5
    with h5py.File(path, "r") as g:
        assert g["y"][...].tolist() == [5, 1]


def test_another_file_of_the_same_path_sees_changes_through_an_external_link(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as g:
        g.create_dataset("x", data=np.zeros(10), maxshape=(None,), chunks=(5,))
        g["e"] = h5py.ExternalLink("a.h5", "/x")  # to itself: a second File of the path
    with h5tile.File(path, "a") as f:
        assert f["x"].shape == (10,)
        f["e"].resize((20,))
        f["e"][:3] = 7
        assert f["x"].shape == (20,) and f["x"][:4].tolist() == [7, 7, 7, 0] and f["x"][15] == 0


def test_identifiers_outliving_their_file_object_are_closed_at_take_back(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as g:
        g.create_dataset("x", data=np.arange(10), maxshape=(None,), chunks=(5,))
    writer = h5tile.File(path, "a")
    assert writer.id  # lent

    def taken():  # a mode-"r" File's identifier, the File itself dropped
        return h5tile.File(path, "r")["x"].id

    kept = taken()
    gc.collect()
    assert kept.valid  # shares h5py's read-write open of the lent file
    writer.create_group("g")  # taken back: every open h5py's HDF5 has of the file closed
    writer["x"].resize((1000,))
    writer.create_dataset("big", data=np.ones(100_000))
    assert not kept.valid
    writer.close()
    with h5py.File(path, "r") as g:
        assert sorted(g) == ["big", "g", "x"] and g["x"].shape == (1000,) and g["big"][-1] == 1


def test_other_files_of_the_file_see_what_h5py_and_attribute_writes_changed(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as g:
        g.create_dataset("x", data=np.arange(10), maxshape=(None,), chunks=(5,))
        g.attrs["a"] = 1
    os.link(path, tmp_path / "hard.h5")
    writer, other = h5tile.File(path, "a"), h5tile.File(tmp_path / "hard.h5", "r")
    assert other["x"].shape == (10,) and other.attrs["a"] == 1 and dict(other.attrs) == {"a": 1}
    h5f = h5py.File(writer.id)
    h5f["x"].resize((20,))
    h5f["x"][10:] = 5
    writer.close()  # taken back, and closed
    assert other["x"].shape == (20,) and other["x"][-1] == 5  # through a hard link too
    with h5tile.File(path, "a") as again:
        again.attrs["a"] = 2
        again.attrs["b"] = 3
    assert dict(other.attrs) == {"a": 2, "b": 3}
    other.close()


def test_a_new_file_over_a_lent_one_is_refused_and_the_lent_one_kept(tmp_path):
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as g:
        g["x"] = np.arange(4)
    with h5tile.File(path, "a") as f:
        assert f.id
        with pytest.raises(h5tile.Error, match="truncate a file which is already open"):
            h5tile.File(path, "w")
        f["x"][0] = 9
    with h5py.File(path, "r") as g:
        assert g["x"][...].tolist() == [9, 1, 2, 3]


def test_a_held_file_replaced_by_to_file_is_lent_and_taken_back_as_the_file_it_is_now(tmp_path):
    """to_file renames a new file over the path (a new inode): the lend and the take-back find
    the file h5py opened (not the one the File was opened on), and a mode-"r" File of the path
    reads what the path's file is now."""
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as g:
        g["x"] = np.arange(10)
    writer, reader = h5tile.File(path, "a"), h5tile.File(path, "r")
    assert list(reader) == ["x"]
    h5tile.to_file(np.arange(3), path, "y").wait()  # replaced: a new inode
    kept = h5py.File(writer.id).create_dataset("hp", data=np.arange(50_000))  # lent: the new file
    writer.create_group("g")  # taken back: h5py's opens of the new file closed
    for i in range(5):
        writer.create_dataset(f"d{i}", data=np.ones(10_000))
    assert not kept.id.valid
    assert sorted(reader) == ["d0", "d1", "d2", "d3", "d4", "g", "hp", "y"]
    writer.close()
    reader.close()
    from h5py import h5f
    assert not [fid for fid in h5f.get_obj_ids(h5f.OBJ_ALL, h5f.OBJ_FILE) if fid.name.endswith(b"a.h5")]
    with h5py.File(path, "r") as g:
        assert sorted(g) == ["d0", "d1", "d2", "d3", "d4", "g", "hp", "y"] and g["hp"][-1] == 49_999
