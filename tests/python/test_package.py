"""The Python package: NumPy arrays in and out, h5py as the independent reference."""
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import BUILD, DTYPES, ROOT, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402


@pytest.mark.parametrize("layout", ["virtual", "contiguous", "chunked"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype_with_h5py_as_reference(tmp_path, dtype, layout):
    a = random_array(dtype, (31, 7), seed=2)
    h5tile.to_file(a, tmp_path / "a.h5", "/x", layout=layout, ranks=3).wait()
    with h5py.File(tmp_path / "a.h5", "r") as f:
        assert same_bytes(f["x"][...], a)
    b = h5tile.from_file(tmp_path / "a.h5", "/x")
    assert isinstance(b, np.ndarray) and same_bytes(b, a)
    with h5py.File(tmp_path / "h.h5", "w") as f:
        f.create_dataset("y", data=a, chunks=(4, 7), compression="gzip")
    assert same_bytes(h5tile.from_file(tmp_path / "h.h5", "y"), a)


@pytest.mark.parametrize("make", [
    lambda a: a.T,                 # Fortran order
    lambda a: a[::-1, 1:6],        # negative strides, a slice
    lambda a: a[::2, ::3],         # strided
    lambda a: np.broadcast_to(a[:1], a.shape),  # zero stride
])
def test_non_contiguous_arrays(tmp_path, make):
    view = make(np.arange(12 * 9, dtype=np.int64).reshape(12, 9))
    h5tile.to_file(view, tmp_path / "s.h5", "/s", ranks=4).wait()
    with h5py.File(tmp_path / "s.h5", "r") as f:
        assert np.array_equal(f["s"][...], view)


def test_scalar_and_empty(tmp_path):
    h5tile.to_file(np.float64(2.5), tmp_path / "z.h5", "/scalar").wait()
    h5tile.to_file(np.zeros((0, 3), np.int16), tmp_path / "z.h5", "/empty", mode="a").wait()
    s = h5tile.from_file(tmp_path / "z.h5", "/scalar")
    assert s.shape == () and s[()] == 2.5
    assert h5tile.from_file(tmp_path / "z.h5", "/empty").shape == (0, 3)


def test_handles_and_fence(tmp_path):
    a = np.ones((1000, 100), np.float32)
    handles = [h5tile.to_file(a * i, tmp_path / f"f{i}.h5", "/d") for i in range(4)]
    h5tile.fence()
    assert all(h.done() for h in handles)
    for i in range(4):
        with h5py.File(tmp_path / f"f{i}.h5", "r") as f:
            assert (f["d"][...] == i).all()


def test_reads_are_ordered_after_writes_without_waiting(tmp_path):
    for i in range(3):
        h5tile.to_file(np.full(100000, i, np.int32), tmp_path / "o.h5", "/d")
    assert (h5tile.from_file(tmp_path / "o.h5", "/d") == 2).all()
    h5tile.fence()


def test_batched_blocks_and_consumption_from_another_thread(tmp_path):
    a = random_array("float32", (23, 17), seed=4)
    h5tile.to_file(a, tmp_path / "b.h5", "/b").wait()
    got = np.zeros_like(a)
    offsets = []

    def consume():
        for block, offset in h5tile.from_file_batched(tmp_path / "b.h5", "/b", (5, 10)):
            offsets.append(offset)
            got[offset[0]:offset[0] + block.shape[0], offset[1]:offset[1] + block.shape[1]] = block

    t = threading.Thread(target=consume)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive()
    assert offsets == sorted(offsets) and len(offsets) == 5 * 2
    assert same_bytes(got, a)
    lengths = [b.shape[0] for b, _ in h5tile.from_file_batched(tmp_path / "b.h5", "/b", (2, 17))]
    assert lengths == [2] * 11 + [1]


def test_gil_is_released_during_io(tmp_path):
    a = np.ones((4096, 4096), np.float32)  # 64 MiB
    h5tile.to_file(a, tmp_path / "g.h5", "/g").wait()
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=tick)
    t.start()
    before = len(ticks)
    for _ in range(5):
        h5tile.from_file(tmp_path / "g.h5", "/g")
    stop.set()
    t.join()
    assert len(ticks) > before  # the other thread ran Python code while h5tile read


def test_errors_are_the_python_types_users_expect(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.h5") as e:
        h5tile.from_file(tmp_path / "nope.h5", "/x")
    assert isinstance(e.value, h5tile.NoSuchFileError) and isinstance(e.value, h5tile.Error)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["g/a"] = np.zeros(3)
    with pytest.raises(ValueError, match="is a group") as e:
        h5tile.from_file(tmp_path / "f.h5", "/g")
    assert isinstance(e.value, h5tile.NotADatasetError) and "f.h5" in str(e.value)
    with pytest.raises(ValueError, match="'/g/b'") as e:
        h5tile.from_file(tmp_path / "f.h5", "/g/b")
    assert isinstance(e.value, h5tile.DatasetNotFoundError)
    (tmp_path / "dir.h5").mkdir()
    with pytest.raises(ValueError, match="directory"):
        h5tile.to_file(np.zeros(3), tmp_path / "dir.h5", "/x")
    with pytest.raises(TypeError, match="unsupported dtype"):
        h5tile.to_file(np.array(["a", "b"]), tmp_path / "t.h5", "/x")
    with pytest.raises(TypeError, match="unsupported dtype"):
        h5tile.to_file(np.array([1, "a"], dtype=object), tmp_path / "t.h5", "/x")
    with h5py.File(tmp_path / "s.h5", "w") as f:
        f.create_dataset("s", data=["x", "yz"], dtype=h5py.string_dtype())  # read (test_strings.py)
        f.create_dataset("v", (2,), dtype=h5py.vlen_dtype(np.int32))
    assert h5tile.from_file(tmp_path / "s.h5", "/s").tolist() == [b"x", b"yz"]
    with pytest.raises(TypeError, match="variable-length sequence"):
        h5tile.from_file(tmp_path / "s.h5", "/v")
    h5tile.to_file(np.zeros((4, 4)), tmp_path / "two.h5", "/d").wait()
    for bad, needle in [((0, 3), "element 0 is 0"), ((-1, 3), "element 0 is -1"), ((2,), "has 1 elements"),
                        ((2, 2.5), "not an integer")]:
        with pytest.raises(ValueError, match=needle):
            h5tile.from_file_batched(tmp_path / "two.h5", "/d", bad)
    with pytest.raises(h5tile.FileAlreadyExistsError, match="f.h5") as e:
        h5tile.to_file(np.zeros(3), tmp_path / "f.h5", "/y", mode="x")
    assert isinstance(e.value, FileExistsError)
    with pytest.raises(ValueError, match="mode must be"):
        h5tile.to_file(np.zeros(3), tmp_path / "m.h5", "/y", mode="r")


def test_star_import_leaves_the_builtin_exceptions_intact():
    import builtins
    namespace: dict = {}
    exec("from h5tile import *", namespace)
    assert set(h5tile.__all__) <= set(namespace)
    shadowed = sorted(name for name in namespace if name != "__builtins__" and hasattr(builtins, name))
    assert shadowed == [], f"'from h5tile import *' shadows built-ins: {shadowed}"
    for name in ("FileNotFoundError", "FileExistsError", "RuntimeError"):
        assert eval(name, namespace) is getattr(builtins, name)
    # h5tile's own classes keep the built-in bases: `except FileNotFoundError` still catches them.
    assert issubclass(h5tile.NoSuchFileError, builtins.FileNotFoundError)
    assert issubclass(h5tile.FileAlreadyExistsError, builtins.FileExistsError)
    for cls in (h5tile.OperationError, h5tile.NotHdf5FileError, h5tile.VirtualSourceError, h5tile.Hdf5Error,
                h5tile.CancelledError):
        assert issubclass(cls, builtins.RuntimeError) and issubclass(cls, h5tile.Error), cls


def test_the_entry_file_only_names_and_nothing_reaches_back_into_it():
    """h5tile/__init__.py imports and names (no function, class or other statement), and no module
    of the package takes a name from it: each imports the module that defines what it uses."""
    import ast
    package = ROOT / "python" / "h5tile"
    entry = ast.parse((package / "__init__.py").read_text())
    allowed = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.Expr)
    assert [type(node).__name__ for node in entry.body if not isinstance(node, allowed)] == []
    assert all(isinstance(node.value, ast.Constant) for node in entry.body if isinstance(node, ast.Expr))  # docstring
    modules = {path.stem for path in package.glob("*.py")} | {"_h5tile"}
    reaching = []
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import) and any(alias.name == "h5tile" for alias in node.names):
                reaching.append(f"{path.name}:{node.lineno}: import h5tile")
            if isinstance(node, ast.ImportFrom) and (node.module == "h5tile" or (node.level == 1 and not node.module)):
                reaching += [f"{path.name}:{node.lineno}: {alias.name}" for alias in node.names
                             if alias.name not in modules]
    assert reaching == []


