"""Background writes are never lost silently (issue 30, items 2 and 10): a failed write is reported
by wait(), by the warning of a handle collected unobserved, or at interpreter exit (stderr, exit
status 1); the error is an OSError naming the path."""
import errno
import gc
import os
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def run_child(code: str, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def unwritable_target(tmp_path):
    """A path below a folder that cannot be made (its name is too long: ENAMETOOLONG): the
    checks made before to_file returns pass (the nearest existing folder is writable), and the
    write fails in the background, as a write to /proc/x/y.h5 does as root."""
    return tmp_path / ("x" * 300) / "y.h5"


def test_a_failed_write_is_an_oserror_naming_the_folder(tmp_path):
    target = unwritable_target(tmp_path)
    handle = h5tile.to_file(np.ones(3), target, "/a")
    with pytest.raises(h5tile.IoError) as raised:
        handle.wait()
    assert isinstance(raised.value, OSError) and raised.value.errno == errno.ENAMETOOLONG
    assert f"cannot create the folder '{target.parent}'" in str(raised.value)
    assert "filesystem error" not in str(raised.value)
    assert os.listdir(tmp_path) == []  # nothing was written


@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
def test_a_failed_write_nobody_waited_for_is_reported_at_exit(tmp_path, layout):
    target = unwritable_target(tmp_path)
    done = run_child(f"""
        import numpy as np, h5tile
        h5tile.to_file(np.ones(3), {str(target)!r}, "/a", layout={layout!r})
        print("the program's own output")
    """, tmp_path)
    assert done.returncode == 1, done
    assert "the program's own output" in done.stdout  # flushed before the exit
    assert "h5tile: the write of '/a' to" in done.stderr and str(target) in done.stderr
    assert "IoError" in done.stderr


def test_writes_pending_at_exit_are_completed(tmp_path):
    done = run_child(f"""
        import numpy as np, h5tile
        h5tile.to_file(np.arange(1 << 20, dtype=np.float64), {str(tmp_path / 'ok.h5')!r}, "/a", ranks=4)
    """, tmp_path)
    assert done.returncode == 0 and done.stderr == "", done
    with h5py.File(tmp_path / "ok.h5", "r") as f:
        assert (f["a"][...] == np.arange(1 << 20, dtype=np.float64)).all()


def test_an_error_seen_through_fence_or_wait_is_not_reported_again(tmp_path):
    target = unwritable_target(tmp_path)
    done = run_child(f"""
        import numpy as np, h5tile
        h = h5tile.to_file(np.ones(3), {str(target)!r}, "/a")
        try:
            h5tile.fence()
        except h5tile.IoError:
            print("fence raised")
        try:
            h.wait()
        except h5tile.IoError:
            print("wait raised")
    """, tmp_path)
    assert done.returncode == 0, done
    assert done.stdout.split() == ["fence", "raised", "wait", "raised"]
    assert "h5tile:" not in done.stderr


def test_a_handle_collected_with_an_unseen_error_warns(tmp_path):
    handle = h5tile.to_file(np.ones(3), unwritable_target(tmp_path), "/a")
    while not handle.done():
        pass
    with pytest.warns(RuntimeWarning, match="failed and nobody waited for it"):
        del handle
        gc.collect()
    with pytest.raises(h5tile.IoError):  # fence() still reports every write not fenced before
        h5tile.fence()


def test_a_failure_warned_about_is_not_reported_again_at_exit(tmp_path):
    done = run_child(f"""
        import gc, warnings, numpy as np, h5tile
        warnings.simplefilter("always")
        h = h5tile.to_file(np.ones(3), {str(unwritable_target(tmp_path))!r}, "/a")
        while not h.done():
            pass
        del h
        gc.collect()
    """, tmp_path)
    assert done.returncode == 0, done
    assert done.stderr.count("failed") == 1 and "RuntimeWarning" in done.stderr


def test_handle_repr_result_and_with(tmp_path):
    a = np.arange(12.0).reshape(3, 4)
    with h5tile.to_file(a, tmp_path / "w.h5", "/x") as handle:
        assert str(tmp_path / "w.h5") in repr(handle) and "/x" in repr(handle)
    assert handle.done() and repr(handle).endswith("done>")
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert (f["x"][...] == a).all()
    failed = h5tile.to_file(a, unwritable_target(tmp_path), "/x")
    with pytest.raises(h5tile.IoError):
        failed.result()
    assert repr(failed).endswith("failed>")
    with pytest.raises(ValueError, match="no timeout"):
        failed.result(timeout=1)


@pytest.mark.parametrize("keep_previous", [True, False])
def test_replacing_a_file_leaves_no_folder_of_a_dataset_it_no_longer_has(tmp_path, keep_previous):
    a, b = np.arange(12.0).reshape(3, 4), np.ones((5, 2), dtype=np.int16)
    h5tile.to_file(a, tmp_path / "two.h5", "/g/a", layout="virtual").wait()
    h5tile.to_file(b, tmp_path / "two.h5", "/b", keep_previous=keep_previous, layout="virtual").wait()
    h5tile.to_file(b, tmp_path / "two.h5", "/b", keep_previous=keep_previous, layout="virtual").wait()
    with h5py.File(tmp_path / "two.h5", "r") as f:
        assert list(f) == ["b"] and (f["b"][...] == b).all()
    tiles = tmp_path / "two.h5.tiles"
    assert sorted(p.name for p in tiles.iterdir()) == ["b"]
    # mode "a" keeps the other dataset and its folder
    h5tile.to_file(a, tmp_path / "two.h5", "/g/a", mode="a", layout="virtual").wait()
    with h5py.File(tmp_path / "two.h5", "r") as f:
        assert (f["g/a"][...] == a).all() and (f["b"][...] == b).all()
    assert sorted(p.name for p in tiles.iterdir()) == ["b", "g"]


def test_copy_snapshots_the_array_at_the_call(tmp_path):
    # to_file(copy=True) writes the array as it was when called, whatever the caller does to it
    # after (here: overwrites and frees it before the write may even have started). A large
    # array, so that the write is still running when the caller changes it.
    a = np.arange(8 << 20, dtype=np.float32)
    expected = a.copy()
    handle = h5tile.to_file(a, tmp_path / "c.h5", "/x", copy=True, ranks=2)
    a[:] = -1
    del a
    handle.wait()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert np.array_equal(f["x"][()], expected)
    with pytest.raises(TypeError, match="copy"):
        h5tile.to_file(np.arange(3), tmp_path / "d.h5", "/x", copy="yes")
