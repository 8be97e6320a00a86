"""Issue 31, items 7 and 9: files that HDF5 opens by path for a read (a tile, an external link's
target, an external-storage file) that are FIFOs end every command with an error that says so,
never a hang; an external link out of the file's folder is refused before its target is opened
(strace shows no open(2) of it), while links inside the folder read as h5py reads them."""
import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

from conftest import BUILD

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

H5TILE = BUILD / "cli" / "h5tile"
PYTHON_PATH = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
LIMIT = 60  # seconds: every command must have ended by itself well before this


def run(argv, env=None):
    """Runs `argv` in a session of its own; a run past LIMIT kills the whole session (a probe's
    child too) and fails the test, rather than hanging it."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or PYTHON_PATH, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{argv} did not end within {LIMIT} s (hung):\n{out}\n{err}")
    return proc.returncode, out + err


def python(code):
    return run([sys.executable, "-c", textwrap.dedent(code)])


def assert_nobody_waits_on(fifo):
    """No process holds the FIFO open for reading (nor waits in open(2) for a writer): opening it
    for writing without blocking fails with ENXIO."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        assert e.errno == errno.ENXIO, e
        return
    os.close(fd)  # let the reader go
    pytest.fail(f"a process was left reading, or waiting to read, the FIFO {fifo}")


def tile_fifo(folder):
    out = folder / "v.h5"
    h5tile.to_file(np.arange(600, dtype=np.float64).reshape(30, 20), out, "/data", ranks=3, layout="virtual").wait()
    tile = sorted((folder / "v.h5.tiles").rglob("*.h5"))[1]
    tile.unlink()
    os.mkfifo(tile)
    return out, tile


def link_fifo(folder):
    out = folder / "l.h5"
    with h5py.File(out, "w") as f:
        f["data"] = h5py.ExternalLink("target.h5", "/data")
    os.mkfifo(folder / "target.h5")
    return out, folder / "target.h5"


def storage_fifo(folder):
    out = folder / "e.h5"
    with h5py.File(out, "w") as f:
        # HDF5 1.10 resolves a relative name against the working folder: named in full.
        f.create_dataset("data", shape=(30, 20), dtype="f8", external=[(str(folder / "ext.bin"), 0, 30 * 20 * 8)])
    os.mkfifo(folder / "ext.bin")
    return out, folder / "ext.bin"


@pytest.mark.parametrize("make", [tile_fifo, link_fifo, storage_fifo], ids=["tile", "external-link", "external-storage"])
def test_a_fifo_that_hdf5_would_open_ends_every_command_with_an_error(tmp_path, make):
    folder = tmp_path / "d"
    folder.mkdir()
    out, fifo = make(folder)
    for env in ({}, {"H5TILE_EARLY_READS": "0", "H5TILE_PROBE": "1"}):
        code, said = run([sys.executable, "-c", textwrap.dedent(f"""
            import h5tile
            try:
                h5tile.from_file("{out}", "/data")
                print("read it")
            except h5tile.Error as e:
                print("raised", type(e).__name__, e)
            try:
                h5tile.describe("{out}", "/data")  # metadata only: may well succeed
                print("described")
            except h5tile.Error as e:
                print("describe raised", type(e).__name__, e)
            """)], env=dict(PYTHON_PATH, **env))
        assert code == 0 and "raised" in said and fifo.name in said and "FIFO" in said, (env, said)
    code, said = run([str(H5TILE), "info", str(out)])
    assert code in (0, 1), said  # it ended by itself; what it lists is info's business
    for probe in ([], ["--no-probe"]):
        code, said = run([str(H5TILE), "verify", f"{out}:/data", "--read", *probe])
        assert code == 1 and "FIFO" in said and fifo.name in said, (probe, said)
    code, said = run([str(H5TILE), "consolidate", f"{out}:/data", str(tmp_path / "c.h5")])
    assert code == 1 and "FIFO" in said and fifo.name in said, said
    assert not (tmp_path / "c.h5").exists()
    code, said = run([str(H5TILE), "split", f"{out}:/data", str(tmp_path / "s.h5")])
    assert code == 1 and "FIFO" in said and fifo.name in said, said
    assert not (tmp_path / "s.h5").exists()
    assert_nobody_waits_on(fifo)


