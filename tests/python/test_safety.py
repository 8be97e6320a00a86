"""What a write must never do: break readers of the old file, write or delete through planted
symbolic links, ignore the umask, or leave a half-written file or litter when the disk fills."""
import errno
import os
import stat
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, mount_small, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def generations(out, dataset="data"):
    folder = out.parent / (out.name + ".tiles") / dataset
    return sorted(p for p in folder.iterdir()) if folder.exists() else []


def test_a_reader_that_opened_the_old_file_reads_it_whole_after_an_overwrite(tmp_path):
    out = tmp_path / "out.h5"
    old = random_array("float32", (300, 200), seed=1)
    new = random_array("float32", (300, 200), seed=2)
    h5tile.to_file(old, out, "/data", ranks=4, layout="virtual").wait()
    with h5py.File(out, "r") as f:
        dset = f["data"]  # opened, nothing read yet: HDF5 opens the tile files lazily
        h5tile.to_file(new, out, "/data", ranks=3, layout="virtual").wait()
        assert dset[...].tobytes() == old.tobytes()
    assert h5tile.from_file(out, "/data").tobytes() == new.tobytes()
    # The replaced generation is kept (marked) until the next write, which removes it.
    first = generations(out)
    assert len(first) == 2 and sum((g / ".superseded").exists() for g in first) == 1
    replaced = next(g for g in first if (g / ".superseded").exists())
    current = next(g for g in first if g != replaced)
    h5tile.to_file(old, out, "/data", ranks=2, layout="virtual").wait()
    second = generations(out)
    assert len(second) == 2 and replaced not in second
    assert current in second and (current / ".superseded").exists()


def test_keep_previous_off_removes_the_old_tiles_at_once(tmp_path):
    out = tmp_path / "out.h5"
    old = np.arange(1, 60001, dtype=np.int32).reshape(300, 200)
    h5tile.to_file(old, out, "/data", ranks=4, layout="virtual").wait()
    with h5py.File(out, "r") as f:
        dset = f["data"]
        h5tile.to_file(old * 2, out, "/data", ranks=4, keep_previous=False, layout="virtual").wait()
        assert len(generations(out)) == 1
        # The documented cost: HDF5 readers of the old file now get fill values (0) instead.
        assert not np.array_equal(dset[...], old)


