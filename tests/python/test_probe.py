"""Untrusted files (issue 16, item 9): HDF5 1.10.8's own decoders crash or loop forever on some
damaged files. With the probe (``probe=True``, ``settings.set_probe``, ``H5TILE_PROBE``) the
metadata is opened in a child process first, and a crash or a hang there is a ProbeFailedError
naming the file; without it the same file takes the process down. The damaged files are
tests/fuzz/hdf5/ (made by make_damaged.py there)."""
import concurrent.futures
import os
import signal
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import BUILD, ROOT, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

DAMAGED = ROOT / "tests" / "fuzz" / "hdf5"
CRASHES = {"global-heap-size-segv.h5": "SIGSEGV", "selection-rank-64-abort.h5": "SIGABRT"}
HANGS = "global-heap-loop.h5"
H5TILE = BUILD / "cli" / "h5tile"


@pytest.fixture(autouse=True)
def settings_restored():
    probe, timeout, threads = h5tile.settings.probe(), h5tile.settings.probe_timeout(), h5tile.settings.threads()
    yield
    h5tile.settings.set_probe(probe)
    h5tile.settings.set_probe_timeout(timeout)
    h5tile.settings.set_threads(threads)


def in_a_child(code, timeout=60, env=None):
    """Runs `code` (with h5tile imported) in a child Python process; its return code, or None
    where it was still running after `timeout` seconds (then killed)."""
    prelude = f"import sys; sys.path.insert(0, {str(BUILD / 'python')!r}); import h5tile\n"
    try:
        return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=timeout,
                              env=env).returncode
    except subprocess.TimeoutExpired:
        return None


@pytest.fixture()
def hdf5_decoders_fail(hdf5_version):
    """The damaged files are made for HDF5 1.10's decoders; a newer HDF5 may read them safely."""
    if hdf5_version[:2] != (1, 10):
        pytest.skip(f"the damaged files crash HDF5 1.10's decoders; this build uses HDF5 {hdf5_version}")


@pytest.mark.parametrize("name", sorted(CRASHES))
def test_without_the_probe_a_damaged_file_takes_the_process_down(hdf5_decoders_fail, name):
    code = in_a_child(f"h5tile.from_file({str(DAMAGED / name)!r}, '/data', probe=False)")
    assert code == -getattr(signal, CRASHES[name])


def test_without_the_probe_a_damaged_file_hangs_the_process(hdf5_decoders_fail):
    assert in_a_child(f"h5tile.describe({str(DAMAGED / HANGS)!r}, '/data', probe=False)", timeout=5) is None


def every_read(path, tmp_path, probe):
    """Each call that opens `path` for reading, with `probe` as given."""
    out = np.empty((64, 8), np.int32)
    return {
        "from_file": lambda: h5tile.from_file(path, "/data", probe=probe),
        "from_file(out=)": lambda: h5tile.from_file(path, "/data", out=out, probe=probe),
        "read_box": lambda: h5tile.read_box(path, "/data", (0, 0), (2, 2), probe=probe),
        "describe": lambda: h5tile.describe(path, "/data", probe=probe),
        "from_file_batched": lambda: list(h5tile.from_file_batched(path, "/data", (16, 8), probe=probe)),
        "consolidate": lambda: h5tile.consolidate(path, "/data", tmp_path / "one.h5", probe=probe),
    }


@pytest.mark.parametrize("name", sorted(CRASHES))
def test_the_probe_turns_a_crash_of_hdf5_into_an_error_naming_the_file(hdf5_decoders_fail, tmp_path, name):
    path = DAMAGED / name
    good = random_array("int32", (64, 8), seed=1)
    h5tile.to_file(good, tmp_path / "good.h5", "/data", ranks=2).wait()
    for call, read in every_read(path, tmp_path, True).items():
        with pytest.raises(h5tile.ProbeFailedError, match=f"HDF5 crashed with {CRASHES[name]}") as e:
            read()
        assert name in str(e.value) and "'/data'" in str(e.value), call
        assert isinstance(e.value, h5tile.NotHdf5FileError) and isinstance(e.value, RuntimeError)
    assert not (tmp_path / "one.h5").exists()
    # The process is whole: it reads on, and h5py agrees.
    assert same_bytes(h5tile.from_file(tmp_path / "good.h5", "/data", probe=True), good)
    with h5py.File(tmp_path / "good.h5", "r") as f:
        assert same_bytes(f["data"][...], good)