def strace_works():
    if shutil.which("strace") is None:
        return False
    return subprocess.run(["strace", "-qq", "-o", os.devnull, "true"], capture_output=True).returncode == 0


def opened_files(argv, log, env=None):
    """Runs `argv` under strace; its return code, output, and every path it (or a child) opened."""
    code, said = run(["strace", "-f", "-qq", "-e", "trace=open,openat,openat2,creat", "-o", str(log), *argv], env=env)
    return code, said, log.read_text()


@pytest.fixture
def outside_link(tmp_path):
    """A file in folder d/ whose datasets lead out of d/ through external links, in the ways a
    path can: a dataset link, a group link on the way, a soft link that goes through one, a
    relative name with '..', and one inside d/ that is fine."""
    folder = tmp_path / "d"
    folder.mkdir()
    data = np.arange(24, dtype=np.int32).reshape(4, 6)
    with h5py.File(tmp_path / "outside.h5", "w") as f:
        f["data"] = data
    with h5py.File(folder / "inner.h5", "w") as f:
        f["data"] = data * 2
    with h5py.File(folder / "m.h5", "w") as f:
        f["abs"] = h5py.ExternalLink(str(tmp_path / "outside.h5"), "/data")
        f["rel"] = h5py.ExternalLink("../outside.h5", "/data")
        f["grp"] = h5py.ExternalLink(str(tmp_path / "outside.h5"), "/")
        f["soft"] = h5py.SoftLink("/grp/data")
        f["inner"] = h5py.ExternalLink("inner.h5", "/data")
    return folder / "m.h5", tmp_path / "outside.h5"


@pytest.mark.parametrize("name", ["/abs", "/rel", "/grp/data", "/soft"])
def test_an_external_link_out_of_the_folder_is_refused_before_its_target_is_opened(tmp_path, outside_link, name):
    if not strace_works():
        pytest.skip("strace is missing or cannot trace here (no ptrace): scripts/install_deps.sh installs it")
    main, outside = outside_link
    for probe in ("0", "1"):
        code, said, log = opened_files([sys.executable, "-c", textwrap.dedent(f"""
            import h5tile
            try:
                h5tile.from_file("{main}", "{name}")
                print("read it")
            except h5tile.VirtualSourceError as e:
                print("raised", e)
            """)], tmp_path / "py.log", env=dict(PYTHON_PATH, H5TILE_PROBE=probe))
        assert code == 0 and "raised" in said and "outside the folder" in said, said
        assert "outside.h5" not in log, [line for line in log.splitlines() if "outside.h5" in line]
    code, said, log = opened_files([str(H5TILE), "verify", f"{main}:{name}", "--read"], tmp_path / "cli.log")
    assert code == 1 and "outside the folder" in said, said
    assert "outside.h5" not in log, [line for line in log.splitlines() if "outside.h5" in line]
    # Allowed, it reads what h5py reads.
    with h5py.File(main, "r") as f:
        expected = f[name][...]
    assert np.array_equal(h5tile.from_file(main, name, allow_external_sources=True), expected)


def test_an_external_link_inside_the_folder_reads_as_h5py_reads_it(outside_link):
    main, _ = outside_link
    with h5py.File(main, "r") as f:
        expected = f["inner"][...]
    got = h5tile.from_file(main, "/inner")
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    assert tuple(h5tile.describe(main, "/inner")["shape"]) == (4, 6)
    code, said = run([str(H5TILE), "verify", f"{main}:/inner", "--read"])
    assert code == 0 and "ok" in said, said


