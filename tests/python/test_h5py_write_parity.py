"""Small parts of h5py's write API that h5py's own tests found different (issue 41), each done
through h5py and through h5tile on files of their own and compared: the exception class, what
h5py reads back, and HDF5's own record of it (times, link character sets, types)."""
import io
import os
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def outcome(m, path, action):
    """(exception class name or None, action's result) of `action(m.File(path, "w"))`."""
    with m.File(path, "w") as f:
        try:
            return None, action(f)
        except Exception as e:  # noqa: BLE001 - compared between the libraries
            return type(e).__mro__[1].__name__ if type(e).__module__.startswith("h5tile") else type(e).__name__, None


def same_outcome(tmp_path, action):
    theirs = outcome(h5py, tmp_path / "h5py.h5", action)
    ours = outcome(h5tile, tmp_path / "h5tile.h5", action)
    assert ours == theirs
    return ours


@pytest.mark.parametrize("kwargs", [
    dict(shape=(), chunks=(50,), dtype="f4"),  # a scalar: no chunks (TypeError before the chunk's shape)
    dict(dtype="S100", chunks=True),  # empty (no shape): no chunks
    dict(dtype="S100", maxshape=20),  # nor a maximum shape
    dict(shape=(10,), dtype=[("a", "i4"), ("b", "f4")], fillvalue=42),  # no number converts to a compound
    dict(shape=(4,), dtype="f4", track_times="null"),
], ids=["scalar_chunks", "empty_chunks", "empty_maxshape", "compound_fill_of_number", "track_times_text"])
def test_bad_create_dataset_arguments_raise_as_h5py(tmp_path, kwargs):
    error, _ = same_outcome(tmp_path, lambda f: f.create_dataset("x", **kwargs))
    assert error in ("TypeError", "ValueError")


def test_a_scalar_with_an_empty_maximum_shape_is_made(tmp_path):
    _, made = same_outcome(tmp_path, lambda f: (f.create_dataset("s", shape=(), dtype="f4", maxshape=()).shape,
                                                f["s"].chunks))
    assert made == ((), None)


def modification_times(path):
    with h5py.File(path, "r") as f:
        return {name: h5py.h5g.get_objinfo(f[name].id).mtime != 0 for name in f}


def test_track_times_as_h5py_records_them(tmp_path):
    def make(f):
        f.create_dataset("default", data=np.arange(3))
        on = f.create_dataset("on", data=np.arange(3), track_times=True)
        off = f.create_dataset("off", (3,), "f4", track_times=False)
        # (the objects made: h5py reads track_times from the creation property list, which HDF5
        # gives as True for any dataset opened again; h5tile asks HDF5's record of the times)
        f.create_dataset_like("like_on", on)
        f.create_dataset_like("like_off", off)
    same_outcome(tmp_path, make)
    times = modification_times(tmp_path / "h5tile.h5")
    assert times == modification_times(tmp_path / "h5py.h5")
    assert times == {"default": False, "on": True, "off": False, "like_on": True, "like_off": False}


def test_non_ascii_link_names_are_stored_as_utf8_and_ascii_ones_as_ascii(tmp_path):
    # (a group made on the way to a name, "/\u4500" of "/\u4500/x", takes its character set from
    # the HDF5 that makes it: h5py's 2.0 marks it UTF-8, h5tile's 1.10 ASCII; not compared)
    names = ["/plain", "/gr\u00fcn", "/\u4500"]

    def make(f):
        for n in names:
            f.create_group(n)
        f.create_dataset("d\u00e9j\u00e0", data=[1])
        f["soft\u00df"] = h5py.SoftLink("/plain")

    same_outcome(tmp_path, make)
    links = ["/plain", "/gr\u00fcn", "/\u4500", "/d\u00e9j\u00e0", "/soft\u00df"]
    sets = {}
    for path in (tmp_path / "h5tile.h5", tmp_path / "h5py.h5"):
        with h5py.File(path, "r") as f:
            sets[path.stem] = {n: f.id.links.get_info(n.encode()).cset for n in links}
    utf8, ascii_ = h5py.h5t.CSET_UTF8, h5py.h5t.CSET_ASCII
    assert sets["h5tile"] == {"/plain": ascii_, "/gr\u00fcn": utf8, "/\u4500": utf8, "/d\u00e9j\u00e0": utf8,
                              "/soft\u00df": utf8}
    # h5py marks a dataset's link ASCII whatever its name (its create_dataset passes no link
    # creation list): the one difference, docs/H5PY.md
    assert sets["h5py"] == {**sets["h5tile"], "/d\u00e9j\u00e0": ascii_}


def test_require_dataset_with_a_maximum_shape_as_h5py(tmp_path):
    def make(f):
        ds = f.require_dataset("r", shape=(0, 3), maxshape=(None, 3), dtype=int)
        ds.resize(20, axis=0)
        results = [f.require_dataset("r", shape=(0, 3), maxshape=(None, 3), dtype=int).shape]
        for kwargs in (dict(shape=(0, 0), maxshape=(3, None)), dict(shape=(0, 3))):
            try:
                f.require_dataset("r", dtype=int, **kwargs)
                results.append(None)
            except TypeError as e:
                results.append(str(e).split(" (")[0])
        return results
    _, results = same_outcome(tmp_path, make)
    assert results == [(20, 3), "Max shapes do not match", "Shapes do not match"]


def test_str_written_into_a_utf8_fixed_length_dataset_as_h5py(tmp_path):
    text = "c\u00f9"

    def make(f):
        ds = f.create_dataset("s", (10,), dtype=h5py.string_dtype("utf-8", 5))
        ds[0] = text.encode()
        ds[1] = text
        ds[2:4] = [text, text]
        ds[4:6] = np.array([text, text], dtype=object)
        try:
            ds[6:8] = np.array([text, text], dtype="U")
            refused = None
        except TypeError:
            refused = "TypeError"
        return ds[:6].tolist(), refused
    _, (values, refused) = same_outcome(tmp_path, make)
    assert values == [text.encode()] * 6 and refused == "TypeError"


