"""File and dataset names with '%' (HDF5's pattern character in virtual dataset source names),
spaces and non-ASCII characters, and datasets whose tile folders h5tile once shared ('/a%b' and
'/a_b'): h5py is the reference."""
import os
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

NAMES = [
    ("r%sult 50% ü.h5", "/a%b"),
    ("a%%b.h5", "/data"),
    ("t%b.h5", "/g %/x%%y ü"),
    ("x%", "/y%"),
]


def h5py_read(path, name):
    with h5py.File(path, "r") as f:
        return f[name][...]


@pytest.mark.parametrize("file,name", NAMES)
def test_virtual_write_and_consolidate_read_back_in_h5py(tmp_path, file, name):
    a = random_array("float64", (13, 6), seed=len(file))
    h5tile.to_file(a, tmp_path / file, name, ranks=3, layout="virtual").wait()
    assert (tmp_path / (file + ".tiles") / name[1:]).is_dir()
    with h5py.File(tmp_path / file, "r") as f:
        assert f[name].is_virtual
        assert same_bytes(f[name][...], a)
    assert same_bytes(h5tile.from_file(tmp_path / file, name), a)
    blocks = [b for b, _ in h5tile.from_file_batched(tmp_path / file, name, (5, 6))]
    assert same_bytes(np.concatenate(blocks), a)
    h5tile.consolidate(tmp_path / file, name, tmp_path / ("c " + file))
    assert same_bytes(h5py_read(tmp_path / ("c " + file), name), a)
    assert same_bytes(h5tile.from_file(tmp_path / ("c " + file), name), a)


def test_h5tile_reads_a_vds_that_h5py_wrote_with_escaped_names(tmp_path):
    a = random_array("int32", (4, 5), seed=1)
    b = random_array("int32", (3, 5), seed=2)
    with h5py.File(tmp_path / "src 50% ü.h5", "w") as f:
        f["a%b"] = a
        f["x"] = b
    layout = h5py.VirtualLayout(shape=(7, 5), dtype="int32")
    # HDF5 reads source names as patterns: h5py stores them as given, so escape '%'.
    layout[0:4] = h5py.VirtualSource("src 50%% ü.h5", "/a%%b", shape=(4, 5))
    layout[4:7] = h5py.VirtualSource("src 50%% ü.h5", "/x", shape=(3, 5))
    with h5py.File(tmp_path / "v%.h5", "w") as f:
        f.create_virtual_dataset("d%", layout)
    expected = np.concatenate([a, b])
    assert same_bytes(h5py_read(tmp_path / "v%.h5", "d%"), expected)
    assert same_bytes(h5tile.from_file(tmp_path / "v%.h5", "d%"), expected)
    h5tile.consolidate(tmp_path / "v%.h5", "d%", tmp_path / "c%.h5")
    assert same_bytes(h5py_read(tmp_path / "c%.h5", "d%"), expected)


def test_h5tile_reads_a_vds_whose_sources_are_numbered_blocks(tmp_path):
    """'%b' names one source file per block of an unlimited mapping: HDF5 expands it."""
    blocks = [random_array("int16", (3, 4), seed=s) for s in range(3)]
    for i, block in enumerate(blocks):
        with h5py.File(tmp_path / f"r%s {i}.h5", "w") as f:
            f["x"] = block
    vspace = h5py.h5s.create_simple((9, 4), (h5py.h5s.UNLIMITED, 4))
    vspace.select_hyperslab((0, 0), (h5py.h5s.UNLIMITED, 1), stride=(3, 1), block=(3, 4))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_virtual(vspace, "r%%s %b.h5".encode(), b"/x", h5py.h5s.create_simple((3, 4)))
    with h5py.File(tmp_path / "blocks.h5", "w") as f:
        h5py.h5d.create(f.id, b"d", h5py.h5t.NATIVE_INT16, h5py.h5s.create_simple((9, 4), (h5py.h5s.UNLIMITED, 4)),
                        dcpl=dcpl)
    expected = np.concatenate(blocks)
    assert same_bytes(h5py_read(tmp_path / "blocks.h5", "d"), expected)
    assert same_bytes(h5tile.from_file(tmp_path / "blocks.h5", "d"), expected)


@pytest.mark.parametrize("keep_previous", [True, False])
def test_datasets_that_once_shared_a_tile_folder_keep_their_tiles(tmp_path, keep_previous):
    out = tmp_path / "out.h5"
    a = random_array("int64", (9, 3), seed=1)
    b = random_array("float32", (5, 4), seed=2)
    for _ in range(3):  # later rounds replace each, and clean up what they replaced (or superseded)
        h5tile.to_file(a, out, "/a%b", mode="a", ranks=2, keep_previous=keep_previous, layout="virtual").wait()
        h5tile.to_file(b, out, "/a_b", mode="a", ranks=3, keep_previous=keep_previous, layout="virtual").wait()
        for name, expected in (("/a%b", a), ("/a_b", b)):
            assert same_bytes(h5py_read(out, name), expected)
            assert same_bytes(h5tile.from_file(out, name), expected)
    assert sorted(p.name for p in (tmp_path / "out.h5.tiles").iterdir()) == ["a%b", "a_b"]


