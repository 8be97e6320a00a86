"""Ctrl-C (issue 30, item 9): WriteHandle.wait(), fence(), from_file and batched iteration stop on
SIGINT within about a second with KeyboardInterrupt, cancelling the work; a cancelled write leaves
the previous file byte for byte as it was, and no temporary file. Each test runs a child Python
that starts a long operation, sends it SIGINT while it runs, and times the KeyboardInterrupt."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import h5py
import numpy as np
import pytest

from conftest import BUILD
from servers.latency_proxy import LatencyProxy

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

# From SIGINT to the KeyboardInterrupt caught in the child: a second, as the issue asks, plus room
# for a loaded CI machine (printed with pytest -s: 0.10-0.25 s on a 2-core machine under load).
LIMIT_S = 1.5

# The child takes SIGINT as a Python started at a terminal does (KeyboardInterrupt), also where
# the tests were started with SIGINT ignored (by `cmd &` from a script, or nohup): a Python that
# starts with SIGINT ignored keeps ignoring it.
PRELUDE = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
import h5tile
def interrupted(started):
    print(f"interrupted after {time.monotonic() - started:.3f}", flush=True)
"""


def interrupt_child(code: str, cwd, *, after: float = 0.5, skip_if_finished: bool = False) -> tuple:
    """Runs `code` (after PRELUDE) in a child Python; once it prints "started", waits `after`
    seconds and sends SIGINT. Returns (seconds from SIGINT to the child's "interrupted" line,
    the completed process's stdout, stderr and exit status). `skip_if_finished`: where the
    operation ended before the SIGINT (an operation long only by its CPU cost, on a fast
    machine), the test is skipped, saying so."""
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    child = subprocess.Popen([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], cwd=cwd, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        assert line.strip() == "started", (line, child.stderr.read() if child.poll() is not None else "")
        time.sleep(after)
        if skip_if_finished and child.poll() is not None:
            pytest.skip("the operation ended before the SIGINT was sent: this machine is too fast for it")
        assert child.poll() is None, "the operation ended before Ctrl-C: it must run longer"
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline()
        caught = time.monotonic() - sent
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if skip_if_finished and line.startswith("finished"):
        pytest.skip("the operation ended before the SIGINT arrived: this machine is too fast for it")
    assert line.startswith("interrupted"), (line, out, err)
    return caught, line + out, err, child.returncode


def assert_ended_by_ctrl_c(caught, out, err, status):
    print(f"KeyboardInterrupt {caught:.3f} s after SIGINT")  # shown with pytest -s
    assert caught < LIMIT_S, f"KeyboardInterrupt came {caught:.2f} s after SIGINT"
    assert status != 0 and "KeyboardInterrupt" in err, (status, err)
    assert "finished" not in out


def previous_file(tmp_path):
    """A file h5py wrote (the one an interrupted write must leave as it was), and its bytes."""
    target = tmp_path / "data.h5"
    with h5py.File(target, "w") as f:
        f["/a"] = np.arange(10, dtype=np.float32)
    return target, target.read_bytes()


# A write that takes seconds whatever the machine's speed: a progress callback that sleeps 0.25 s
# on every call (one call per 1 MiB chunk, one at a time: 32 calls, 8 s) holds it, so it cannot
# end before the SIGINT sent 0.5 s after "started", however fast the compressor runs (CI failed
# once when a write that was long only by its CPU cost ended first).
LONG_WRITE = """
a = np.random.default_rng(0).random(8 << 20, dtype=np.float32)
handle = h5tile.to_file(a, "data.h5", "/a", compression="gzip", level=1, ranks=2,
                        progress=lambda done, total: time.sleep(0.25))
print("started", flush=True)
started = time.monotonic()
"""

# The same without a progress callback (Ctrl-C must not need one), long by its CPU cost alone:
# 192 MiB of random float32 deflated at level 9. Where a machine compresses it before the SIGINT,
# the test is skipped, not passed.
LONG_WRITE_NO_CALLBACK = """
a = np.random.default_rng(0).random(48 << 20, dtype=np.float32)
handle = h5tile.to_file(a, "data.h5", "/a", compression="gzip", level=9, ranks=2)
print("started", flush=True)
started = time.monotonic()
"""


@pytest.mark.parametrize("waiting", ["handle.wait()", "h5tile.fence()", "handle.result()"])
@pytest.mark.parametrize("write", ["progress callback", "no callback"])
def test_ctrl_c_cancels_a_write_and_leaves_the_previous_file(tmp_path, waiting, write):
    target, before = previous_file(tmp_path)
    code = LONG_WRITE if write == "progress callback" else LONG_WRITE_NO_CALLBACK
    caught, out, err, status = interrupt_child(code + f"""
try:
    {waiting}
except KeyboardInterrupt:
    interrupted(started)
    raise
print("finished", flush=True)
""", tmp_path, skip_if_finished=write == "no callback")
    assert_ended_by_ctrl_c(caught, out, err, status)
    assert target.read_bytes() == before  # the cancelled write committed nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.h5"]  # no temporary file, no tiles
    with h5py.File(target, "r") as f:
        np.testing.assert_array_equal(f["/a"][...], np.arange(10, dtype=np.float32))
    assert "failed" not in err  # the cancelled write is not reported again at exit


def test_a_write_not_interrupted_still_completes(tmp_path):
    """The interruptible wait does not change an ordinary write (nor its speed for a small one)."""
    a = np.arange(1000, dtype=np.int32)
    started = time.monotonic()
    h5tile.to_file(a, tmp_path / "s.h5", "/a").wait()
    assert time.monotonic() - started < 5
    with h5py.File(tmp_path / "s.h5", "r") as f:
        np.testing.assert_array_equal(f["/a"][...], a)


SLOW_SETTINGS = """
h5tile.settings.set_remote_block_size(4096)  # not the whole file in the first request
h5tile.settings.set_remote_connections(1)
h5tile.settings.set_task_size(1 << 16)  # Ctrl-C is seen between tasks: one chunk (one request) each
"""


@pytest.fixture
def slow_url(nginx_server):
    """A file on a slow link: loopback nginx behind a proxy that delays every request 0.3 s. With
    SLOW_SETTINGS (one connection, one request per task), reading its 64 chunks takes 20 s."""
    path = nginx_server.root / "slow.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=np.arange(1 << 20, dtype=np.float32), chunks=(1 << 14,))
    with LatencyProxy("127.0.0.1", nginx_server.port, delay=0.3) as proxy:
        yield f"http://127.0.0.1:{proxy.port}/slow.h5"


@pytest.mark.parametrize("call", ["h5tile.from_file(URL, '/a', threads=1)",
                                  "h5tile.read_box(URL, '/a', (0,), (1 << 20,), threads=1)",
                                  "h5tile.from_file(URL, '/a', threads=1, out=np.empty(1 << 20, np.float32))"])
def test_ctrl_c_cancels_a_read(tmp_path, slow_url, call):
    caught, out, err, status = interrupt_child(SLOW_SETTINGS + f"""
URL = {slow_url!r}
print("started", flush=True)
started = time.monotonic()
try:
    {call}
except KeyboardInterrupt:
    interrupted(started)
    raise
print("finished", flush=True)
""", tmp_path)
    assert_ended_by_ctrl_c(caught, out, err, status)


def test_ctrl_c_cancels_a_block_of_a_batched_read(tmp_path, slow_url):
    """One block of the slow file: Ctrl-C ends the block's read, not only the loop between blocks.
    The read stops between two of its tasks (``settings.task_size`` bytes each)."""
    caught, out, err, status = interrupt_child(SLOW_SETTINGS + f"""
blocks = h5tile.from_file_batched({slow_url!r}, "/a", ({1 << 20},), threads=1)
print("started", flush=True)
started = time.monotonic()
try:
    for block, offset in blocks:
        pass
except KeyboardInterrupt:
    interrupted(started)
    raise
print("finished", flush=True)
""", tmp_path)
    assert_ended_by_ctrl_c(caught, out, err, status)
