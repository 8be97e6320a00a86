"""Issue 16, round 2: what a hostile or careless user does must give a clear error, never a
crash, a hang, or a silent loss: a write that fills the disk (no crash at exit), thread counts
that cannot be started, FIFOs where files should be, append mode over a group, HDF5 errors
without an errno or with the wrong type, bad Python arguments, and progress callables that raise."""
import errno
import os
import pathlib
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

from conftest import BUILD, mount_small, random_array

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"
PYTHON_PATH = dict(os.environ, PYTHONPATH=str(BUILD / "python"))


def python(code, timeout=120, env=None, **kwargs):
    """Runs `code` in a new Python process that imports h5tile (so that a crash at exit shows)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env or PYTHON_PATH, **kwargs)


# Item 5: a chunked write that runs out of space fails with an error, and the process then exits
# normally (it segfaulted at exit inside HDF5's H5F__close_cb: a handle left open or closed twice).
def test_a_chunked_write_that_fills_the_disk_is_an_error_and_the_process_exits_cleanly(tmp_path):
    small = tmp_path / "small"
    mount_small("tmpfs", small, tmp_path, size="8m")
    try:
        done = python(f"""
            import errno, numpy as np, h5tile
            big = np.ones((4096, 1024), np.float32)  # 16 MiB in 262144 chunks: the chunk index alone overflows the filesystem
            try:
                h5tile.to_file(big, "{small}/c.h5", "/data", layout="chunked", chunks=(1, 16), ranks=3).wait()
            except h5tile.Error as e:
                print("raised", type(e).__name__, getattr(e, "errno", None) == errno.ENOSPC)
            """)
        assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
        assert "raised IoError True" in done.stdout, done.stdout + done.stderr
        assert sorted(p.name for p in small.iterdir() if not p.name.startswith(".")) == []
    finally:
        subprocess.run(["umount", str(small)], check=True)


def test_consolidate_into_chunks_on_a_full_disk_exits_1_not_139(tmp_path):
    a = random_array("float32", (4096, 1024), seed=5)  # 16 MiB
    h5tile.to_file(a, tmp_path / "v.h5", "/data", ranks=4).wait()
    small = tmp_path / "small"
    mount_small("tmpfs", small, tmp_path, size="8m")
    try:
        done = subprocess.run([str(H5TILE), "consolidate", f"{tmp_path / 'v.h5'}:/data", str(small / "c.h5"),
                               "--layout", "chunked", "--chunk", "16", "64"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
        assert "No space left on device" in done.stderr
    finally:
        subprocess.run(["umount", str(small)], check=True)


# Item 6: thread counts.
@pytest.mark.parametrize("value", ["100000", "4294967296"])
def test_a_thread_count_past_the_bound_is_an_error_naming_the_variable(tmp_path, value):
    a = np.arange(100, dtype=np.int32)
    h5tile.to_file(a, tmp_path / "f.h5", "/data", ranks=2).wait()
    env = dict(PYTHON_PATH, H5TILE_THREADS=value)
    done = python(f"""
        import h5tile
        try:
            h5tile.from_file("{tmp_path}/f.h5", "/data")
        except h5tile.InvalidArgumentError as e:
            print("raised", e)
        """, env=env)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert "raised" in done.stdout and "H5TILE_THREADS" in done.stdout and "4096" in done.stdout
    cli = subprocess.run([str(H5TILE), "info", str(tmp_path / "f.h5")], capture_output=True, text=True, timeout=60,
                         env=env)
    assert cli.returncode in (1, 2) and "H5TILE_THREADS" in cli.stderr and "4096" in cli.stderr, cli


def test_threads_that_cannot_be_started_are_an_error_not_an_abort(tmp_path):
    a = np.arange(4096, dtype=np.int32).reshape(64, 64)
    h5tile.to_file(a, tmp_path / "f.h5", "/data", layout="contiguous", ranks=2).wait()
    # Under a 1.5 GiB address-space limit, 2000 threads' stacks (8 MiB each) cannot be mapped.
    done = python(f"""
        import resource, numpy as np, h5tile
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
        a = np.arange(4096 * 64, dtype=np.int32).reshape(4096, 64)
        for what, call in [("write", lambda: h5tile.to_file(a, "{tmp_path}/g.h5", "/data", ranks=2000).wait()),
                           ("read", lambda: h5tile.from_file("{tmp_path}/f.h5", "/data", threads=2000))]:
            try:
                call()
                print(what, "ran")
            except h5tile.OperationError as e:
                print(what, "raised", e)
        """)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert "write raised" in done.stdout and "cannot start" in done.stdout
    assert "read raised" in done.stdout or "read ran" in done.stdout  # the file is small: maybe few threads


# Item 7: FIFOs.
def test_a_fifo_in_place_of_the_file_is_refused_at_once(tmp_path):
    fifo = tmp_path / "f.h5"
    os.mkfifo(fifo)
    done = python(f"""
        import h5tile
        for call in [lambda: h5tile.from_file("{fifo}", "/data"), lambda: h5tile.describe("{fifo}", "/data")]:
            try:
                call()
            except h5tile.NotHdf5FileError as e:
                print("raised", e)
        """, timeout=60)
    assert done.stdout.count("raised") == 2 and "FIFO" in done.stdout, done.stdout + done.stderr
    for sub in (["info", str(fifo)], ["verify", f"{fifo}:/data"]):
        cli = subprocess.run([str(H5TILE), *sub], capture_output=True, text=True, timeout=60)
        assert cli.returncode != 0 and "FIFO" in cli.stdout + cli.stderr, (sub, cli)


def test_a_fifo_in_place_of_a_tile_is_refused_at_once(tmp_path):
    out = tmp_path / "v.h5"
    h5tile.to_file(np.arange(600, dtype=np.float64).reshape(30, 20), out, "/data", ranks=3, layout="virtual").wait()
    tile = sorted((tmp_path / "v.h5.tiles").rglob("*.h5"))[1]
    tile.unlink()
    os.mkfifo(tile)
    for early in ("1", "0"):
        done = python(f"""
            import h5tile
            try:
                h5tile.from_file("{out}", "/data")
            except h5tile.Error as e:
                print("raised", type(e).__name__, e)
            """, timeout=60, env=dict(PYTHON_PATH, H5TILE_EARLY_READS=early))
        assert "raised" in done.stdout and tile.name in done.stdout, done.stdout + done.stderr
    for sub in (["verify", f"{out}:/data"], ["info", str(out)]):
        cli = subprocess.run([str(H5TILE), *sub], capture_output=True, text=True, timeout=60)
        assert sub[0] == "info" or cli.returncode == 1, (sub, cli)


# Item 12: append mode over a group, and a path through a dataset.
def test_append_over_a_group_is_refused_naming_it(tmp_path):
    out = tmp_path / "f.h5"
    h5tile.to_file(np.arange(10), out, "/grp/a", ranks=2).wait()
    h5tile.to_file(np.arange(20), out, "/grp/b", ranks=2, mode="a").wait()
    with pytest.raises(h5tile.NotADatasetError, match="'/grp' is a group holding a, b"):
        h5tile.to_file(np.arange(5), out, "/grp", ranks=2, mode="a").wait()
    with h5py.File(out, "r") as f:
        assert list(f["grp"]) == ["a", "b"] and f["grp/a"][...].tolist() == list(range(10))
    for layout in ("contiguous", "chunked"):
        with pytest.raises(h5tile.NotADatasetError, match="'/grp' is a group"):
            h5tile.to_file(np.arange(5), out, "/grp", layout=layout, mode="a").wait()
    assert h5tile.from_file(out, "/grp/b").tolist() == list(range(20))


def test_a_dataset_cannot_be_a_group_on_the_way(tmp_path):
    out = tmp_path / "f.h5"
    h5tile.to_file(np.arange(10), out, "/data", ranks=2).wait()
    for layout in ("virtual", "contiguous", "chunked"):
        with pytest.raises(h5tile.NotADatasetError, match="'/data' is a dataset"):
            h5tile.to_file(np.arange(5), out, "/data/x", layout=layout, mode="a").wait()
    assert h5tile.from_file(out, "/data").tolist() == list(range(10))


# Item 14: errno and types from HDF5's own failures.
def test_a_disk_already_full_when_hdf5_creates_the_file_is_enospc(tmp_path):
    small = tmp_path / "small"
    mount_small("tmpfs", small, tmp_path, size="1m")
    try:
        fd = os.open(small / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\1" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC
        finally:
            os.close(fd)
        for layout in ("contiguous", "chunked"):
            with pytest.raises(h5tile.IoError) as caught:
                h5tile.to_file(np.arange(10.0), small / "f.h5", "/data", layout=layout, ranks=1).wait()
            assert caught.value.errno == errno.ENOSPC and "f.h5" in str(caught.value), str(caught.value)
    finally:
        subprocess.run(["umount", str(small)], check=True)


def test_a_file_locked_by_another_program_is_an_io_error_saying_so(tmp_path):
    out = tmp_path / "f.h5"
    h5tile.to_file(np.arange(10), out, "/data", layout="contiguous").wait()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time, h5py
        f = h5py.File("{out}", "a")
        print("open", flush=True)
        sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(h5tile.IoError) as caught:
            h5tile.from_file(out, "/data")
        assert caught.value.errno in (errno.EAGAIN, errno.EWOULDBLOCK) and "locked" in str(caught.value)
    finally:
        holder.communicate("", timeout=60)


def test_a_dataset_that_needs_a_newer_hdf5_says_so(tmp_path):
    # h5py's HDF5 (2.0) writes complex numbers as its own complex datatype with the 1.12 format
    # bounds; HDF5 1.10 cannot decode that datatype message.
    out = tmp_path / "new.h5"
    with h5py.File(out, "w", libver=("v112", "latest")) as f:
        f["c"] = np.arange(4).astype(np.complex64)
    from_h5py = h5py.File(out, "r")["c"][...]
    try:
        h5tile.from_file(out, "/c")
    except h5tile.NotHdf5FileError as e:
        assert "newer HDF5" in str(e) and "'/c'" in str(e), str(e)
    else:
        pytest.skip(f"this build's HDF5 reads the file ({from_h5py})")


# Item 15: bad Python arguments name the argument, as h5tile errors.
def test_bad_python_arguments_are_h5tile_errors_naming_the_argument(tmp_path):
    out = tmp_path / "f.h5"
    h5tile.to_file(np.arange(10), out, "/data", ranks=2).wait()
    with pytest.raises(h5tile.InvalidArgumentError, match="ranks"):
        h5tile.to_file(np.arange(10), out, "/data", ranks=-1)
    with pytest.raises(h5tile.InvalidArgumentError, match="threads"):
        h5tile.from_file(out, "/data", threads=-2)
    with pytest.raises(h5tile.InvalidArgumentError, match="offset"):
        h5tile.read_box(out, "/data", [-1], [2])
    with pytest.raises(h5tile.InvalidArgumentError, match="shape"):
        h5tile.read_box(out, "/data", [0], [-2])
    with pytest.raises(h5tile.InvalidArgumentError, match="threads"):
        h5tile.from_file_batched(out, "/data", [4], threads=-1)
    with pytest.raises(h5tile.InvalidArgumentError, match="threads"):
        h5tile.consolidate(out, "/data", tmp_path / "c.h5", threads=-1)
    with pytest.raises(h5tile.UnsupportedTypeError, match="longdouble|float128|float96"):
        h5tile.to_file(np.arange(4, dtype=np.longdouble), out, "/ld")
    with pytest.raises(h5tile.UnsupportedTypeError, match="complex"):
        h5tile.to_file(np.arange(4, dtype=np.clongdouble), out, "/cld")


# Item 16: an exception raised by a progress callable reaches the caller as itself.
class Boom(Exception):
    pass


def explode(done, total):
    raise Boom(f"at {done} of {total}")


def test_an_exception_in_a_progress_callable_is_raised_as_itself(tmp_path):
    out = tmp_path / "p.h5"
    a = np.arange(100000, dtype=np.float64)
    h5tile.to_file(a, out, "/p", ranks=2).wait()
    with pytest.raises(Boom, match="at "):
        h5tile.to_file(a * 2, out, "/p", ranks=2, progress=explode).wait()
    assert h5tile.from_file(out, "/p").tobytes() == a.tobytes()  # the previous file stays
    with pytest.raises(Boom):
        h5tile.from_file(out, "/p", progress=explode)
    with pytest.raises(Boom):
        h5tile.from_file(out, "/p", progress=explode, out=np.empty_like(a))
    with pytest.raises(Boom):
        h5tile.consolidate(out, "/p", tmp_path / "c.h5", progress=explode)
    assert not (tmp_path / "c.h5").exists()
    # A false answer still cancels with CancelledError.
    with pytest.raises(h5tile.CancelledError):
        h5tile.from_file(out, "/p", progress=lambda d, t: False)


# Item 10: the outside-the-folder rule holds for HDF5 external storage and external links too.
def test_external_storage_outside_the_folder_is_refused_unless_allowed(tmp_path):
    secret = pathlib.Path("/etc/passwd").read_bytes()[:64]
    out = tmp_path / "ext.h5"
    with h5py.File(out, "w") as f:
        f.create_dataset("data", shape=(len(secret),), dtype="u1", external=[("/etc/passwd", 0, len(secret))])
    with pytest.raises(h5tile.VirtualSourceError, match="external storage '/etc/passwd'"):
        h5tile.from_file(out, "/data")
    with pytest.raises(h5tile.VirtualSourceError, match="allow_external_sources"):
        h5tile.read_box(out, "/data", [0], [8])
    with pytest.raises(h5tile.VirtualSourceError, match="external storage"):
        h5tile.consolidate(out, "/data", tmp_path / "copy.h5")
    assert not (tmp_path / "copy.h5").exists()
    assert h5tile.from_file(out, "/data", allow_external_sources=True).tobytes() == secret
    # External storage inside the folder (named absolutely: HDF5 1.10 resolves relative names
    # against the working folder) is read as before.
    (tmp_path / "raw.bin").write_bytes(bytes(range(32)))
    with h5py.File(tmp_path / "inside.h5", "w") as f:
        f.create_dataset("data", shape=(32,), dtype="u1", external=[(str(tmp_path / "raw.bin"), 0, 32)])
    assert h5tile.from_file(tmp_path / "inside.h5", "/data").tolist() == list(range(32))


def test_an_external_link_outside_the_folder_is_refused_unless_allowed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    here = tmp_path / "here"
    elsewhere.mkdir()
    here.mkdir()
    a = random_array("float32", (64, 32), seed=7)
    b = random_array("float32", (64, 32), seed=8)
    with h5py.File(elsewhere / "other.h5", "w") as f:
        f["data"] = a
    with h5py.File(here / "good.h5", "w") as f:
        f["data"] = h5py.ExternalLink(str(elsewhere / "other.h5"), "/data")
        f["near"] = h5py.ExternalLink("near.h5", "/data")
    with h5py.File(here / "near.h5", "w") as f:
        f["data"] = b
    with pytest.raises(h5tile.VirtualSourceError, match="external link"):
        h5tile.from_file(here / "good.h5", "/data")
    with pytest.raises(h5tile.VirtualSourceError, match="external link"):
        h5tile.consolidate(here / "good.h5", "/data", here / "copy.h5")
    assert h5tile.from_file(here / "good.h5", "/data", allow_external_sources=True).tobytes() == a.tobytes()
    old = os.getcwd()
    os.chdir(here)  # HDF5 looks for a relative link target beside the linking file or here
    try:
        assert h5tile.from_file(here / "good.h5", "/near").tobytes() == b.tobytes()
    finally:
        os.chdir(old)
