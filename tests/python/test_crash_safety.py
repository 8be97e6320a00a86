"""Real processes killed (kill -9) in the middle of a write, and two writers at once: the
previous file stays readable and unchanged, the next write cleans up, never a mix."""
import os
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest

from conftest import random_array


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