def test_tiles_in_the_old_shared_folder_are_kept_while_mapped(tmp_path):
    """A file written before tile folders were exact: '/a%b' has its tiles in 'a_b', with no
    record of their dataset. Writing '/a_b' keeps them; rewriting '/a%b' removes them."""
    out = tmp_path / "out.h5"
    a = random_array("int32", (6, 2), seed=3)
    b = random_array("int32", (4, 4), seed=4)
    h5tile.to_file(a, out, "/a_b", ranks=2, layout="virtual").wait()
    old = [g for g in (tmp_path / "out.h5.tiles" / "a_b").iterdir()]
    assert len(old) == 1
    (old[0] / ".dataset").unlink()  # as written before generations recorded their dataset
    with h5py.File(out, "a") as f:
        f.move("a_b", "a%b")  # now mapped as '/a%b', from the old shared folder 'a_b'
    h5tile.to_file(b, out, "/a_b", mode="a", ranks=2, keep_previous=False, layout="virtual").wait()
    assert old[0].is_dir()
    assert same_bytes(h5py_read(out, "/a%b"), a) and same_bytes(h5tile.from_file(out, "/a%b"), a)
    assert same_bytes(h5py_read(out, "/a_b"), b) and same_bytes(h5tile.from_file(out, "/a_b"), b)
    h5tile.to_file(a, out, "/a%b", mode="a", ranks=3, keep_previous=False, layout="virtual").wait()
    assert not old[0].exists()  # no longer mapped: removed with '/a%b''s old folder
    assert same_bytes(h5py_read(out, "/a%b"), a) and same_bytes(h5tile.from_file(out, "/a%b"), a)
    assert same_bytes(h5py_read(out, "/a_b"), b) and same_bytes(h5tile.from_file(out, "/a_b"), b)
    assert len(list((tmp_path / "out.h5.tiles" / "a_b").iterdir())) == 1


def test_file_names_are_stored_escaped_and_h5py_sees_the_real_paths(tmp_path):
    a = random_array("uint8", (8, 8), seed=5)
    h5tile.to_file(a, tmp_path / "p%.h5", "/q%", ranks=2, layout="virtual").wait()
    with h5py.File(tmp_path / "p%.h5", "r") as f:
        stored = [s.file_name for s in f["q%"].virtual_sources()]
    assert len(stored) == 2 and all(s.startswith("p%%.h5.tiles/q%%/") for s in stored)
    assert all(os.path.exists(tmp_path / s.replace("%%", "%")) for s in stored)


def test_a_missing_source_with_percent_in_its_name_is_an_error_where_hdf5_reads_the_mapping(tmp_path):
    """A strided mapping (HDF5 reads it) whose source 'miss 5%.h5' is missing: HDF5 alone would
    return fill values; h5tile checks the source exists first, '%' in its name or not."""
    with h5py.File(tmp_path / "here.h5", "w") as f:
        f["x"] = np.arange(10, dtype=np.int16)
    layout = h5py.VirtualLayout(shape=(10,), dtype="int16")
    layout[0:10:2] = h5py.VirtualSource("miss 5%%.h5", "/x", shape=(10,))[0:5]
    layout[1:10:2] = h5py.VirtualSource("here.h5", "/x", shape=(10,))[0:5]
    with h5py.File(tmp_path / "v.h5", "w") as f:
        f.create_virtual_dataset("d", layout, fillvalue=0)
    with pytest.raises(h5tile.VirtualSourceError, match="miss 5%.h5"):
        h5tile.from_file(tmp_path / "v.h5", "/d")
    (tmp_path / "miss 5%.h5").write_bytes((tmp_path / "here.h5").read_bytes())
    assert same_bytes(h5tile.from_file(tmp_path / "v.h5", "/d"), h5py_read(tmp_path / "v.h5", "d"))


def test_a_file_name_that_is_not_utf8_reads_through_every_door(tmp_path):
    """A name of bytes that are no UTF-8 (os.fsdecode gives it as a str with surrogate escapes):
    h5tile.File's selections, its properties and Dask read it as h5py does (the core's test of a
    URL takes any path, not only UTF-8 text)."""
    raw = os.fsencode(str(tmp_path)) + b"/x\xff.h5"
    a = np.arange(24, dtype=np.int32).reshape(6, 4)
    with h5py.File(raw, "w") as f:
        f["d"] = a
    path = os.fsdecode(raw)
    with h5tile.File(path) as f:
        ds = f["d"]
        assert same_bytes(ds[[0, 2]], a[[0, 2]]) and same_bytes(ds[a[:, 0] > 8], a[a[:, 0] > 8])
        assert f.driver == "sec2" and f.userblock_size == 0 and ds == f["d"]
    with h5tile.File(path, "r+") as f:
        assert same_bytes(f["d"][...], a)
    from h5tile import dask as h5d
    assert same_bytes(h5d.from_file(path, "/d").compute(), a)