def test_the_setting_probes_every_call_and_an_option_overrides_it(hdf5_decoders_fail, tmp_path):
    path = DAMAGED / "global-heap-size-segv.h5"
    h5tile.settings.set_probe(True)
    for call, read in every_read(path, tmp_path, None).items():
        with pytest.raises(h5tile.ProbeFailedError, match="SIGSEGV"):
            read()
    # The environment variable, in a fresh process; probe=False then opens it unprobed.
    env = dict(os.environ, H5TILE_PROBE="1")
    assert in_a_child(f"""
try:
    h5tile.from_file({str(path)!r}, '/data')
except h5tile.ProbeFailedError:
    sys.exit(7)""", env=env) == 7
    assert in_a_child(f"h5tile.from_file({str(path)!r}, '/data', probe=False)", env=env) == -signal.SIGSEGV


def test_a_probe_that_does_not_finish_in_time_is_killed_and_is_an_error(hdf5_decoders_fail, tmp_path):
    h5tile.settings.set_probe_timeout(1)
    # Children that earlier tests of this process left on purpose (multiprocessing's resource
    # tracker after a Dask cluster, servers of the session) are not the probe's.
    before = set(children_of(os.getpid()))
    for call, read in every_read(DAMAGED / HANGS, tmp_path, True).items():
        with pytest.raises(h5tile.ProbeFailedError, match=r"did not finish opening the metadata .* within 1 s") as e:
            read()
        assert HANGS in str(e.value) and "H5TILE_PROBE_TIMEOUT" in str(e.value), call
    assert set(children_of(os.getpid())) - before == set()  # killed and reaped: no probe process left behind


def children_of(pid):
    children = []
    for status in os.listdir("/proc"):
        try:
            with open(f"/proc/{status}/status") as f:
                if any(line.split() == ["PPid:", str(pid)] for line in f):
                    children.append(int(status))
        except (OSError, ValueError):
            continue
    return children


def test_with_the_probe_good_files_read_as_h5py_reads_them_and_ordinary_errors_keep_their_type(tmp_path):
    a = random_array("float32", (300, 20), seed=2)
    h5tile.to_file(a, tmp_path / "v.h5", "/data", ranks=3).wait()
    with h5py.File(tmp_path / "h.h5", "w") as f:
        f.create_dataset("chunked", data=a, chunks=(30, 20), compression="gzip")
        f["plain"] = a
    with h5py.File(tmp_path / "v.h5", "r") as f:
        assert same_bytes(h5tile.from_file(tmp_path / "v.h5", "/data", probe=True), f["data"][...])
    with h5py.File(tmp_path / "h.h5", "r") as f:
        for name in ("chunked", "plain"):
            assert same_bytes(h5tile.from_file(tmp_path / "h.h5", name, probe=True), f[name][...])
            assert same_bytes(h5tile.read_box(tmp_path / "h.h5", name, (5, 3), (40, 9), probe=True),
                              f[name][5:45, 3:12])
    (tmp_path / "text.h5").write_text("not HDF5")
    with pytest.raises(h5tile.NoSuchFileError):
        h5tile.from_file(tmp_path / "missing.h5", "/data", probe=True)
    with pytest.raises(h5tile.NotHdf5FileError) as e:
        h5tile.from_file(tmp_path / "text.h5", "/data", probe=True)
    assert not isinstance(e.value, h5tile.ProbeFailedError)
    with pytest.raises(h5tile.DatasetNotFoundError):
        h5tile.from_file(tmp_path / "v.h5", "/nothing", probe=True)
    with pytest.raises(h5tile.InvalidArgumentError, match="probe must be"):
        h5tile.from_file(tmp_path / "v.h5", "/data", probe="yes")


