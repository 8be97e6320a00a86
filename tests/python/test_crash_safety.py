"""Real processes killed (kill -9) in the middle of a write, and two writers at once: the
previous file stays readable and unchanged, the next write cleans up, never a mix."""
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import h5py
import numpy as np
import pytest

from conftest import BUILD, random_array

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


def start_write(tool, array, path, layout):
    raw = path.parent / f"in-{os.getpid()}-{time.monotonic_ns()}.raw"
    raw.write_bytes(array.tobytes())
    shape = ",".join(map(str, array.shape))
    proc = subprocess.Popen([str(tool.path), "write", str(raw), array.dtype.name, shape, str(path), "/data", layout,
                             "4", "overwrite"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, raw


def read(path):
    with h5py.File(path, "r") as f:
        return f["data"][...]


@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
def test_kill_9_during_a_write_keeps_the_previous_file(tool, tmp_path, layout):
    out = tmp_path / "out.h5"
    old = random_array("float32", (64, 1024), seed=1)
    tool.write(old, out, layout=layout, ranks=3)
    new = np.full((8192, 8192), 7, np.float32)  # 256 MiB: long enough to be killed mid-way
    outcomes = []
    for delay in (0.05, 0.15, 0.3, 0.6):
        proc, raw = start_write(tool, new, out, layout)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        raw.unlink()
        got = read(out)  # readable after every kill
        if got.shape == old.shape:
            assert got.tobytes() == old.tobytes()
            outcomes.append("old")
        else:
            assert np.array_equal(got, new)  # the write had completed: the whole new file
            outcomes.append("new")
            tool.write(old, out, layout=layout, ranks=3)
    assert "old" in outcomes  # at least one kill landed inside a write
    # The next write completes and removes what the killed writers left.
    tool.write(old, out, layout=layout, ranks=2)
    assert read(out).tobytes() == old.tobytes()
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    # Left: the new generation, and at most the one it replaced (kept for readers of the old
    # file until the next write); the killed writers' generations are gone.
    generations = list((tmp_path / "out.h5.tiles" / "data").iterdir()) if layout == "virtual" else []
    superseded = [g for g in generations if (g / ".superseded").exists()]
    if layout == "virtual":
        assert len(generations) - len(superseded) == 1 and len(superseded) <= 1
    assert not any((g / ".in-progress").exists() for g in generations)
    tool.write(old, out, layout=layout, ranks=2)  # one more: what the last one replaced goes
    if layout == "virtual":
        assert not any(g.exists() for g in superseded)
    else:
        assert not (tmp_path / "out.h5.tiles").exists()


def test_two_writers_at_once_leave_one_complete_file(tool, tmp_path):
    out = tmp_path / "out.h5"
    a = np.full((2048, 4096), 1, np.int32)
    b = np.full((2048, 4096), 2, np.int32)
    tool.write(np.zeros((2048, 4096), np.int32), out)
    pa, ra = start_write(tool, a, out, "virtual")
    pb, rb = start_write(tool, b, out, "virtual")
    # h5tile readers during the writes see the old or the new array, whole, or (when two commits
    # passed while they read, removing the tiles of the file they had opened) an error naming
    # the missing tile: never a mix.
    while pa.poll() is None or pb.poll() is None:
        got = tool.read(out, tmp=tmp_path)
        if isinstance(got, dict):
            assert got["error"] == "VirtualSourceError", got
        else:
            assert len(set(np.unique(got).tolist())) == 1
    ra.unlink()
    rb.unlink()
    assert pa.returncode == 0 and pb.returncode == 0
    final = read(out)
    assert np.array_equal(final, a) or np.array_equal(final, b)
    assert h5py.File(out, "r")["data"].is_virtual


def generations(out, dataset="data"):
    folder = out.parent / (out.name + ".tiles") / dataset
    return sorted(folder.iterdir()) if folder.exists() else []


def published_then_killed(tool, array, out):
    """The state that a writer killed after its commit's rename leaves (in the fsync of the
    folder, or before it unlinks its generation's in-progress mark): the file is the new one, its
    generation still marked in progress, its writer gone. Made by a real write in another
    process (gone once it returns), whose mark is then put back."""
    tool.write(array, out, ranks=3)
    [generation] = [g for g in generations(out) if not (g / ".superseded").exists()]
    (generation / ".in-progress").touch()
    return generation


def a_dead_writers_unpublished_generation(generation):
    """A copy of `generation` under another name of the same dead writer: a generation that
    was being written when its writer died, before any rename, so that no file maps it."""
    random_part, rest = generation.name.split("-", 1)
    copy = generation.parent / f"{int(random_part, 16) ^ 1:016x}-{rest}"
    shutil.copytree(generation, copy)
    return copy


def test_a_generation_published_by_a_killed_writer_is_kept_for_the_readers_of_its_file(tool, tmp_path):
    out = tmp_path / "out.h5"
    old = random_array("float32", (300, 200), seed=1)
    new = random_array("float32", (300, 200), seed=2)
    published = published_then_killed(tool, old, out)
    unpublished = a_dead_writers_unpublished_generation(published)
    with h5py.File(out, "r") as f:
        dset = f["data"]  # opened before the next write; HDF5 opens the tile files lazily
        h5tile.to_file(new, out, "/data", ranks=2, layout="virtual").wait()
        # The file that the killed writer published is the one the next write replaced: its
        # tiles are kept for its readers, as for any replaced file (before: removed as a dead
        # writer's leftovers, and h5py read zeros).
        assert dset[...].tobytes() == old.tobytes()
    assert h5tile.from_file(out, "/data").tobytes() == new.tobytes()
    assert published.exists() and (published / ".superseded").exists()
    assert not (published / ".in-progress").exists()
    assert not unpublished.exists()  # mapped by no file: a dead writer's leftovers, removed
    h5tile.to_file(old, out, "/data", ranks=2, layout="virtual").wait()  # the next write removes what it superseded
    assert not published.exists() and len(generations(out)) == 2
    assert read(out).tobytes() == old.tobytes()


def test_a_generation_published_by_a_killed_writer_is_replaced_like_any_other(tool, tmp_path):
    out = tmp_path / "out.h5"
    old = random_array("int16", (64, 48), seed=3)
    published = published_then_killed(tool, old, out)
    # keep_previous=False removes the replaced generation at once, whoever wrote it.
    h5tile.to_file(old * 2, out, "/data", ranks=2, keep_previous=False, layout="virtual").wait()
    assert not published.exists() and len(generations(out)) == 1
    # Appending another dataset leaves /data's tiles as they are: the file still maps them.
    published = published_then_killed(tool, old, out)
    h5tile.to_file(old * 3, out, "/other", ranks=2, mode="a", layout="virtual").wait()
    assert np.array_equal(read(out), old) and published.exists()
    assert np.array_equal(h5tile.from_file(out, "/data"), old)
    # Replacing /data in append mode then keeps them as superseded, as an overwrite does.
    with h5py.File(out, "r", locking=False) as f:  # append mode opens the file to copy it
        dset = f["data"]
        h5tile.to_file(old * 4, out, "/data", ranks=2, mode="a", layout="virtual").wait()
        assert np.array_equal(dset[...], old)
    assert (published / ".superseded").exists()
    assert np.array_equal(h5tile.from_file(out, "/data"), old * 4)
    assert np.array_equal(h5tile.from_file(out, "/other"), old * 3)


def strace_works():
    try:
        return subprocess.run(["strace", "-qq", "-o", os.devnull, "true"], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


def write_under_strace(tool, array, out, tmp_path, *strace_args):
    """A write of `array` to `out` by another process run under strace (which kills it, or fails
    a system call, as `strace_args` say); its return code and its output."""
    if not strace_works():
        pytest.skip("strace is missing or cannot trace here (no ptrace)")
    raw = tmp_path / "in.raw"
    raw.write_bytes(array.tobytes())
    shape = ",".join(map(str, array.shape))
    proc = subprocess.run(["strace", "-f", "-qq", "-o", os.devnull, *strace_args, str(tool.path), "write", str(raw),
                           array.dtype.name, shape, str(out), "/data", "virtual", "3", "overwrite"],
                          capture_output=True, text=True, timeout=120)
    raw.unlink()
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("at", ["fsync of the folder", "unlink of the mark"])
def test_a_writer_killed_right_after_its_rename_leaves_a_file_that_the_next_write_keeps_for_readers(
        tool, tmp_path, at):
    out = tmp_path / "out.h5"
    old = random_array("float64", (120, 50), seed=4)
    new = random_array("float64", (120, 50), seed=5)
    tool.write(old, out)
    if at == "fsync of the folder":  # only the fsync of the target's folder, after the rename
        kill = ["-P", str(tmp_path), "-e", "trace=fsync", "-e", "inject=fsync:signal=KILL"]
    else:  # the first unlink of the write: its in-progress mark, after the rename
        kill = ["-e", "trace=unlink,unlinkat", "-e", "inject=unlink,unlinkat:signal=KILL:when=1"]
    code, _ = write_under_strace(tool, new, out, tmp_path, *kill)
    assert code == -signal.SIGKILL
    # Killed after the rename: the file is the new one, its generation still marked in progress.
    assert read(out).tobytes() == new.tobytes()
    [marked] = [g for g in generations(out) if (g / ".in-progress").exists()]
    with h5py.File(out, "r") as f:
        dset = f["data"]
        h5tile.to_file(old, out, "/data", ranks=2).wait()
        assert dset[...].tobytes() == new.tobytes()  # before: zeros (its tiles were removed)
    assert (marked / ".superseded").exists() and not (marked / ".in-progress").exists()
    assert read(out).tobytes() == old.tobytes()


def test_a_failed_fsync_of_the_folder_after_the_rename_leaves_the_new_file_whole(tool, tmp_path):
    out = tmp_path / "out.h5"
    old = random_array("int32", (100, 30), seed=6)
    new = random_array("int32", (100, 30), seed=7)
    tool.write(old, out)
    code, stdout = write_under_strace(tool, new, out, tmp_path, "-P", str(tmp_path), "-e", "trace=fsync", "-e",
                                      "inject=fsync:error=EIO")
    # The write reports the failure (the rename may not survive a power loss), but its file is in
    # place, and whole: before, the failed write removed the tiles that the new file maps.
    assert code == 1
    assert read(out).tobytes() == new.tobytes()
    assert "may not survive a power loss" in stdout and "Input/output error" in stdout
    verify = subprocess.run([str(BUILD / "cli" / "h5tile"), "verify", f"{out}:/data"], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout
    assert not any((g / ".in-progress").exists() for g in generations(out))
    h5tile.to_file(old, out, "/data", ranks=2, layout="virtual").wait()  # later writes clean up as usual
    assert read(out).tobytes() == old.tobytes() and len(generations(out)) == 2


APPEND_FROM_ANOTHER_PROCESS = """
import sys
import threading
sys.path.insert(0, sys.argv[1])
import numpy as np, h5tile
h5tile.to_file(np.arange(10.0), sys.argv[2], "/other", mode="a", layout="virtual").wait()
"""


@pytest.mark.parametrize("layout", ["contiguous", "chunked"])
def test_an_append_over_a_file_that_another_process_appended_to_meanwhile_is_an_error(tmp_path, layout):
    # An append copies the file, adds its dataset to the copy and renames the copy over the
    # file. Another program's append between the copy and the rename was silently dropped
    # (both writes succeeded; the file held only the second one's dataset).
    out = tmp_path / "out.h5"
    h5tile.to_file(np.zeros(3), out, "/first", layout="virtual").wait()
    other = []

    def progress(done, total):
        # The copy is made before the first tile is written (contiguous and chunked layouts).
        if not other:
            other.append(subprocess.run([sys.executable, "-c", APPEND_FROM_ANOTHER_PROCESS, str(BUILD / "python"),
                                         str(out)], capture_output=True, text=True))
        return True

    new = np.ones((256, 1024))
    with pytest.raises(h5tile.OperationError, match="replaced by another write while this write was adding '/new'"):
        h5tile.to_file(new, out, "/new", layout=layout, mode="a", ranks=1, progress=progress).wait()
    assert other[0].returncode == 0, other[0].stderr
    with h5py.File(out, "r") as f:
        assert sorted(f) == ["first", "other"]
        assert np.array_equal(f["other"][...], np.arange(10.0))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.h5", "out.h5.tiles"]  # no temporary file left
    h5tile.to_file(new, out, "/new", layout=layout, mode="a").wait()  # written again, it adds to the new file
    with h5py.File(out, "r") as f:
        assert sorted(f) == ["first", "new", "other"]
        assert np.array_equal(f["new"][...], new)


def test_appends_through_two_spellings_of_one_folder_are_ordered(tmp_path):
    # Writes of one path wait for each other; a symbolic link to the folder named the same file
    # under another key, so two appends ran at once and the later rename dropped the other's
    # dataset, with no error.
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    out = tmp_path / "real" / "out.h5"
    h5tile.to_file(np.zeros(3), out, "/first").wait()
    copied, release = threading.Event(), threading.Event()

    def progress(done, total):
        copied.set()  # contiguous: the file is copied before the first tile is written
        release.wait(30)
        return True

    a = np.ones((1024, 1024))
    first = h5tile.to_file(a, out, "/a", layout="contiguous", mode="a", ranks=1, progress=progress)
    assert copied.wait(30)
    second = h5tile.to_file(np.arange(5.0), tmp_path / "link" / "out.h5", "/b", mode="a")
    deadline = time.monotonic() + 3
    while not second.done() and time.monotonic() < deadline:
        time.sleep(0.05)  # before the fix the second write completed here, beside the first
    release.set()
    first.wait()
    second.wait()
    with h5py.File(out, "r") as f:
        assert sorted(f) == ["a", "b", "first"]
        assert np.array_equal(f["a"][...], a)
        assert np.array_equal(f["b"][...], np.arange(5.0))
