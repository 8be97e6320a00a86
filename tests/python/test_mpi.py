"""h5tile under real MPI (mpirun): N ranks write, M ranks read, failures reach every rank."""
import os
import re
import shutil
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

from conftest import BUILD

TOOL = BUILD / "tests" / "h5tile_mpi_tool"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None or not TOOL.exists(),
                                reason="MPI not installed (mpirun or the MPI test tool missing)")


def mpirun(n, *args, cwd, timeout=120):
    cmd = ["mpirun", "--oversubscribe", "-n", str(n), str(TOOL), *map(str, args)]
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)
    lines = sorted(l for l in proc.stdout.splitlines() if l.startswith("rank "))
    return proc.returncode, lines


def expected(rows, cols):
    i = np.arange(rows * cols, dtype=np.uint64)
    return ((i * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(2**32)).astype(np.uint32).reshape(rows, cols)


@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
@pytest.mark.parametrize("writers,readers", [(1, 2), (2, 4), (4, 1), (3, 2)])
def test_n_ranks_write_m_ranks_read(tmp_path, layout, writers, readers):
    rows, cols = 101, 13  # rows do not divide by the rank counts
    code, lines = mpirun(writers, "write", "out.h5", layout, rows, cols, cwd=tmp_path)
    assert code == 0 and len(lines) == writers and all(": ok" in l for l in lines), lines
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert f["data"].is_virtual == (layout == "virtual")
        assert np.array_equal(f["data"][...], expected(rows, cols))
    code, lines = mpirun(readers, "read", "out.h5", cwd=tmp_path)
    assert code == 0 and len(lines) == readers and all(": ok" in l for l in lines), lines
    covered = sum(int(re.search(r"of (\d+) elements", l).group(1)) for l in lines)
    assert covered == rows * cols  # the ranks' tiles together are the whole array


@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
def test_one_rank_failing_mid_write_fails_every_rank_and_keeps_the_old_file(tmp_path, layout):
    code, _ = mpirun(2, "write", "out.h5", layout, 50, 7, cwd=tmp_path)
    assert code == 0
    code, lines = mpirun(3, "write", "out.h5", layout, 1000, 1000, "--fail-rank", 1, cwd=tmp_path, timeout=60)
    assert code != 0 and len(lines) == 3
    messages = {l.split(": ", 1)[1] for l in lines}
    assert len(messages) == 1 and "File too large" in messages.pop()  # the same error on every rank
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert np.array_equal(f["data"][...], expected(50, 7))
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_a_rank_with_another_path_fails_every_rank_quickly(tmp_path):
    code, lines = mpirun(3, "write", "out.h5", "virtual", 30, 3, "--bad-path-rank", 2, cwd=tmp_path, timeout=60)
    assert code != 0 and len(lines) == 3
    assert all("error InvalidArgument: ranks disagree" in l for l in lines), lines
    assert not (tmp_path / "out.h5").exists() and not (tmp_path / "out.h5.other").exists()


@pytest.mark.parametrize("layout", ["chunked", "virtual"])
@pytest.mark.parametrize("writers,readers", [(1, 2), (3, 2), (4, 1)])
def test_compressed_writes(tmp_path, layout, writers, readers):
    """Each rank compresses its own chunks (gzip + shuffle + fletcher32); one file (chunked: rank 0
    has HDF5 allocate every chunk, each rank writes its own) or one file per tile (virtual)."""
    rows, cols = 101, 13  # 15 chunks of 7 rows, the last one partial
    code, lines = mpirun(writers, "write", "out.h5", layout, rows, cols, "--gzip", 6, "--chunk-rows", 7, cwd=tmp_path)
    assert code == 0 and len(lines) == writers and all(": ok" in l for l in lines), lines
    with h5py.File(tmp_path / "out.h5", "r") as f:
        d = f["data"]
        assert np.array_equal(d[...], expected(rows, cols))
        if layout == "chunked":
            assert (d.chunks, d.compression, d.compression_opts, d.shuffle, d.fletcher32) == ((7, 13), "gzip", 6, True, True)
        else:
            sources = d.virtual_sources()
            assert len(sources) == writers
            with h5py.File(tmp_path / sources[0].file_name, "r") as tile:
                assert tile["tile"].compression == "gzip" and tile["tile"].chunks[0] <= 7
    code, lines = mpirun(readers, "read", "out.h5", cwd=tmp_path)
    assert code == 0 and len(lines) == readers and all(": ok" in l for l in lines), lines


def test_compressed_chunks_across_tiles_fail_every_rank(tmp_path):
    code, lines = mpirun(3, "write", "out.h5", "chunked", 101, 13, "--gzip", 6, "--chunk-rows", 7, "--unaligned",
                         cwd=tmp_path)
    assert code != 0 and len(lines) == 3
    messages = {l.split(": ", 1)[1] for l in lines}
    assert len(messages) == 1, messages  # the same error on every rank
    message = messages.pop()
    assert "InvalidArgument" in message and "chunk boundaries" in message and "[7, 13]" in message, message
    assert not (tmp_path / "out.h5").exists()


def mpirun_python(n, script, *args, cwd, timeout=120):
    """Runs `script` (Python, through mpi4py) on n ranks; returns the exit code and the output."""
    pytest.importorskip("mpi4py")
    (cwd / "job.py").write_text(f"import sys\nsys.path.insert(0, {str(BUILD / 'python')!r})\n" + textwrap.dedent(script))
    cmd = ["mpirun", "--oversubscribe", "-n", str(n), sys.executable, "job.py", *map(str, args)]
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("layout", ["chunked", "contiguous", "virtual"])
@pytest.mark.parametrize("split", [7, 3, 0])
def test_a_rank_with_an_empty_tile_inside_a_chunk(tmp_path, layout, split):
    """Rank 0 writes columns [0, split), rank 1 the rest; at split 7 rank 1's tile is empty and
    starts inside the last chunk (columns 6 and 7 of chunk [6, 6, 2]): it touches no chunk (it
    crashed the chunked writer, which took it for a part of that chunk)."""
    code, out = mpirun_python(2, """
        import numpy as np, h5tile
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        layout, split = sys.argv[1], int(sys.argv[2])
        data = np.arange(6 * 7 * 2, dtype=np.complex64).reshape(6, 7, 2)
        cols = slice(0, split) if comm.Get_rank() == 0 else slice(split, 7)
        h5tile.write_tile(np.ascontiguousarray(data[:, cols]), "out.h5", "/d", comm=comm, offset=(0, cols.start, 0),
                          global_shape=data.shape, layout=layout, chunks=(6, 6, 2) if layout == "chunked" else None)
        print("written", flush=True)
    """, layout, split, cwd=tmp_path)
    assert code == 0 and out.count("written") == 2, out
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert np.array_equal(f["d"][...], np.arange(6 * 7 * 2, dtype=np.complex64).reshape(6, 7, 2))
        if layout == "chunked":
            assert f["d"].chunks == (6, 6, 2)


@pytest.mark.parametrize("call,bad,error", [
    ("write_tile", "array=np.zeros((4, 2), '>f4')", "UnsupportedTypeError"),
    ("write_tile", "offset=(-4, 0)", "InvalidArgumentError"),
    ("write_tile", "layout='chunky'", "InvalidArgumentError"),
    ("write_tile", "mode='q'", "InvalidArgumentError"),
    ("write_tile", "layout='chunked', compression='snappy'", "InvalidArgumentError"),
    ("write_tile", "layout='chunked', chunks=(0, 2)", "InvalidArgumentError"),
    ("to_file", "array=np.array([[None, 1]] * 4)", "UnsupportedTypeError"),
    ("to_file", "array=np.float32(1)", "InvalidArgumentError"),  # 0-d: no first axis to stack along
    ("read_tile", "threads=-1", "InvalidArgumentError"),
])
def test_a_rank_whose_arguments_fail_the_early_checks_fails_every_rank(tmp_path, call, bad, error):
    """Rank 1's arguments fail a check made before the collective (in Python or the bindings):
    every rank raises that error; the others waited for rank 1 for ever."""
    code, out = mpirun_python(3, f"""
        import numpy as np, h5tile
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        rank = comm.Get_rank()
        if {call!r} == "read_tile" and rank == 0:
            h5tile.to_file(np.zeros((6, 2)), "in.h5", "/d").wait()
        comm.Barrier()
        kw = dict(array=np.zeros((4, 2), np.float32), offset=(4 * rank, 0))
        if rank == 1:
            kw.update({bad})
        try:
            if {call!r} == "write_tile":
                h5tile.write_tile(kw.pop("array"), "out.h5", "/d", comm=comm, global_shape=(12, 2), **kw)
            elif {call!r} == "to_file":
                h5tile.to_file(kw.pop("array"), "out.h5", "/d", comm=comm)
            else:
                h5tile.read_tile("in.h5", "/d", comm=comm, threads=kw.get("threads", 0))
            result = "ok"
        except h5tile.Error as e:
            result = f"{{type(e).__name__}}: {{e}}"
        with open(f"rank{{rank}}.txt", "w") as f:  # not stdout, where mpirun may mix the lines
            f.write(f"rank {{rank}}: {{result}}")
    """, cwd=tmp_path, timeout=60)
    lines = [(tmp_path / f"rank{r}.txt").read_text() for r in range(3) if (tmp_path / f"rank{r}.txt").exists()]
    assert code == 0 and len(lines) == 3, out
    assert len({l.split(": ", 1)[1] for l in lines}) == 1, lines  # the same error on every rank
    assert f": {error}: rank 1: " in lines[0], lines
    assert not (tmp_path / "out.h5").exists()


@pytest.mark.parametrize("call", ["to_file", "write_tile"])
@pytest.mark.parametrize("name", ["/a/../../../escaped", "a/../../escaped", "/" + "../" * 40 + "escaped", "/a//b",
                                  "/."])
def test_names_that_leave_the_tile_folder_are_refused_on_every_rank(tmp_path, call, name):
    """to_file(comm=) and write_tile once created tile folders wherever '..' led (one at the root
    of /tmp): every rank raises the same InvalidArgumentError, and nothing is created."""
    (tmp_path / "p" / "q" / "r").mkdir(parents=True)  # escapes land in the test's folder
    before_root = {"/" + n for n in os.listdir("/")}
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    code, out = mpirun_python(2, f"""
        import numpy as np, h5tile
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        rank = comm.Get_rank()
        a = np.full((3, 2), rank, np.int32)
        try:
            if {call!r} == "to_file":
                h5tile.to_file(a, "p/q/r/out.h5", {name!r}, comm=comm)
            else:
                h5tile.write_tile(a, "p/q/r/out.h5", {name!r}, comm=comm, offset=(3 * rank, 0), global_shape=(6, 2))
            result = "written"
        except h5tile.Error as e:
            result = f"{{type(e).__name__}}: {{e}}"
        with open(f"rank{{rank}}.txt", "w") as f:
            f.write(result)
    """, cwd=tmp_path, timeout=60)
    results = [(tmp_path / f"rank{r}.txt").read_text() for r in range(2)]
    assert code == 0, out
    assert results[0] == results[1], results  # the same error on every rank
    assert results[0].startswith("InvalidArgumentError:") and "component" in results[0], results
    for r in range(2):
        (tmp_path / f"rank{r}.txt").unlink()
    (tmp_path / "job.py").unlink()
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before
    assert not os.path.exists("/escaped") or "/escaped" in before_root, "a folder appeared at the root"