def test_a_probe_of_a_virtual_dataset_of_many_tiles_opens_it_on_one_thread(tmp_path):
    # More than 256 tiles: the opening code's loops would run on the pool, whose workers are
    # not in the child (the probe runs them on its one thread).
    a = random_array("int16", (600, 3), seed=5)
    h5tile.to_file(a, tmp_path / "many.h5", "/data", ranks=300, layout="virtual").wait()
    h5tile.settings.set_threads(8)
    assert same_bytes(h5tile.from_file(tmp_path / "many.h5", "/data", probe=True), a)
    assert h5tile.describe(tmp_path / "many.h5", "/data", probe=True)["virtual_sources"] == 300
    done = subprocess.run([str(H5TILE), "verify", f"{tmp_path / 'many.h5'}:/data"], capture_output=True, text=True,
                          env=dict(os.environ, H5TILE_THREADS="8"), timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("ok: /data (virtual: copy many.h5.tiles/data/"), done.stdout


def test_probes_from_many_threads_at_once_keep_the_process_whole(hdf5_decoders_fail, tmp_path):
    good = random_array("uint16", (256, 64), seed=3)
    h5tile.to_file(good, tmp_path / "good.h5", "/data", ranks=4).wait()
    damaged = DAMAGED / "selection-rank-64-abort.h5"

    def read(i):
        if i % 2:
            with pytest.raises(h5tile.ProbeFailedError, match="SIGABRT"):
                h5tile.from_file(damaged, "/data", probe=True)
            return None
        return h5tile.from_file(tmp_path / "good.h5", "/data", probe=True, threads=2)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(read, range(32)))
    assert all(same_bytes(r, good) for r in results[::2])


def test_settings_of_the_probe_are_checked():
    with pytest.raises(h5tile.InvalidArgumentError, match="seconds"):
        h5tile.settings.set_probe_timeout(0)
    with pytest.raises(h5tile.InvalidArgumentError, match="seconds"):
        h5tile.settings.set_probe_timeout(float("nan"))
    h5tile.settings.set_probe_timeout(2.5)
    assert h5tile.settings.probe_timeout() == 2.5
    for bad in ("0", "-1", "ten", "1e9"):
        code = in_a_child("""
try:
    h5tile.settings.probe_timeout()
except h5tile.InvalidArgumentError as e:
    sys.exit(7 if 'H5TILE_PROBE_TIMEOUT' in str(e) else 8)""", env=dict(os.environ, H5TILE_PROBE_TIMEOUT=bad))
        assert code == 7, bad


@pytest.mark.parametrize("name", sorted(CRASHES) + [HANGS])
def test_verify_probes_by_default_and_reports_the_damage_as_a_problem(hdf5_decoders_fail, tmp_path, name):
    env = dict(os.environ, H5TILE_PROBE_TIMEOUT="1")
    done = subprocess.run([str(H5TILE), "verify", str(DAMAGED / name)], capture_output=True, text=True, timeout=60,
                          env=env)
    assert done.returncode == 1
    assert done.stdout.startswith("problem: /data: HDF5 ") and name in done.stdout
    assert ("did not finish" if name == HANGS else f"crashed with {CRASHES[name]}") in done.stdout
    if name != HANGS:
        unprobed = subprocess.run([str(H5TILE), "verify", "--no-probe", str(DAMAGED / name)], capture_output=True,
                                  timeout=60)
        assert unprobed.returncode == -getattr(signal, CRASHES[name])
    good = tmp_path / "good.h5"
    h5tile.to_file(random_array("int8", (50, 7), seed=4), good, "/data", ranks=2).wait()
    assert subprocess.run([str(H5TILE), "verify", f"{good}:/data", "--read"], capture_output=True).returncode == 0