def test_hdf5_ext_prefix_is_searched_as_hdf5_searches_it(tmp_path):
    """A relative target found through HDF5_EXT_PREFIX first: inside the folder it is read, the
    same name outside it is refused (the file beside is not what HDF5 would open)."""
    folder = tmp_path / "d"
    (folder / "sub").mkdir(parents=True)
    with h5py.File(folder / "m.h5", "w") as f:
        f["x"] = h5py.ExternalLink("t.h5", "/data")
    with h5py.File(folder / "t.h5", "w") as f:
        f["data"] = np.arange(5)
    with h5py.File(folder / "sub" / "t.h5", "w") as f:
        f["data"] = np.arange(7)
    with h5py.File(tmp_path / "t.h5", "w") as f:
        f["data"] = np.arange(9)
    code, said = python(f"""
        import h5py, h5tile
        with h5py.File("{folder / 'm.h5'}", "r") as f:
            expected = f["x"][...].tolist()
        print("h5py", expected, "h5tile", h5tile.from_file("{folder / 'm.h5'}", "/x").tolist())
        """)
    assert code == 0 and "h5py [0, 1, 2, 3, 4] h5tile [0, 1, 2, 3, 4]" in said, said
    code, said = run([sys.executable, "-c", textwrap.dedent(f"""
        import h5py, h5tile
        with h5py.File("{folder / 'm.h5'}", "r") as f:
            expected = f["x"][...].tolist()
        print("h5py", expected, "h5tile", h5tile.from_file("{folder / 'm.h5'}", "/x").tolist())
        """)], env=dict(PYTHON_PATH, HDF5_EXT_PREFIX=str(folder / "sub")))
    assert code == 0 and "h5py [0, 1, 2, 3, 4, 5, 6] h5tile [0, 1, 2, 3, 4, 5, 6]" in said, said
    code, said = run([sys.executable, "-c", textwrap.dedent(f"""
        import h5tile
        try:
            h5tile.from_file("{folder / 'm.h5'}", "/x")
        except h5tile.VirtualSourceError as e:
            print("raised", e)
        """)], env=dict(PYTHON_PATH, HDF5_EXT_PREFIX=f"/nonexistent:{tmp_path}"))
    assert code == 0 and "raised" in said and "outside the folder" in said, said


@pytest.mark.parametrize("mapping", ["box", "strided"])  # read by h5tile / by HDF5 itself
@pytest.mark.parametrize("where", ["beside", "vds_prefix"])
@pytest.mark.parametrize("reader", ["from_file", "read_box", "batched", "File", "dask"])
def test_a_fifo_source_of_a_virtual_dataset_made_by_h5py_ends_every_read(tmp_path, mapping, where, reader):
    # Issue 39, item 10: a FIFO present before the read, found beside the file or through
    # HDF5_VDS_PREFIX, in a mapping h5tile reads or one HDF5 reads: every door ends with an error.
    folder = tmp_path / "d"
    folder.mkdir()
    prefix = tmp_path / "p"
    prefix.mkdir()
    for i in range(2):
        with h5py.File(folder / f"s{i}.h5", "w") as f:
            f["d"] = (np.arange(10) + i).reshape(1, 10)
    layout = h5py.VirtualLayout(shape=(2, 10), dtype="i8")
    for i in range(2):
        src = h5py.VirtualSource(f"s{i}.h5", "d", shape=(1, 10))
        if mapping == "strided":
            layout[i:i + 1, ::2] = src[:, ::2]
        else:
            layout[i:i + 1] = src
    with h5py.File(folder / "m.h5", "w", libver=("earliest", "v110")) as f:
        f.create_virtual_dataset("v", layout, fillvalue=-1)
    (folder / "s1.h5").unlink()
    fifo = (folder if where == "beside" else prefix) / "s1.h5"
    os.mkfifo(fifo)
    read = {"from_file": "h5tile.from_file(m, '/v', allow_external_sources=True)",
            "read_box": "h5tile.read_box(m, '/v', [1, 0], [1, 4], allow_external_sources=True)",
            "batched": "list(h5tile.from_file_batched(m, '/v', [1, 10], allow_external_sources=True))",
            "File": "h5tile.File(m)['v'][...]",
            "dask": "import h5tile.dask; h5tile.dask.from_file(m, '/v', allow_external_sources=True).compute()"}[reader]
    env = dict(PYTHON_PATH, HDF5_VDS_PREFIX=str(prefix)) if where == "vds_prefix" else PYTHON_PATH
    code, said = run([sys.executable, "-c", textwrap.dedent(f"""
        import h5tile
        m = {str(folder / 'm.h5')!r}
        try:
            {read}
            print("read it")
        except Exception as e:
            print("raised", type(e).__name__, e)
        """)], env=env)
    assert code == 0 and "raised" in said, said
    assert "read it" not in said
    assert_nobody_waits_on(fifo)