def test_objects_with_array_interfaces_are_written_without_numpy_in_the_call(tmp_path):
    class OnlyArrayInterface:
        def __init__(self, a):
            self.__array_interface__ = a.__array_interface__
            self._keep = a

    a = random_array("uint16", (9, 4))
    h5tile.to_file(OnlyArrayInterface(a), tmp_path / "i.h5", "/i").wait()
    assert same_bytes(h5tile.from_file(tmp_path / "i.h5", "/i"), a)


MPI_SCRIPT = '''
import sys
import numpy as np
from mpi4py import MPI
import h5tile
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
rows = 10 + rank  # uneven tiles
first = sum(10 + r for r in range(rank))
tile = np.arange(first * 6, (first + rows) * 6, dtype=np.int64).reshape(rows, 6)
h5tile.to_file(tile, sys.argv[1], "/m", comm=comm, layout=sys.argv[2])
array, offset = h5tile.read_tile(sys.argv[1], "/m", comm=comm)
total = sum(10 + r for r in range(size))
expected = np.arange(total * 6, dtype=np.int64).reshape(total, 6)
assert (array == expected[offset[0]:offset[0] + array.shape[0]]).all()
n = comm.allreduce(array.shape[0])
assert n == total, (n, total)
bad = sys.argv[1] + (".other" if rank == size - 1 else "")
try:
    h5tile.to_file(tile, bad, "/m", comm=comm)
    result = "no error"
except ValueError as e:
    result = "same error: " + str("ranks disagree" in str(e))
with open(f"result-{rank}.txt", "w") as f:  # one file per rank: stdout of ranks interleaves
    f.write(result)
'''


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="MPI not installed")
@pytest.mark.parametrize("layout", ["virtual", "contiguous"])
def test_mpi4py_communicator(tmp_path, layout):
    pytest.importorskip("mpi4py")
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    (tmp_path / "s.py").write_text(MPI_SCRIPT)
    out = subprocess.run(["mpirun", "--oversubscribe", "-n", "3", sys.executable, "s.py", "m.h5", layout],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    results = [(tmp_path / f"result-{r}.txt").read_text() for r in range(3)]
    assert results == ["same error: True"] * 3, results
    with h5py.File(tmp_path / "m.h5", "r") as f:
        assert np.array_equal(f["m"][...], np.arange(33 * 6).reshape(33, 6))


@pytest.mark.parametrize("dtype", ["float64", "V7", "bool"])
def test_from_file_into_an_existing_array(tmp_path, dtype):
    a = random_array(dtype, (40, 9), seed=4)
    h5tile.to_file(a, tmp_path / "o.h5", "/o", ranks=3).wait()
    out = np.zeros_like(a)
    assert h5tile.from_file(tmp_path / "o.h5", "/o", out=out) is out and same_bytes(out, a)
    with pytest.raises(h5tile.InvalidArgumentError, match="has shape"):
        h5tile.from_file(tmp_path / "o.h5", "/o", out=np.zeros((41, 9), a.dtype))
    with pytest.raises(h5tile.InvalidArgumentError, match="C-contiguous"):
        h5tile.from_file(tmp_path / "o.h5", "/o", out=np.zeros((9, 40), a.dtype).T)
    with pytest.raises(h5tile.InvalidArgumentError, match="read-only"):
        frozen = np.zeros_like(a)
        frozen.flags.writeable = False
        h5tile.from_file(tmp_path / "o.h5", "/o", out=frozen)
    if dtype == "float64":  # a dtype that could change values: refused, naming the one to pass
        with pytest.raises(h5tile.InvalidArgumentError, match="dtype int8 .* pass out of dtype float64"):
            h5tile.from_file(tmp_path / "o.h5", "/o", out=np.zeros((40, 9), np.int8))
    if dtype == "bool":  # one that cannot: converted, as h5py's read_direct converts
        wider = np.zeros((40, 9), np.int8)
        assert h5tile.from_file(tmp_path / "o.h5", "/o", out=wider) is wider
        np.testing.assert_array_equal(wider, a.astype(np.int8))


def test_chunked_layout_with_given_chunks_and_bad_chunks(tmp_path):
    a = random_array("float32", (50, 30), seed=9)
    h5tile.to_file(a, tmp_path / "c.h5", "/c", layout="chunked", chunks=(16, 7), ranks=3).wait()
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert f["c"].chunks == (16, 7) and same_bytes(f["c"][...], a)
    assert not (tmp_path / "c.h5.tiles").exists()
    with pytest.raises(h5tile.InvalidArgumentError, match="chunks must be positive"):
        h5tile.to_file(a, tmp_path / "d.h5", "/c", layout="chunked", chunks=(0, 7))
    with pytest.raises(ValueError, match="at most the shape"):
        h5tile.to_file(a, tmp_path / "d.h5", "/c", layout="chunked", chunks=(64, 7))
    with pytest.raises(ValueError, match="layout must be 'auto', 'virtual', 'contiguous' or 'chunked'"):
        h5tile.to_file(a, tmp_path / "d.h5", "/c", layout="tiled")


def test_checked_in_type_stubs_match_the_extension():
    generated = (BUILD / "python" / "h5tile" / "_h5tile.pyi").read_text()
    checked_in = (ROOT / "python" / "h5tile" / "_h5tile.pyi").read_text()
    assert generated == checked_in, "regenerate: cp build/python/h5tile/_h5tile.pyi python/h5tile/"


def test_progress_reaches_the_total_and_can_cancel(tmp_path):
    a = np.ones((2048, 1024), np.float32)  # 8 MiB: several tasks
    seen = []
    h5tile.to_file(a, tmp_path / "p.h5", "/p", ranks=4, progress=lambda d, t: seen.append((d, t))).wait()
    assert seen and seen[-1] == (a.nbytes, a.nbytes) and all(d <= t for d, t in seen)
    seen.clear()
    b = h5tile.from_file(tmp_path / "p.h5", "/p", progress=lambda d, t: seen.append((d, t)))
    assert (b == a).all() and seen[-1] == (a.nbytes, a.nbytes)
    with h5py.File(tmp_path / "p.h5", "r") as f:
        before = f["p"][...]
    with pytest.raises(h5tile.CancelledError):
        h5tile.to_file(a * 2, tmp_path / "p.h5", "/p", ranks=4, progress=lambda d, t: False).wait()
    with h5py.File(tmp_path / "p.h5", "r") as f:  # the cancelled write left the old file
        assert np.array_equal(f["p"][...], before)
    with pytest.raises(h5tile.CancelledError):
        h5tile.from_file(tmp_path / "p.h5", "/p", progress=lambda d, t: False)
    h5tile.consolidate(tmp_path / "p.h5", "/p", tmp_path / "one.h5")
    with h5py.File(tmp_path / "one.h5", "r") as f:
        assert not f["p"].is_virtual and np.array_equal(f["p"][...], a)


def test_consolidate_keeps_an_existing_output_unless_told(tmp_path):
    a = np.arange(600, dtype=np.int32).reshape(20, 30)
    h5tile.to_file(a, tmp_path / "v.h5", "/x", ranks=3).wait()
    with h5py.File(tmp_path / "out.h5", "w") as f:
        f["other"] = np.ones(5)
    with pytest.raises(h5tile.FileAlreadyExistsError, match="out.h5"):
        h5tile.consolidate(tmp_path / "v.h5", "/x", tmp_path / "out.h5")  # mode "x", as the command's
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert list(f) == ["other"]
    h5tile.consolidate(tmp_path / "v.h5", "/x", tmp_path / "out.h5", mode="a")
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert sorted(f) == ["other", "x"] and np.array_equal(f["x"][...], a) and not f["x"].is_virtual
    h5tile.consolidate(tmp_path / "v.h5", "/x", tmp_path / "out.h5", mode="w")
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert list(f) == ["x"] and np.array_equal(f["x"][...], a)
    with pytest.raises(h5tile.InvalidArgumentError, match="mode must be"):
        h5tile.consolidate(tmp_path / "v.h5", "/x", tmp_path / "new.h5", mode="r+")


def test_virtual_sources_outside_the_folder_are_refused_unless_allowed(tmp_path, monkeypatch):
    (tmp_path / "outside").mkdir()
    (tmp_path / "inside").mkdir()
    (tmp_path / "inside-not").mkdir()
    secret = np.arange(10, dtype=np.int64)
    for folder in ("outside", "inside-not"):
        with h5py.File(tmp_path / folder / "secret.h5", "w") as f:
            f["s"] = secret
    os.symlink(tmp_path / "outside" / "secret.h5", tmp_path / "inside" / "link.h5")
    os.symlink(tmp_path / "outside", tmp_path / "inside" / "linked-folder")
    monkeypatch.chdir(tmp_path)  # some file names below are relative to the working directory
    for name, source in [("absolute", str(tmp_path / "outside" / "secret.h5")),
                         ("escape", "../outside/secret.h5"), ("symlink", "link.h5"),
                         ("folder_link", "linked-folder/secret.h5"),
                         ("name_prefix", str(tmp_path / "inside-not" / "secret.h5")),
                         ("relative_vds", "../outside/secret.h5")]:
        with h5py.File(tmp_path / "inside" / f"{name}.h5", "w") as f:
            layout = h5py.VirtualLayout(shape=(10,), dtype="i8")
            layout[:] = h5py.VirtualSource(source, "s", shape=(10,))
            f.create_virtual_dataset("v", layout)
        vds = Path("inside") / f"{name}.h5" if name == "relative_vds" else tmp_path / "inside" / f"{name}.h5"
        with pytest.raises(h5tile.VirtualSourceError, match="outside the folder"):
            h5tile.from_file(vds, "/v")
        got = h5tile.from_file(vds, "/v", allow_external_sources=True)
        assert np.array_equal(got, secret)
        with pytest.raises(h5tile.VirtualSourceError, match="outside the folder"):
            h5tile.read_box(tmp_path / "inside" / f"{name}.h5", "/v", (2,), (3,))
        box = h5tile.read_box(tmp_path / "inside" / f"{name}.h5", "/v", (2,), (3,), allow_external_sources=True)
        assert np.array_equal(box, secret[2:5])
        with pytest.raises(h5tile.VirtualSourceError, match="outside the folder"):
            list(h5tile.from_file_batched(vds, "/v", (4,)))
        blocks = list(h5tile.from_file_batched(vds, "/v", (4,), allow_external_sources=True))
        assert [o for _, o in blocks] == [(0,), (4,), (8,)]
        assert np.array_equal(np.concatenate([b for b, _ in blocks]), secret)


def test_read_time_checksum_check_names_a_changed_tile(tmp_path):
    a = np.arange(30 * 8, dtype=np.float64).reshape(30, 8)
    h5tile.to_file(a, tmp_path / "c.h5", "/c", ranks=3, layout="virtual").wait()
    assert np.array_equal(h5tile.from_file(tmp_path / "c.h5", "/c", verify_checksums=True), a)
    with h5py.File(tmp_path / "c.h5", "r") as f:
        table = f["c"].attrs["h5tile_tile_table"]
        tile = tmp_path / f["c"].virtual_sources()[2].file_name
    data = bytearray(tile.read_bytes())
    data[int(table[2][0]) + 8] ^= 0x40
    tile.write_bytes(bytes(data))
    assert not np.array_equal(h5tile.from_file(tmp_path / "c.h5", "/c"), a)  # unchecked: the changed bytes
    with pytest.raises(h5tile.VirtualSourceError, match="tile-00002.h5.*fails its checksum"):
        h5tile.from_file(tmp_path / "c.h5", "/c", verify_checksums=True)
    with pytest.raises(h5tile.VirtualSourceError, match="fails its checksum"):
        h5tile.read_box(tmp_path / "c.h5", "/c", (25, 0), (5, 8), verify_checksums=True)
    # Tiles the box does not touch are not checked.
    assert np.array_equal(h5tile.read_box(tmp_path / "c.h5", "/c", (0, 0), (10, 8), verify_checksums=True), a[:10])
    with pytest.raises(h5tile.VirtualSourceError, match="tile-00002.h5.*fails its checksum"):
        list(h5tile.from_file_batched(tmp_path / "c.h5", "/c", (7, 8), verify_checksums=True))
    assert sum(b.size for b, _ in h5tile.from_file_batched(tmp_path / "c.h5", "/c", (7, 8))) == a.size
