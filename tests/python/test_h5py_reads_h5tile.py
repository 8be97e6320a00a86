"""Files h5tile writes, read by h5py and h5dump (independent readers)."""
import shutil
import subprocess

import h5py
import numpy as np
import pytest

from conftest import DTYPES, random_array, same_bytes


@pytest.mark.parametrize("ranks", [1, 3])
@pytest.mark.parametrize("layout", ["virtual", "contiguous", "chunked"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_reads_back_in_h5py(tool, tmp_path, dtype, layout, ranks):
    a = random_array(dtype, (37, 11), seed=ranks)
    tool.write(a, tmp_path / "out.h5", layout=layout, ranks=ranks)
    with h5py.File(tmp_path / "out.h5", "r") as f:
        got = f["data"][...]
        assert f["data"].is_virtual == (layout == "virtual")
        assert (f["data"].chunks is not None) == (layout == "chunked")
        if layout == "chunked":
            assert f["data"].chunks == (-(-37 // ranks), 11) and f["data"].compression is None
    assert same_bytes(got, a), (got.dtype, a.dtype)


@pytest.mark.parametrize("layout", ["virtual", "contiguous", "chunked"])
def test_h5dump_reads_the_file(tool, tmp_path, layout):
    # h5dump is Debian's 1.10.8 also when h5tile runs with HDF5 1.14 (scripts/test_hdf5_current.sh):
    # what h5tile writes with a newer HDF5 stays readable by 1.10.
    a = np.arange(6 * 4, dtype=np.int32).reshape(6, 4)
    tool.write(a, tmp_path / "out.h5", layout=layout, ranks=2)
    out = subprocess.run(["h5dump", "-d", "/data", str(tmp_path / "out.h5")], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "(5,0): 20, 21, 22, 23" in out.stdout


@pytest.mark.parametrize("shape", [(), (0,), (0, 5), (5, 0)])
@pytest.mark.parametrize("layout", ["virtual", "contiguous", "chunked"])
def test_scalar_and_zero_size(tool, tmp_path, shape, layout):
    a = random_array("float64", shape)
    tool.write(a, tmp_path / "out.h5", layout=layout)
    with h5py.File(tmp_path / "out.h5", "r") as f:
        got = f["data"][()]
    assert np.asarray(got).shape == shape
    assert same_bytes(np.asarray(got), a)
    assert same_bytes(tool.read(tmp_path / "out.h5"), a)


def test_moving_file_and_folder_together_keeps_it_readable(tool, tmp_path):
    a = random_array("int16", (40, 3))
    (tmp_path / "a").mkdir()
    tool.write(a, tmp_path / "a" / "out.h5", ranks=4)
    shutil.move(tmp_path / "a", tmp_path / "b")
    with h5py.File(tmp_path / "b" / "out.h5", "r") as f:
        assert same_bytes(f["data"][...], a)
    assert same_bytes(tool.read(tmp_path / "b" / "out.h5", tmp=tmp_path), a)


def test_relative_path_into_new_folder(tool, tmp_path):
    a = random_array("uint8", (9, 9))
    tool.write(a, "new/sub/out.h5", cwd=tmp_path, ranks=2)
    with h5py.File(tmp_path / "new" / "sub" / "out.h5", "r") as f:
        assert same_bytes(f["data"][...], a)
    code, out = tool.run("read", "new/sub/out.h5", "/data", "back.raw", cwd=tmp_path)
    assert out["shape"] == [9, 9]
    assert (tmp_path / "back.raw").read_bytes() == a.tobytes()


def test_intermediate_groups_are_created(tool, tmp_path):
    a = random_array("float32", (5, 2))
    tool.write(a, tmp_path / "out.h5", dataset="/grp/sub/x")
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert isinstance(f["grp/sub"], h5py.Group)
        assert same_bytes(f["grp/sub/x"][...], a)


def tile_files(path, superseded=False):
    """The tile files beside `path`: those of live generations, or (superseded=True) those a
    later write replaced and keeps for readers of the old file until the next write."""
    return sorted(p for p in (path.parent / (path.name + ".tiles")).rglob("*.h5")
                  if (p.parent / ".superseded").exists() == superseded)


def test_stale_tiles_are_removed_and_never_mapped(tool, tmp_path):
    out = tmp_path / "out.h5"
    tool.write(random_array("int32", (20, 4), seed=1), out, ranks=4)
    assert len(tile_files(out)) == 4
    b = random_array("int32", (20, 4), seed=2)
    tool.write(b, out, ranks=2)
    assert len(tile_files(out)) == 2 and len(tile_files(out, superseded=True)) == 4
    with h5py.File(out, "r") as f:
        assert same_bytes(f["data"][...], b)
        sources = {s.file_name for s in f["data"].virtual_sources()}
    assert {str(p.relative_to(tmp_path)) for p in tile_files(out)} == sources


def test_contiguous_overwrite_removes_old_tiles(tool, tmp_path):
    out = tmp_path / "out.h5"
    tool.write(random_array("int32", (20, 4)), out, ranks=4)
    tool.write(random_array("int32", (20, 4)), out, layout="contiguous")
    assert not tile_files(out) and len(tile_files(out, superseded=True)) == 4  # kept for old readers
    tool.write(random_array("int32", (20, 4)), out, layout="contiguous")
    assert not (tmp_path / "out.h5.tiles").exists()


def test_append_adds_and_replaces_datasets(tool, tmp_path):
    out = tmp_path / "out.h5"
    a = random_array("int64", (10,), seed=1)
    b = random_array("float32", (3, 3), seed=2)
    c = random_array("int64", (12,), seed=3)
    tool.write(a, out, dataset="/a", ranks=2)
    tool.write(b, out, dataset="/g/b", ranks=2, mode="append")
    tool.write(c, out, dataset="/a", ranks=3, mode="append")
    with h5py.File(out, "r") as f:
        assert same_bytes(f["a"][...], c)
        assert same_bytes(f["g/b"][...], b)
    assert len(tile_files(out)) == 5 and len(tile_files(out, superseded=True)) == 2


def test_exclusive_mode_refuses_an_existing_file(tool, tmp_path):
    out = tmp_path / "out.h5"
    a = random_array("int8", (4,))
    tool.write(a, out, mode="exclusive")
    code, err = tool.write(random_array("int8", (4,), seed=5), out, mode="exclusive", check=False)
    assert code == 1 and err["error"] == "FileExists" and "out.h5" in err["message"]
    with h5py.File(out, "r") as f:
        assert same_bytes(f["data"][...], a)


def test_directory_path_is_rejected_before_writing(tool, tmp_path):
    (tmp_path / "d.h5").mkdir()
    code, err = tool.write(random_array("int8", (4,)), tmp_path / "d.h5", check=False)
    assert code == 1 and err["error"] == "IsADirectory" and "d.h5" in err["message"]
    assert list((tmp_path / "d.h5").iterdir()) == []
    assert not (tmp_path / "d.h5.tiles").exists()


def test_tile_table_and_hdf5_opened_tiles_give_the_same_bytes(tool, tmp_path):
    a = random_array("complex64", (97, 5), seed=9)
    tool.write(a, tmp_path / "t.h5", ranks=7)
    with h5py.File(tmp_path / "t.h5", "r") as f:
        assert "h5tile_tile_table" in f["data"].attrs  # the fast path's table is there
        # offset, file size, XXH64, identity, then the tile's box (offset and extent per axis)
        assert f["data"].attrs["h5tile_tile_table"].shape == (7, 4 + 2 * 2)
    fast = tool.read(tmp_path / "t.h5", tmp=tmp_path)
    with h5py.File(tmp_path / "t.h5", "a") as f:
        del f["data"].attrs["h5tile_tile_table"]  # now every tile is opened with HDF5
    slow = tool.read(tmp_path / "t.h5", tmp=tmp_path)
    assert same_bytes(fast, a) and same_bytes(slow, a)


def test_tile_index_matches_the_mapping_and_a_forged_one_is_not_believed(tool, tmp_path):
    # The index that early reads start from holds what h5py sees in the mapping; a read from a
    # file whose index was rewritten still returns what the mapping says (h5py's answer).
    a = random_array("float32", (60, 9), seed=4)
    tool.write(a, tmp_path / "t.h5", ranks=5)
    with h5py.File(tmp_path / "t.h5", "a") as f:
        d = f["data"]
        attrs = d.attrs
        assert tuple(attrs["h5tile_shape"]) == a.shape
        assert isinstance(attrs["h5tile_dtype"], h5py.Empty) and attrs["h5tile_dtype"].dtype == a.dtype
        table = attrs["h5tile_tile_table"]
        names = [n.decode() for n in attrs["h5tile_tile_files"]]
        for row, name, m in zip(table, names, d.virtual_sources()):
            start, stop = m.vspace.get_select_bounds()
            assert tuple(row[4:6]) == start and tuple(row[6:8]) == tuple(e - s + 1 for s, e in zip(start, stop))
            assert name == m.file_name and m.dset_name == "/tile"
        names[0], names[3] = names[3], names[0]  # tiles of the same shape, in each other's place
        del attrs["h5tile_tile_files"]
        attrs.create("h5tile_tile_files", np.array([n.encode() for n in names]))
    with h5py.File(tmp_path / "t.h5", "r") as f:
        expected = f["data"][...]
    assert same_bytes(expected, a)
    assert same_bytes(tool.read(tmp_path / "t.h5", tmp=tmp_path), expected)