def test_an_attribute_of_a_named_type_is_linked_to_it_as_h5py(tmp_path):
    def make(f):
        f["t"] = np.dtype("u8")
        f.attrs.create("x", 42, dtype=f["t"])
        return int(f.attrs["x"])
    same_outcome(tmp_path, make)
    for path in (tmp_path / "h5tile.h5", tmp_path / "h5py.h5"):
        with h5py.File(path, "r") as f:
            kind = h5py.h5a.open(f.id, b"x").get_type()
            assert kind.committed() and kind == f["t"].id, path.name


def test_identifiers_of_a_closed_file_are_invalid_and_it_has_no_members(tmp_path):
    path = tmp_path / "a.h5"
    f = h5tile.File(path, "w")
    g = f.create_group("g")
    assert f.id and g.id
    f.close()
    assert not f.id and not g.id and "g" not in f
    never_taken = h5tile.File(path, "r")["g"]
    never_taken.file.close()
    with pytest.raises(h5tile.InvalidArgumentError, match="closed"):
        never_taken.id


def test_a_file_object_gives_h5py_identifiers(tmp_path):
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f.create_dataset("x", data=np.arange(100), chunks=(10,))
        size = f["x"].id.get_storage_size()
    with h5tile.File(io.BytesIO((tmp_path / "a.h5").read_bytes())) as f:
        assert f["x"].id.get_storage_size() == size and f["x"].id.get_num_chunks() == 10


def test_a_virtual_dataset_without_mappings_stays_virtual(tmp_path):
    def make(f):
        with f.build_virtual_dataset("v", (10, 20), np.int32):
            pass
        return f["v"].is_virtual, f["v"].virtual_sources(), f["v"][()].tolist()
    _, made = same_outcome(tmp_path, make)
    assert made == (True, [], np.zeros((10, 20), np.int32).tolist())


def test_a_compound_with_a_variable_length_member_given_as_a_list_of_fields(tmp_path):
    def make(f):
        f.create_dataset("x", (2,), dtype=[("a", int), ("b", h5py.vlen_dtype(int))])
        f["x"][1] = (5, np.arange(3))
        return f["x"].dtype.names, f["x"][1]["a"], f["x"][1]["b"].tolist()
    _, made = same_outcome(tmp_path, make)
    assert made == (("a", "b"), 5, [0, 1, 2])


def test_writes_through_an_external_link_change_the_other_file_as_h5py(tmp_path):
    outcomes = {}
    for m in (h5py, h5tile):
        folder = tmp_path / m.__name__
        folder.mkdir()
        with h5py.File(folder / "other.h5", "w") as g:
            g.create_dataset("data", data=np.zeros(6, "i4"), chunks=(2,), compression="gzip")
            g.create_group("grp")
        with h5py.File(folder / "main.h5", "w") as g:
            g["link"] = h5py.ExternalLink("other.h5", "/data")
            g["glink"] = h5py.ExternalLink("other.h5", "/grp")
        with m.File(folder / "main.h5", "a") as f:
            f["link"][1:3] = [7, 8]
            f["glink"].create_dataset("new", data=[1.5, 2.5])
            f["glink"].attrs["note"] = "through the link"
            modes = (f["link"].file.mode, f.get("link", elink_mode="r").file.mode)
        with m.File(folder / "main.h5", "r") as f:
            with pytest.raises(ValueError):
                f.get("link", elink_mode="r+")  # from a read-only file: refused, as h5py refuses it
        with h5py.File(folder / "other.h5", "r") as g:
            outcomes[m.__name__] = (modes, g["data"][...].tolist(), g["grp/new"][...].tolist(),
                                    g["grp"].attrs["note"])
    assert outcomes["h5tile"] == outcomes["h5py"]
    assert outcomes["h5py"] == (("r+", "r"), [0, 7, 8, 0, 0, 0], [1.5, 2.5], "through the link")


def test_libver_names_the_format_bounds_h5tiles_changes_use(tmp_path):
    major, minor, _ = h5tile._h5tile.hdf5_library_version()
    with h5tile.File(tmp_path / "a.h5", "w", libver="latest") as f:
        f["x"] = np.arange(3)
        bounds = f.libver
    assert bounds == ("earliest", f"v{major}{minor:02d}")
    with h5py.File(tmp_path / "a.h5", "r") as g:  # h5py names the same versions
        assert bounds[1] in ("v108", "v110", "v112", "v114", "v200") and g.libver[0] == "earliest"


def test_writes_through_an_external_link_never_open_a_fifo_or_a_device(tmp_path):
    """External links now open the other file for writing (mode "a"): one to a FIFO, or to a
    symbolic link to a device, is refused by name before anything opens it for writing."""
    import stat
    os.mkfifo(tmp_path / "pipe.h5")
    os.symlink("/dev/null", tmp_path / "null.h5")
    with h5py.File(tmp_path / "main.h5", "w") as g:
        g["p"] = h5py.ExternalLink("pipe.h5", "/x")
        g["n"] = h5py.ExternalLink("null.h5", "/x")
    with h5tile.File(tmp_path / "main.h5", "a") as f:
        for name, kind in (("p", "FIFO"), ("n", "character device")):
            with pytest.raises(h5tile.VirtualSourceError, match=kind):
                f[name][0] = 1
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe.h5").st_mode)
    assert os.readlink(tmp_path / "null.h5") == "/dev/null" and stat.S_ISCHR(os.stat("/dev/null").st_mode)