def test_planted_symbolic_links_are_refused_and_never_followed(tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out.h5"
    old = random_array("int16", (64, 64), seed=3)

    # A link where the tile folder goes: the write fails naming it; nothing lands in the target.
    (work / "out.h5.tiles").symlink_to(precious, target_is_directory=True)
    with pytest.raises(OSError, match="symbolic link"):
        h5tile.to_file(old, out, "/data", ranks=2, layout="virtual").wait()
    assert sorted(p.name for p in precious.iterdir()) == ["keep.txt"]
    assert not out.exists()
    (work / "out.h5.tiles").unlink()

    # A link below the tile folder, at the dataset's folder.
    h5tile.to_file(old, out, "/data", ranks=2, layout="virtual").wait()
    (work / "out.h5.tiles" / "grp").mkdir()
    (work / "out.h5.tiles" / "grp" / "x").symlink_to(precious, target_is_directory=True)
    with pytest.raises(OSError, match="symbolic link"):
        h5tile.to_file(old, out, "/grp/x", ranks=2, mode="a", layout="virtual").wait()
    assert sorted(p.name for p in precious.iterdir()) == ["keep.txt"]
    assert h5tile.from_file(out, "/data").tobytes() == old.tobytes()  # the file is as before

    # A link among the stale entries: the clean-up removes the link, never what it points to.
    (work / "out.h5.tiles" / "grp" / "x").unlink()
    (work / "out.h5.tiles" / "data" / "0123456789abcdef-1-00000000").symlink_to(precious, target_is_directory=True)
    h5tile.to_file(old, out, "/data", ranks=2, layout="virtual").wait()
    assert (precious / "keep.txt").read_text() == "mine"
    assert not (work / "out.h5.tiles" / "data" / "0123456789abcdef-1-00000000").exists()

    # A link where the lock file was once: the commit locks the folder itself, so the link is
    # neither followed nor written through.
    victim = precious / "keep.txt"
    (work / ".out.h5.lock").symlink_to(victim)
    h5tile.to_file(old, out, "/data", ranks=2, layout="virtual").wait()
    assert victim.read_text() == "mine" and (work / ".out.h5.lock").is_symlink()
    assert h5tile.from_file(out, "/data").tobytes() == old.tobytes()


@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
def test_a_write_to_a_link_to_a_file_replaces_the_link_and_leaves_the_file(tmp_path, layout):
    # A write renames its new file into place: where the path is a symbolic link, the link is
    # replaced and the file it led to stays as it was (documented; h5py writes through links).
    (tmp_path / "data").mkdir()
    real = tmp_path / "data" / "real.h5"
    link = tmp_path / "link.h5"
    with h5py.File(real, "w") as f:
        f["other"] = np.arange(4)
    before = real.read_bytes()
    link.symlink_to(real)
    a = random_array("float32", (30, 7), seed=5)
    h5tile.to_file(a, link, "/a", layout=layout, mode="a", ranks=2).wait()
    assert not link.is_symlink() and real.read_bytes() == before
    with h5py.File(link, "r") as f:  # the append kept what the linked file held
        assert sorted(f) == ["a", "other"] and same_bytes(f["a"][...], a) and list(f["other"][...]) == [0, 1, 2, 3]
    assert same_bytes(h5tile.from_file(link, "/a"), a)


@pytest.mark.parametrize("layout", ["virtual", "contiguous", "chunked"])
def test_a_write_leaves_only_its_file_and_tiles_no_lock_file(tmp_path, layout):
    a = random_array("int32", (100, 30), seed=4)
    for mode in ("w", "w", "a"):  # a new file, an overwrite, an append
        h5tile.to_file(a, tmp_path / "one.h5", "/data", ranks=3, layout=layout, mode=mode).wait()
    h5tile.consolidate(tmp_path / "one.h5", "/data", tmp_path / "two.h5")
    expected = {"one.h5", "two.h5"} | ({"one.h5.tiles"} if layout == "virtual" else set())
    assert {p.name for p in tmp_path.iterdir()} == expected
    assert h5tile.from_file(tmp_path / "two.h5", "/data").tobytes() == a.tobytes()


@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
def test_modes_follow_the_umask(tmp_path, layout):
    previous = os.umask(0o027)
    try:
        h5tile.to_file(np.ones((64, 64), np.float64), tmp_path / "u.h5", "/g/d", ranks=3, layout=layout).wait()
    finally:
        os.umask(previous)
    seen = 0
    for root, dirs, files in os.walk(tmp_path):
        for name in dirs:
            assert stat.S_IMODE(os.stat(os.path.join(root, name)).st_mode) == 0o750, name
            seen += 1
        for name in files:
            assert stat.S_IMODE(os.stat(os.path.join(root, name)).st_mode) == 0o640, name
            seen += 1
    assert seen >= (1 if layout == "contiguous" else 8)  # main file (, folders, tiles)


@pytest.mark.parametrize("fs", ["tmpfs", "ext4-loop"])
@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
def test_disk_full_is_a_clear_error_and_keeps_the_previous_file(tmp_path, fs, layout):
    small = tmp_path / "small"
    mount_small(fs, small, tmp_path)
    try:
        out = small / "out.h5"
        old = random_array("float32", (1024, 1024), seed=4)  # 4 MiB
        h5tile.to_file(old, out, "/data", ranks=3, layout=layout, keep_previous=False).wait()
        before = sorted(p.relative_to(small) for p in small.rglob("*"))
        big = np.ones((8192, 1024), np.float32)  # 32 MiB: more than the filesystem holds
        with pytest.raises(h5tile.Error) as caught:
            h5tile.to_file(big, out, "/data", ranks=3, layout=layout).wait()
        assert "No space left on device" in str(caught.value) or "File too large" in str(caught.value)
        assert isinstance(caught.value, OSError) and caught.value.errno == errno.ENOSPC
        with h5py.File(out, "r") as f:
            assert f["data"][...].tobytes() == old.tobytes()
        after = sorted(p.relative_to(small) for p in small.rglob("*"))
        assert after == before  # no temporary file, no new tile folder
        # With the space back, the same write succeeds.
        h5tile.to_file(big[:2048], out, "/data", ranks=3, layout=layout, keep_previous=False).wait()
        assert np.array_equal(h5tile.from_file(out, "/data"), big[:2048])
    finally:
        subprocess.run(["umount", str(small)], check=True)


# A compressed virtual write that runs out of space: the error, then a clean exit. HDF5 pushes an
# error while creating a tile whose filter h5tile applies itself (zstd, lz4, blosc are unknown to
# HDF5); the rank's thread ended with it on its error stack, and HDF5 then printed "HDF5: infinite
# loop closing library" at exit.
@pytest.mark.parametrize("compression", ["zstd", "lz4", "blosc", "gzip"])
def test_a_compressed_virtual_write_that_fills_the_disk_closes_everything(tmp_path, compression):
    if compression not in h5tile.compressors():
        pytest.skip(f"this build of h5tile has no {compression}")
    if compression != "gzip":
        pytest.importorskip("hdf5plugin")  # for h5py to read the previous file
    small = tmp_path / "small"
    mount_small("tmpfs", small, tmp_path, size="8m")
    try:
        out = small / "out.h5"
        old = np.arange(256 * 256, dtype=np.float32).reshape(256, 256)
        h5tile.to_file(old, out, "/data", ranks=3, compression=compression, keep_previous=False).wait()
        before = sorted(p.relative_to(small) for p in small.rglob("*"))
        done = subprocess.run([sys.executable, "-c", f"""
import ctypes, errno, sys
import numpy as np
sys.path.insert(0, {str(BUILD / "python")!r})
import h5tile
big = np.random.default_rng(0).random((4096, 1024)).astype(np.float32)  # 16 MiB that hardly compress
try:
    h5tile.to_file(big, {str(out)!r}, "/data", ranks=3, compression={compression!r}, chunks=(1, 64)).wait()
except h5tile.Error as e:
    print("raised", type(e).__name__, getattr(e, "errno", None) == errno.ENOSPC)
# HDF5's own count of what is open (H5Fget_obj_count of every kind), in the HDF5 that h5tile uses.
print("open objects", h5tile._h5tile.open_hdf5_objects())
"""], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
        assert "raised IoError True" in done.stdout, done.stdout + done.stderr
        assert "open objects 0" in done.stdout, done.stdout
        assert done.stderr == "", done.stderr  # no "infinite loop closing library", no HDF5-DIAG
        with h5py.File(out, "r") as f:
            assert f["data"][...].tobytes() == old.tobytes()
        assert sorted(p.relative_to(small) for p in small.rglob("*")) == before
    finally:
        subprocess.run(["umount", str(small)], check=True)
