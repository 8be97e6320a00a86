"""The default layout (issue 30, item 1): one process writing a whole array gets one
self-contained file (contiguous, or chunked when compressed or given chunks), so that copying the
.h5 alone copies the data; separate writers (comm=) keep the virtual layout; what must travel with
a virtual file is said by `h5tile verify`."""
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, OneRank, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def layout_of(path, name):
    with h5py.File(path, "r") as f:
        return {h5py.h5d.CONTIGUOUS: "contiguous", h5py.h5d.CHUNKED: "chunked", h5py.h5d.VIRTUAL: "virtual",
                h5py.h5d.COMPACT: "compact"}[f[name].id.get_create_plist().get_layout()]


@pytest.mark.parametrize("shape", [(3, 4), (1000, 37), (64, 8, 5)])
def test_the_default_is_one_file_that_travels_alone(tmp_path, shape):
    a = random_array("float64", shape, seed=1)
    h5tile.to_file(a, tmp_path / "w" / "share.h5", "/a", ranks=4).wait()
    assert not (tmp_path / "w" / "share.h5.tiles").exists()
    assert layout_of(tmp_path / "w" / "share.h5", "a") == "contiguous"
    (tmp_path / "elsewhere").mkdir()
    shutil.copy(tmp_path / "w" / "share.h5", tmp_path / "elsewhere" / "share.h5")  # the .h5 alone
    with h5py.File(tmp_path / "elsewhere" / "share.h5", "r") as f:
        assert same_bytes(f["a"][...], a)


@pytest.mark.parametrize("options", [{"compression": "gzip"}, {"chunks": (10, 37)},
                                     {"compression": "gzip", "shuffle": True, "chunks": (100, 37)}])
def test_compression_or_chunks_give_one_chunked_file(tmp_path, options):
    a = random_array("int32", (1000, 37), seed=2)
    h5tile.to_file(a, tmp_path / "c.h5", "/c", ranks=3, **options).wait()
    assert not (tmp_path / "c.h5.tiles").exists()
    assert layout_of(tmp_path / "c.h5", "c") == "chunked"
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert same_bytes(f["c"][...], a)
        if "chunks" in options:
            assert f["c"].chunks == options["chunks"]
        assert (f["c"].compression == "gzip") == ("compression" in options)


def test_a_second_dataset_is_added_to_the_same_file(tmp_path):
    a, b = random_array("float32", (50, 4), seed=3), random_array("uint8", (7,), seed=4)
    h5tile.to_file(a, tmp_path / "two.h5", "/a").wait()
    h5tile.to_file(b, tmp_path / "two.h5", "/g/b", mode="a").wait()
    assert not (tmp_path / "two.h5.tiles").exists()
    with h5py.File(tmp_path / "two.h5", "r") as f:
        assert same_bytes(f["a"][...], a) and same_bytes(f["g/b"][...], b)


def test_separate_writers_and_an_explicit_virtual_layout_keep_the_tiles(tmp_path):
    a = random_array("float32", (40, 6), seed=5)
    h5tile.write_tile(a, tmp_path / "mpi.h5", "/m", comm=OneRank(), offset=(0, 0), global_shape=a.shape)
    assert layout_of(tmp_path / "mpi.h5", "m") == "virtual" and (tmp_path / "mpi.h5.tiles").is_dir()
    h5tile.to_file(a, tmp_path / "v.h5", "/v", ranks=2, layout="virtual").wait()
    assert layout_of(tmp_path / "v.h5", "v") == "virtual"
    for name, path in (("m", "mpi.h5"), ("v", "v.h5")):
        assert same_bytes(h5tile.from_file(tmp_path / path, "/" + name), a)


def test_verify_says_what_must_travel_with_a_virtual_file(tmp_path):
    a = random_array("float32", (40, 6), seed=6)
    h5tile.to_file(a, tmp_path / "v.h5", "/v", ranks=2, layout="virtual").wait()
    h5tile.to_file(a, tmp_path / "v.h5", "/one", mode="a").wait()
    out = subprocess.run([str(BUILD / "cli" / "h5tile"), "verify", "v.h5"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 2)[1:] if line.count(" ") > 1 else (line.split(" ")[1], "")
                 for line in out.stdout.splitlines())
    with h5py.File(tmp_path / "v.h5", "r") as f:
        folders = {s.file_name.rsplit("/", 1)[0] + "/" for s in f["v"].virtual_sources()}
    assert all(folder.startswith("v.h5.tiles/") for folder in folders)
    assert all(folder in lines["/v"] for folder in folders) and "h5py reads zeros" in lines["/v"]
    assert lines["/one"] == ""  # contiguous: nothing travels with it
