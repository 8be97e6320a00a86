"""What a failure leaves of a write in place through h5tile.File (issue 41, item 2), with the
harnesses of to_file's tests: a filesystem that fills up (a small tmpfs or ext4, conftest's
mount_small) and kill -9 of the writing process. docs/RELIABILITY.md says what is guaranteed:
a full disk raises ENOSPC and leaves each chunk wholly old or wholly new, the File still closes
and the file reads; a write call that returned is in the file, so a process killed after it
leaves the file as its last call left it (without flush() or close())."""
import errno
import os
import signal
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, mount_small

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

ROWS, COLS, CHUNK_ROWS = 2048, 1024, 64


def fill_up(folder, leave):
    """A file taking all but `leave` bytes of the filesystem of `folder`."""
    st = os.statvfs(folder)
    with open(folder / "filler", "wb") as f:
        f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))


def chunk_states(path, new):
    """Each chunk of /x as h5py reads it: "old" (zeros), "new" (`new`'s rows) or "mixed"."""
    with h5py.File(path, "r") as f:
        a = f["x"][...]
    states = []
    for i in range(ROWS // CHUNK_ROWS):
        part = slice(i * CHUNK_ROWS, (i + 1) * CHUNK_ROWS)
        states.append("old" if not a[part].any() else "new" if np.array_equal(a[part], new[part]) else "mixed")
    return states


@pytest.mark.parametrize("fs", ["tmpfs", "ext4-loop"])
@pytest.mark.parametrize("how", ["box", "rows"])
def test_a_full_disk_raises_and_leaves_each_chunk_whole(tmp_path, fs, how):
    small = tmp_path / "small"
    mount_small(fs, small, tmp_path, size="24m")
    try:
        path = small / "f.h5"
        with h5py.File(path, "w") as f:  # gzip chunks of zeros (tiny) or none yet
            if how == "box":
                f.create_dataset("x", data=np.zeros((ROWS, COLS), "f4"), chunks=(CHUNK_ROWS, COLS), compression="gzip")
            else:
                f.create_dataset("x", (ROWS, COLS), "f4", chunks=(CHUNK_ROWS, COLS), compression="gzip")
        fill_up(small, 3 << 20)  # room for about 12 of the 32 chunks of random floats
        new = np.random.default_rng(1).random((ROWS, COLS)).astype("f4")
        f = h5tile.File(path, "a")
        written = 0
        with pytest.raises(OSError) as caught:
            if how == "box":
                f["x"][...] = new  # chunks encoded and written by the workers
            else:
                for i in range(ROWS):  # a row at a time: through HDF5's chunk cache, flushed each call
                    f["x"][i] = new[i]
                    written = i + 1
        assert caught.value.errno == errno.ENOSPC and "No space left on device" in str(caught.value)
        f.close()  # the metadata still fits: the File closes
        (small / "filler").unlink()
        if how == "box":
            states = chunk_states(path, new)
            assert "mixed" not in states and "new" in states and "old" in states, states
        else:  # the rows of every call that returned, and nothing of the failed one
            with h5py.File(path, "r") as f:
                a = f["x"][...]
            assert 0 < written < ROWS and np.array_equal(a[:written], new[:written]) and not a[written:].any()
        with h5tile.File(path, "a") as f:  # with the space back, the same write goes through
            f["x"][...] = new
        assert set(chunk_states(path, new)) == {"new"}
    finally:
        subprocess.run(["umount", str(small)], check=True)


WRITER = r"""
import sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import h5tile
path, calls, kind = sys.argv[2], int(sys.argv[3]), sys.argv[4]
noise = np.random.default_rng(0).random((512, 256)).astype("f4") * 1e-3
f = h5tile.File(path, "a")
for g in range(1, calls + 1):
    if kind == "box":  # alternately compressible and not: the chunks change size and move
        f["x"][...] = np.full((512, 256), g, "f4") + (noise if g % 2 else 0)
    else:  # a logger's append: one row more, then the row
        f["log"].resize(g, axis=0)
        f["log"][g - 1] = np.arange(16) + g
print("returned", flush=True)
time.sleep(120)  # killed here: no flush, no close
"""


def expected_box(g):
    noise = np.random.default_rng(0).random((512, 256)).astype("f4") * 1e-3
    return (np.full((512, 256), g, "f4") + (noise if g % 2 else 0)).astype("f4")


@pytest.mark.parametrize("kind", ["box", "append"])
@pytest.mark.parametrize("calls", [1, 2, 5])
def test_kill_9_after_a_write_returned_leaves_the_file_as_it_left_it(tmp_path, kind, calls):
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.zeros((512, 256), "f4"), chunks=(32, 256), compression="gzip")
        f.create_dataset("log", (0, 16), "f8", maxshape=(None, 16), chunks=(4, 16), compression="gzip")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(BUILD / "python"), str(path), str(calls), kind],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "returned"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    with h5py.File(path, "r") as f:
        if kind == "box":
            assert f["x"][...].tobytes() == expected_box(calls).tobytes()
        else:
            expected = np.arange(16)[None, :] + np.arange(1, calls + 1)[:, None]
            assert f["log"].shape == (calls, 16) and np.array_equal(f["log"][...], expected)
    with h5tile.File(path, "r") as f:  # and h5tile reads the same
        assert f["x"][...].tobytes() == (expected_box(calls).tobytes() if kind == "box"
                                         else np.zeros((512, 256), "f4").tobytes())
