"""Every byte h5tile reads comes from the object HDF5 would read, or the read fails.

Each test builds a file where reading by offset from the wrong object would return plausible
but wrong bytes (an external link read from the linking file, a tile replaced by another file
of the same size, a tile index with a forged raw offset), and compares h5tile with h5py.
"""
import os
import subprocess

import h5py
import numpy as np
import pytest

import h5tile
from conftest import BUILD, random_array, same_bytes

EARLY = ["1", "0"]  # reads that start from the tile index, and reads that wait for the mapping


def cli(*args, cwd):
    return subprocess.run([str(BUILD / "cli" / "h5tile"), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def read_in_process(path, dataset, early, tmp_path, tool):
    """h5tile's read in a fresh process (settings are read once per process)."""
    env = dict(os.environ, H5TILE_EARLY_READS=early)
    raw = tmp_path / "read.raw"
    proc = subprocess.run([str(tool.path), "read", str(path), dataset, str(raw)], capture_output=True, text=True,
                          env=env, timeout=120)
    return proc, raw


# --- 1. External links: the bytes come from the file HDF5 opened, not from the linking one ---


def make_linked(tmp_path, layout):
    target = random_array("float64", (300, 40), seed=1)
    with h5py.File(tmp_path / "other.h5", "w") as f:
        # Something first, so that the target's bytes lie deep in the file.
        f.create_dataset("pad", data=random_array("uint8", (70000,), seed=2))
        if layout == "chunked":
            f.create_dataset("data", data=target, chunks=(64, 40))
        else:
            f.create_dataset("data", data=target)
        offset = f["data"].id.get_offset() if layout == "contiguous" else None
    with h5py.File(tmp_path / "good.h5", "w") as f:
        # The linking file's own bytes where the target's lie in other.h5: a read at the target's
        # offset in the wrong file returns these, not zeros or an error.
        f.create_dataset("decoy", data=random_array("uint8", (400000,), seed=3))
        f["data"] = h5py.ExternalLink("other.h5", "/data")
    if offset is not None:
        assert os.path.getsize(tmp_path / "good.h5") > offset + target.nbytes
    return target


@pytest.mark.parametrize("layout", ["contiguous", "chunked"])
def test_a_dataset_behind_an_external_link_is_read_from_the_linked_file(tmp_path, monkeypatch, layout):
    monkeypatch.chdir(tmp_path)
    target = make_linked(tmp_path, layout)
    with h5py.File(tmp_path / "good.h5", "r") as f:
        assert same_bytes(f["data"][...], target)  # the independent reader
    assert same_bytes(h5tile.from_file(tmp_path / "good.h5", "/data"), target)
    assert same_bytes(h5tile.read_box(tmp_path / "good.h5", "/data", (17, 3), (200, 30)), target[17:217, 3:33])
    whole = np.empty_like(target)
    for block, (r, c) in h5tile.from_file_batched(tmp_path / "good.h5", "/data", (64, 16)):
        whole[r:r + block.shape[0], c:c + block.shape[1]] = block
    assert same_bytes(whole, target)
    h5tile.consolidate(tmp_path / "good.h5", "/data", tmp_path / "one.h5")
    with h5py.File(tmp_path / "one.h5", "r") as f:
        assert same_bytes(f["data"][...], target)


def test_a_tile_that_is_an_external_link_is_read_from_the_linked_file(tmp_path, monkeypatch, tool):
    monkeypatch.chdir(tmp_path)
    a = random_array("float64", (300, 40), seed=5)
    tool.write(a, tmp_path / "v.h5", ranks=2)
    with h5py.File(tmp_path / "v.h5", "r") as f:
        tile = tmp_path / f["data"].virtual_sources()[0].file_name
    target = make_linked(tmp_path, "contiguous")[:150]
    with h5py.File(tmp_path / "other.h5", "a") as f:
        f.create_dataset("half", data=target)
    # The tile file keeps its size but its "/tile" now links elsewhere (HDF5 follows the link).
    size = os.path.getsize(tile)
    with h5py.File(tile, "w") as f:
        f.create_dataset("decoy", data=random_array("uint8", (100000,), seed=6))
        f["tile"] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/half")
    with open(tile, "r+b") as f:
        f.truncate(max(size, os.path.getsize(tile)))
    with h5py.File(tmp_path / "v.h5", "r") as f:
        expected = f["data"][...]
    assert same_bytes(expected[:150], target) and same_bytes(expected[150:], a[150:])
    for early in EARLY:
        proc, raw = read_in_process(tmp_path / "v.h5", "/data", early, tmp_path, tool)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert raw.read_bytes() == expected.tobytes(), f"H5TILE_EARLY_READS={early}"


# --- 3. A tile replaced by another file of the same size is not trusted by its size ---


def replace_tile(tmp_path, how):
    """Writes a virtual dataset of 3 tiles and replaces the file of tile 1 in the way `how` says,
    keeping its size. Returns the array written and the path of the replaced tile."""
    a = random_array("float32", (90, 500), seed=7)
    h5tile.to_file(a, tmp_path / "v.h5", "/data", ranks=3, layout="virtual").wait()
    with h5py.File(tmp_path / "v.h5", "r") as f:
        tile = tmp_path / f["data"].virtual_sources()[1].file_name
    size = os.path.getsize(tile)
    if how == "other dtype":
        # The same shape as int32 (4 bytes too), data aligned as h5tile aligns it.
        with h5py.File(tile, "w", alignment_threshold=4096, alignment_interval=4096) as f:
            f.create_dataset("tile", data=np.arange(30 * 500, dtype=np.int32).reshape(30, 500))
        with open(tile, "r+b") as f:
            f.truncate(size)  # HDF5 reads a file longer than its data
    elif how == "zeros":
        tile.write_bytes(bytes(size))
    else:
        tile.write_bytes(np.random.default_rng(8).bytes(size))
    assert os.path.getsize(tile) == size
    return a, tile


def test_a_tile_rewritten_with_another_dtype_reads_as_hdf5_reads_it(tmp_path, tool):
    a, _ = replace_tile(tmp_path, "other dtype")
    with h5py.File(tmp_path / "v.h5", "r") as f:
        expected = f["data"][...]  # HDF5 converts the int32 tile to float32
    assert same_bytes(expected[30:60], np.arange(30 * 500, dtype=np.float32).reshape(30, 500))
    assert same_bytes(expected[:30], a[:30])
    for early in EARLY:
        proc, raw = read_in_process(tmp_path / "v.h5", "/data", early, tmp_path, tool)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert raw.read_bytes() == expected.tobytes(), f"H5TILE_EARLY_READS={early}"
    assert same_bytes(h5tile.from_file(tmp_path / "v.h5", "/data"), expected)
    assert same_bytes(h5tile.read_box(tmp_path / "v.h5", "/data", (25, 0), (10, 500)), expected[25:35])


@pytest.mark.parametrize("how", ["zeros", "random bytes"])
def test_a_tile_replaced_by_bytes_that_are_not_hdf5_is_an_error(tmp_path, tool, how):
    _, tile = replace_tile(tmp_path, how)
    for early in EARLY:
        proc, _ = read_in_process(tmp_path / "v.h5", "/data", early, tmp_path, tool)
        assert proc.returncode != 0, f"H5TILE_EARLY_READS={early} read a tile of {how}"
        assert "VirtualSourceError" in proc.stdout and tile.name in proc.stdout, proc.stdout
    with pytest.raises(h5tile.VirtualSourceError, match=tile.name):
        h5tile.from_file(tmp_path / "v.h5", "/data")
    with pytest.raises(h5tile.VirtualSourceError, match=tile.name):
        for _ in h5tile.from_file_batched(tmp_path / "v.h5", "/data", (20, 500)):
            pass
    assert cli("verify", "v.h5", cwd=tmp_path).returncode == 1


# --- 4. A tile index with a forged raw offset: ignored, the read done from the mapping ---


@pytest.mark.parametrize("offset", [0, 8192, 1 << 40])
def test_a_forged_raw_offset_in_the_tile_index_is_not_believed(tmp_path, tool, offset):
    a = random_array("int16", (64, 300), seed=9)
    h5tile.to_file(a, tmp_path / "v.h5", "/data", ranks=4, layout="virtual").wait()
    with h5py.File(tmp_path / "v.h5", "a") as f:
        table = f["data"].attrs["h5tile_tile_table"]
        table[2][0] = offset
        f["data"].attrs["h5tile_tile_table"] = table
    with h5py.File(tmp_path / "v.h5", "r") as f:
        assert same_bytes(f["data"][...], a)  # the mapping (all h5py reads) is intact
    for early in EARLY:
        proc, raw = read_in_process(tmp_path / "v.h5", "/data", early, tmp_path, tool)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert raw.read_bytes() == a.tobytes(), f"H5TILE_EARLY_READS={early}"
    assert same_bytes(h5tile.from_file(tmp_path / "v.h5", "/data"), a)
    blocks = np.empty_like(a)
    for block, (r, c) in h5tile.from_file_batched(tmp_path / "v.h5", "/data", (10, 300)):
        blocks[r:r + block.shape[0], c:c + block.shape[1]] = block
    assert same_bytes(blocks, a)
    out = cli("verify", "v.h5", cwd=tmp_path)
    assert out.returncode == 1 and "raw offset" in out.stdout, out.stdout


# --- 5. A forged h5tile_shape attribute: reads give HDF5's view (h5py's bytes), verify says so ---


@pytest.mark.parametrize("forged", [[64, 301], [32, 300], [1 << 40, 1 << 40], [64, 300, 1], [-1, 300], "64x300"],
                         ids=str)
@pytest.mark.parametrize("layout", ["virtual", "contiguous", "chunked"])
def test_a_forged_shape_attribute_is_not_believed(tmp_path, tool, layout, forged):
    a = random_array("int16", (64, 300), seed=11)
    h5tile.to_file(a, tmp_path / "v.h5", "/data", ranks=4, layout=layout).wait()
    with h5py.File(tmp_path / "v.h5", "a") as f:
        f["data"].attrs["h5tile_shape"] = forged  # replaces h5tile's (virtual), or adds one
    with h5py.File(tmp_path / "v.h5", "r") as f:
        expected = f["data"][...]
    assert same_bytes(expected, a)
    for early in EARLY:
        proc, raw = read_in_process(tmp_path / "v.h5", "/data", early, tmp_path, tool)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert raw.read_bytes() == expected.tobytes(), f"H5TILE_EARLY_READS={early}"
    assert same_bytes(h5tile.from_file(tmp_path / "v.h5", "/data"), expected)
    assert same_bytes(h5tile.read_box(tmp_path / "v.h5", "/data", (5, 7), (30, 200)), expected[5:35, 7:207])
    blocks = np.empty_like(expected)
    for block, (r, c) in h5tile.from_file_batched(tmp_path / "v.h5", "/data", (10, 300)):
        blocks[r:r + block.shape[0], c:c + block.shape[1]] = block
    assert same_bytes(blocks, expected)
    assert h5tile.describe(tmp_path / "v.h5", "/data")["shape"] == (64, 300)
    out = cli("verify", "v.h5", cwd=tmp_path)
    says = "is no list of" if isinstance(forged, str) else "gives shape [" + ", ".join(map(str, forged)) + "]"
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"attribute 'h5tile_shape' {says}" in out.stdout and "HDF5 gives shape [64, 300]" in out.stdout, out.stdout


# --- Virtual sources: the file HDF5's search finds (HDF5_VDS_PREFIX, a moved absolute name) ---


@pytest.mark.parametrize("prefix", ["${ORIGIN}/sub", "${ORIGIN}sub", "/nonexistent:{sub}", "{sub}", "", "."])
def test_a_virtual_source_is_the_file_hdf5_finds(tmp_path, tool, prefix):
    # src.h5 beside the file, another in sub/ and in the working directory: HDF5 takes the
    # prefixes first (each of a ':'-separated list, and "${ORIGIN}" as the file's folder); an
    # absolute name that does not exist is looked for by its last component.
    for where, value in [(tmp_path, 1), (tmp_path / "sub", 2), (tmp_path / "cwd", 3)]:
        where.mkdir(exist_ok=True)
        with h5py.File(where / "src.h5", "w") as f:
            f["d"] = np.full((4, 5), value, "i4")
    with h5py.File(tmp_path / "v.h5", "w", libver=("v110", "v110")) as f:
        for name, file in [("relative", "src.h5"), ("moved", "/nonexistent/folder/src.h5")]:
            layout = h5py.VirtualLayout(shape=(4, 5), dtype="i4")
            layout[:] = h5py.VirtualSource(file, "d", shape=(4, 5))
            f.create_virtual_dataset(name, layout, fillvalue=-1)
    env = dict(os.environ, HDF5_VDS_PREFIX=prefix.replace("{sub}", str(tmp_path / "sub")))
    for name in ["relative", "moved"]:
        expect = subprocess.run(
            ["python3", "-c", f"import h5py, sys; sys.stdout.buffer.write(h5py.File(sys.argv[1])['{name}'][()].tobytes())",
             str(tmp_path / "v.h5")], capture_output=True, env=env, cwd=tmp_path / "cwd", timeout=120, check=True).stdout
        raw = tmp_path / "read.raw"
        proc = subprocess.run([str(tool.path), "read", str(tmp_path / "v.h5"), name, str(raw)], capture_output=True,
                              text=True, env=env, cwd=tmp_path / "cwd", timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert raw.read_bytes() == expect, (name, np.frombuffer(expect, "i4")[:1], np.frombuffer(raw.read_bytes(), "i4")[:1])
