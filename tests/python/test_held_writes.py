"""An h5tile.File in a write mode holds its file open for writing until close(), as h5py's does
(issue 41: a logger's appends a row at a time cost what h5py's cost): every write goes through
that one open. What this must never change: reads in this process see each write at once, other
processes see it after flush() or close(), a to_file of the same path meanwhile keeps both, and
the result is what h5py makes of the same calls."""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, compressible, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def logger(m, path, rows, chunks=(8, 4), compression=None):
    """Appends `rows` one at a time, reading each back through the same File as it goes."""
    seen = []
    with m.File(path, "w") as f:
        log = f.create_dataset("log", (0, 4), "f8", maxshape=(None, 4), chunks=chunks, compression=compression)
        for i, row in enumerate(rows):
            log.resize(i + 1, axis=0)
            log[i] = row
            seen.append(np.array(log[i]))  # read through the File: the row just written
            if i % 7 == 3:
                seen.append(np.array(log[...]))  # and the whole so far
    return seen


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_appends_read_back_at_once_and_match_h5py(tmp_path, compression):
    rows = compressible("float64", (37, 4), 1)
    theirs = logger(h5py, tmp_path / "h5py.h5", rows, compression=compression)
    ours = logger(h5tile, tmp_path / "h5tile.h5", rows, compression=compression)
    assert len(theirs) == len(ours)
    for a, b in zip(theirs, ours):
        assert same_bytes(a, b)
    with h5py.File(tmp_path / "h5py.h5", "r") as a, h5py.File(tmp_path / "h5tile.h5", "r") as b:
        assert same_bytes(a["log"][()], b["log"][()]) and b["log"].maxshape == (None, 4)


def read_in_another_process(path, locking=True):
    """What h5py in another process reads (with HDF5's file locking off where `locking` is False:
    a file held open for writing is locked against other processes, by h5py's HDF5 as by h5tile's)."""
    code = f"import h5py; f = h5py.File({str(path)!r}, 'r'); print(f['log'].shape[0], float(f['log'][()].sum()))"
    env = dict(os.environ, **({} if locking else {"HDF5_USE_FILE_LOCKING": "FALSE"}))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    count, total = out.stdout.split()
    return int(count), float(total)


def test_flush_makes_the_writes_visible_to_other_processes(tmp_path):
    # As with h5py: while the file is held for writing, HDF5's lock keeps other processes out
    # unless they turn locking off; what they read then is what was flushed.
    path = tmp_path / "log.h5"
    with h5tile.File(path, "w") as f:
        log = f.create_dataset("log", (0, 4), "f8", maxshape=(None, 4), chunks=(16, 4))
        for i in range(5):
            log.resize(i + 1, axis=0)
            log[i] = i
        f.flush()
        with pytest.raises(AssertionError, match="lock"):
            read_in_another_process(path)
        assert read_in_another_process(path, locking=False) == (5, 4.0 * (0 + 1 + 2 + 3 + 4))
        log.resize(6, axis=0)
        log[5] = 10
    assert read_in_another_process(path) == (6, 4.0 * 20)


def test_a_to_file_of_the_held_path_keeps_both(tmp_path):
    # to_file in append mode copies the file and renames the copy over it: the File's writes
    # before it are in the copy (flushed first), and those after it go to the new file.
    path = tmp_path / "f.h5"
    with h5tile.File(path, "w") as f:
        ds = f.create_dataset("a", (4, 3), "i4", chunks=(2, 3), maxshape=(None, 3))
        ds[0] = 1
        h5tile.to_file(np.arange(6).reshape(2, 3), path, "/b", mode="a").wait()
        ds.resize(5, axis=0)
        ds[4] = 7
        f.create_group("g")
    with h5py.File(path, "r") as f:
        expected = np.zeros((5, 3), "i4")
        expected[0], expected[4] = 1, 7
        assert same_bytes(f["a"][()], expected)
        assert same_bytes(f["b"][()], np.arange(6).reshape(2, 3)) and "g" in f


def test_two_files_of_one_path_share_the_hold(tmp_path):
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", (4,), "i8", chunks=(2,))
    one = h5tile.File(path, "a")
    two = h5tile.File(path, "r+")
    one["x"][0] = 5
    two["x"][1] = 6
    assert list(two["x"][:2]) == [5, 6] and list(one["x"][:2]) == [5, 6]
    one.close()
    two["x"][2] = 7  # still held by the second
    two.close()
    with h5py.File(path, "r") as f:
        assert list(f["x"][()]) == [5, 6, 7, 0]


def test_a_file_collected_without_close_lets_go(tmp_path):
    import gc
    path = tmp_path / "f.h5"
    f = h5tile.File(path, "w")
    f["x"] = np.arange(3)
    del f
    gc.collect()
    assert read_in_another_process_x(path) == [0, 1, 2]


def read_in_another_process_x(path):
    code = f"import h5py; print(list(h5py.File({str(path)!r}, 'r')['x'][()]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return eval(out.stdout)  # noqa: S307 - a list of ints printed by the child


def test_a_forked_child_may_not_write_a_file_its_parent_holds(tmp_path):
    # HDF5 in the child would hand back the parent's open as it was at the fork, and its flush
    # would undo the parent's writes: refused by name.
    import multiprocessing as mp
    path = tmp_path / "f.h5"
    with h5tile.File(path, "w") as f:
        f["d"] = np.arange(4)
        ctx = mp.get_context("fork")
        queue = ctx.Queue()

        def child():
            try:
                with h5tile.File(path, "a") as g:
                    g["d"][0] = 99
                queue.put("written")
            except h5tile.InvalidArgumentError as e:
                queue.put(str(e))

        process = ctx.Process(target=child)
        process.start()
        said = queue.get(timeout=60)
        process.join(60)
        assert "parent process holds it" in said, said
        f["d"][1] = 5
    with h5py.File(path, "r") as f:
        assert list(f["d"][()]) == [0, 5, 2, 3]


def test_close_after_a_change_of_working_folder_lets_go(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    f = h5tile.File("rel.h5", "w")
    f["x"] = np.arange(3)
    monkeypatch.chdir(tmp_path / "b")
    f.close()
    assert read_in_another_process_x(tmp_path / "a" / "rel.h5") == [0, 1, 2]  # flushed, and not locked


def test_a_shrink_hdf5_cannot_filter_is_refused_and_a_grow_works(tmp_path):
    hdf5plugin = pytest.importorskip("hdf5plugin")
    path = tmp_path / "z.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=np.arange(12.0), chunks=(4,), maxshape=(None,), **hdf5plugin.Zstd())
    with h5tile.File(path, "a") as f:
        with pytest.raises(TypeError, match="cannot shrink"):
            f["d"].resize((6,))
        assert f["d"].shape == (12,)
        f["d"].resize((14,))
        f["d"][12:] = 5
    with h5py.File(path, "r") as f:
        assert list(f["d"][()]) == list(range(12)) + [5, 5]
