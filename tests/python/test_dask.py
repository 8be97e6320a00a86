"""h5tile.dask: Dask arrays read by h5tile (from_file) and written as tiles (to_file), checked with
Dask's own assert_eq against h5py and NumPy, on Dask's threaded scheduler and on a
dask.distributed LocalCluster of two worker processes (loopback, started and closed here),
with a worker killed in the middle of a write."""
import errno
import os
import pickle
import sys
import time

import h5py
import numpy as np
import pytest

from conftest import BUILD, DTYPES, random_array, same_bytes

sys.path.insert(0, str(BUILD / "python"))
import h5tile  # noqa: E402

dask = pytest.importorskip("dask", reason="Dask is not installed (scripts/install_deps.sh installs dask[array])")
da = pytest.importorskip("dask.array", reason="dask[array] is not installed")
from dask.array.utils import assert_eq  # noqa: E402
from dask.delayed import Delayed  # noqa: E402

import h5tile.dask as h5d  # noqa: E402


def h5py_file(path, dtype, shape, seed=0, values=False, **create):
    """A dataset "d" written by h5py: random bits (NaNs too), or with ``values`` numbers in [0, 1)."""
    a = np.random.default_rng(seed).random(shape).astype(dtype) if values else random_array(dtype, shape, seed=seed)
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=a, **create)
    return a


def listing(folder):
    return sorted(os.path.relpath(os.path.join(d, n), folder) for d, _, names in os.walk(folder) for n in names)


def same(x, a):
    """Dask's checks (graph, meta, chunks, dtype) and the values: bytes for opaque types, values
    (NaNs equal) for the others."""
    if a.dtype.kind == "V":
        assert x.dtype == a.dtype and x.shape == a.shape
        assert same_bytes(x.compute(scheduler="threads"), a)
    else:
        assert_eq(x, a, equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_read_and_written_with_irregular_blocks(tmp_path, dtype):
    a = h5py_file(tmp_path / "in.h5", dtype, (37, 11), chunks=(5, 4))
    x = h5d.from_file(tmp_path / "in.h5", "d", chunks=((10, 3, 20, 4), (6, 5)))
    assert x.chunks == ((10, 3, 20, 4), (6, 5))
    same(x, a)
    h5d.to_file(x, tmp_path / "out.h5", "/e")
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert f["e"].is_virtual and len(f["e"].virtual_sources()) == 8  # one tile per block
        assert same_bytes(f["e"][...], a)
    same(h5d.from_file(tmp_path / "out.h5", "/e"), a)


@pytest.mark.parametrize("kind", ["contiguous", "chunked", "gzip", "virtual"])
def test_layouts_read_with_blocks_aligned_to_the_file(tmp_path, kind):
    path = tmp_path / "f.h5"
    if kind == "virtual":
        a = np.random.default_rng(3).random((1000, 24), dtype=np.float32)
        h5tile.to_file(a, path, "/d", layout="virtual", ranks=3).wait()
    else:
        create = {"contiguous": {}, "chunked": {"chunks": (64, 8)},
                  "gzip": {"chunks": (64, 8), "compression": "gzip", "shuffle": True}}[kind]
        a = h5py_file(path, "float32", (1000, 24), seed=3, values=True, **create)
    with dask.config.set({"array.chunk-size": "16KiB"}):
        x = h5d.from_file(path, "/d")
    if kind in ("chunked", "gzip"):  # whole numbers of the file's chunks (the last ones clipped)
        assert all(c % 64 == 0 for c in x.chunks[0][:-1]) and all(c % 8 == 0 for c in x.chunks[1][:-1])
        assert x.npartitions > 1
    if kind == "virtual":  # the tiles
        with h5py.File(path, "r") as f:
            rows = sorted(s.vspace.get_select_bounds()[0][0] for s in f["d"].virtual_sources())
        assert x.chunks == (tuple(np.diff(rows + [1000]).tolist()), (24,))
    same(x, a)
    assert_eq(x.mean(axis=0), a.mean(axis=0))
    assert float(x.sum().compute()) == pytest.approx(float(a.astype(np.float64).sum()), rel=1e-5)


def test_graph_holds_no_open_file_and_pickles(tmp_path):
    a = h5py_file(tmp_path / "p.h5", "int32", (50, 6), chunks=(10, 6))
    x = h5d.from_file(tmp_path / "p.h5", "d", chunks=(20, 6))
    graph = dict(x.__dask_graph__())
    again = pickle.loads(pickle.dumps(graph))  # plain pickle: no handle, no lock in the graph
    assert "h5py" not in repr(graph) and "Lock" not in repr(graph)
    got = dask.get(again, [x.__dask_keys__()[1][0]])[0]
    assert np.array_equal(got, a[20:40])
    scalar = tmp_path / "s.h5"
    with h5py.File(scalar, "w") as f:
        f["s"] = np.float64(2.5)
    assert h5d.from_file(scalar, "s").compute() == 2.5
    # Rewriting the file changes the array's name: Dask does not reuse blocks of the old file.
    name = x.name
    h5py_file(tmp_path / "p.h5", "int32", (50, 6), seed=1, chunks=(10, 6))
    assert h5d.from_file(tmp_path / "p.h5", "d", chunks=(20, 6)).name != name


def test_the_first_blocks_on_every_thread_open_the_dataset_once(tmp_path, monkeypatch):
    # A graph's first blocks start on every thread at once; each opening its own reader would fetch
    # a URL's first block and metadata once per thread.
    a = h5py_file(tmp_path / "o.h5", "float32", (64, 8), chunks=(4, 8))
    opened, real = [], h5d._h5tile._Reader

    def slow_open(*args):
        opened.append(args)
        time.sleep(0.05)  # long enough for every thread to arrive while the first opens
        return real(*args)

    monkeypatch.setattr(h5d._h5tile, "_Reader", slow_open)
    x = h5d.from_file(tmp_path / "o.h5", "d", chunks=(4, 8))
    with dask.config.set(scheduler="threads", num_workers=8):
        got = x.compute()
    assert same_bytes(got, a)
    assert len(opened) == 1, opened
    # A copy made by pickle (a worker's) opens its own, once.
    again = pickle.loads(pickle.dumps(x))
    assert same_bytes(again.compute(scheduler="threads", num_workers=8), a) and len(opened) == 2


def rewritten(path, dataset, data):
    """`path` replaced by h5tile.to_file (a new file renamed over it: another inode), holding `data`;
    the os.stat of the file before and after."""
    before = os.stat(path)
    h5tile.to_file(data, path, dataset).wait()
    after = os.stat(path)
    assert after.st_ino != before.st_ino
    return before, after


def test_a_compute_reads_one_version_of_a_local_file(tmp_path):
    """The file's version is recorded when the array is made: a compute after the file was
    replaced raises (ESTALE), naming both versions, where it would read the new one; pickled
    copies (a worker's) carry the version."""
    a, b = random_array("float32", (60, 4), seed=1), random_array("float32", (60, 4), seed=2)
    h5tile.to_file(a, tmp_path / "v.h5", "/d").wait()
    x = h5d.from_file(tmp_path / "v.h5", "/d", chunks=(10, 4))
    assert same_bytes(x.compute(scheduler="threads"), a)
    copy = pickle.loads(pickle.dumps(x))
    before, after = rewritten(tmp_path / "v.h5", "/d", b)
    for array in (x, copy):
        with pytest.raises(h5tile.IoError, match="changed since the array was made") as e:
            array.compute(scheduler="threads")
        assert e.value.errno == errno.ESTALE
        assert f"inode {before.st_ino}" in str(e.value) and f"inode {after.st_ino}" in str(e.value)
        assert "v.h5" in str(e.value) and f"{before.st_mtime_ns} ns" in str(e.value)
    assert same_bytes(h5d.from_file(tmp_path / "v.h5", "/d", chunks=(10, 4)).compute(scheduler="threads"), b)


def test_a_file_replaced_between_two_blocks_of_a_compute_is_an_error(tmp_path, monkeypatch):
    """Where the file is replaced while a compute runs (here: after its first block), the blocks
    read after it raise instead of returning the new version beside the old."""
    a, b = random_array("int16", (40, 3), seed=3), random_array("int16", (40, 3), seed=4)
    h5tile.to_file(a, tmp_path / "m.h5", "/d").wait()
    x = h5d.from_file(tmp_path / "m.h5", "/d", chunks=(10, 3))
    real, blocks = h5d._h5tile._Reader, []

    class RewriteAfterTheFirstBlock:
        def __init__(self, *args):
            self.reader = real(*args)

        def expect(self, *args):
            self.reader.expect(*args)

        def read_box(self, offset, extent):
            blocks.append(self.reader.read_box(offset, extent))
            if len(blocks) == 1:
                rewritten(tmp_path / "m.h5", "/d", b)
            return blocks[-1]

    monkeypatch.setattr(h5d._h5tile, "_Reader", RewriteAfterTheFirstBlock)
    with pytest.raises(h5tile.IoError, match="changed since the array was made"):
        x.compute(scheduler="synchronous")
    assert len(blocks) == 1  # the first block's own check after its read found the new version


def test_errors_name_what_was_wrong(tmp_path):
    with pytest.raises(h5tile.NoSuchFileError, match="missing.h5"):
        h5d.from_file(tmp_path / "missing.h5", "d")
    h5py_file(tmp_path / "e.h5", "int8", (4,))
    with pytest.raises(h5tile.DatasetNotFoundError, match="nope"):
        h5d.from_file(tmp_path / "e.h5", "nope")
    x = da.ones((8, 2), chunks=4)
    with pytest.raises(h5tile.InvalidArgumentError, match="'contiguous'.*consolidate"):
        h5d.to_file(x, tmp_path / "c.h5", "/c", layout="contiguous")
    with pytest.raises(h5tile.ArgumentTypeError, match="dask.array.Array"):
        h5d.to_file(np.ones(3), tmp_path / "c.h5", "/c")
    with pytest.raises(h5tile.UnsupportedTypeError):
        h5d.to_file(da.from_array(np.array(["ab"])), tmp_path / "c.h5", "/c")
    assert not (tmp_path / "c.h5").exists()


def test_compute_false_writes_when_computed_and_compressed_tiles(tmp_path):
    a = np.random.default_rng(5).random((300, 7))
    x = da.from_array(a, chunks=(70, 4))
    d = h5d.to_file(x, tmp_path / "z.h5", "/z", compute=False, compression="gzip", shuffle=True)
    assert isinstance(d, Delayed) and not (tmp_path / "z.h5").exists()
    d.compute(scheduler="threads")
    with h5py.File(tmp_path / "z.h5", "r") as f:
        assert np.array_equal(f["z"][...], a)
    tiles = [n for n in listing(tmp_path) if n.startswith("z.h5.tiles") and n.endswith(".h5")]
    assert len(tiles) == 10  # one per block
    with h5py.File(tmp_path / tiles[0], "r") as t:
        assert t[list(t)[0]].compression == "gzip"
    # mode "a" adds a dataset; 0-d and empty arrays are written from the client
    h5d.to_file(da.from_array(np.float32(4)), tmp_path / "z.h5", "/s", mode="a")
    h5d.to_file(da.zeros((0, 3), dtype="u2"), tmp_path / "z.h5", "/e", mode="a")
    with h5py.File(tmp_path / "z.h5", "r") as f:
        assert np.array_equal(f["z"][...], a) and f["s"][()] == np.float32(4) and f["e"].shape == (0, 3)


def failing_block(block, block_info=None):
    if block_info[None]["chunk-location"] == (2, 0):
        raise ValueError("block (2, 0) cannot be computed")
    return block


def test_a_failing_block_leaves_the_previous_file(tmp_path):
    old = random_array("int16", (60, 5), seed=1)
    h5d.to_file(da.from_array(old, chunks=20), tmp_path / "w.h5", "/w")
    before = {n: (tmp_path / n).read_bytes() for n in listing(tmp_path)}
    x = da.from_array(random_array("int16", (60, 5), seed=2), chunks=(10, 5)).map_blocks(failing_block, dtype="int16")
    with pytest.raises(ValueError, match=r"block \(2, 0\)"):
        h5d.to_file(x, tmp_path / "w.h5", "/w")
    assert {n: (tmp_path / n).read_bytes() for n in listing(tmp_path)} == before
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert np.array_equal(f["w"][...], old)


def test_a_block_of_another_shape_or_dtype_than_declared_is_an_error(tmp_path):
    x = da.from_array(np.arange(40, dtype=np.int64).reshape(8, 5), chunks=4)
    lying = x.map_blocks(lambda b: b[:-1], dtype=x.dtype)  # declares (4, 4) blocks, returns (3, 4)
    with pytest.raises(h5tile.InvalidArgumentError, match=r"block at \(0, 0\).*\(3, 4\).*declares \(4, 4\)"):
        h5d.to_file(lying, tmp_path / "l.h5", "/l")
    with pytest.raises(h5tile.InvalidArgumentError, match="float32.*declares.*int64"):
        h5d.to_file(x.map_blocks(lambda b: b.astype(np.float32), dtype=x.dtype), tmp_path / "l.h5", "/l")
    assert listing(tmp_path) == []  # nothing left of the failed writes


def test_device_blocks_are_cupy_and_reduce_on_the_gpu(tmp_path):
    cp = pytest.importorskip("cupy", reason="CuPy is not installed: device=0 gives CuPy blocks")
    if h5tile.cuda_device_count() == 0:
        pytest.skip("no CUDA device visible (or h5tile built without CUDA)")
    a = h5py_file(tmp_path / "g.h5", "float32", (4000, 16), values=True, chunks=(500, 16), compression="gzip")
    x = h5d.from_file(tmp_path / "g.h5", "d", device=0)
    assert isinstance(x._meta, cp.ndarray)
    block = x.blocks[0, 0].compute()
    assert isinstance(block, cp.ndarray) and same_bytes(cp.asnumpy(block), a[:block.shape[0]])
    assert float(x.sum().compute()) == pytest.approx(float(a.astype(np.float64).sum()), rel=1e-5)


def die_once(block, marker, client_pid):
    """Kills this worker process the first time it runs (a marker file says that it did); never
    the test's own process (where Dask may call it to learn its output's type)."""
    if os.getpid() != client_pid and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(17)
    return block


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    where = tmp_path_factory.mktemp("dask-cluster")
    # No retry of a task whose worker died: the write sees the lost worker (else Dask runs the
    # block again elsewhere and the write succeeds, also checked below).
    with dask.config.set({"distributed.scheduler.allowed-failures": 0, "temporary-directory": str(where)}):
        with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                      dashboard_address=None, local_directory=str(where)) as c, \
                distributed.Client(c) as client:
            yield client


def test_distributed_read_reduce_write(tmp_path, cluster):
    a = h5py_file(tmp_path / "r.h5", "float64", (2000, 12), values=True, chunks=(100, 12), compression="gzip", shuffle=True)
    x = h5d.from_file(tmp_path / "r.h5", "d", chunks=(300, 12))
    assert np.allclose(x.mean(axis=0).compute(), a.mean(axis=0))
    assert_eq(x, a, scheduler=cluster)
    h5d.to_file(x * 3, tmp_path / "o.h5", "/o")
    with h5py.File(tmp_path / "o.h5", "r") as f:
        assert np.array_equal(f["o"][...], a * 3) and len(f["o"].virtual_sources()) == 7
    assert np.array_equal(h5d.from_file(tmp_path / "o.h5", "/o").compute(), a * 3)
    d = h5d.to_file(x - 1, tmp_path / "o2.h5", "/o", compute=False)
    d.compute()
    with h5py.File(tmp_path / "o2.h5", "r") as f:
        assert np.array_equal(f["o"][...], a - 1)


def test_distributed_blocks_check_the_version_of_the_file(tmp_path, cluster):
    a, b = random_array("float64", (80, 5), seed=5), random_array("float64", (80, 5), seed=6)
    h5tile.to_file(a, tmp_path / "w.h5", "/d").wait()
    x = h5d.from_file(tmp_path / "w.h5", "/d", chunks=(20, 5))
    assert same_bytes(x.compute(scheduler=cluster), a)
    rewritten(tmp_path / "w.h5", "/d", b)
    with pytest.raises(h5tile.IoError, match="changed since the array was made"):
        x.compute(scheduler=cluster)


def test_distributed_worker_killed_during_a_write(tmp_path, cluster):
    distributed = pytest.importorskip("distributed")
    old = random_array("int32", (400, 3), seed=8)
    h5d.to_file(da.from_array(old, chunks=100), tmp_path / "k.h5", "/k")
    before = {n: (tmp_path / n).read_bytes() for n in listing(tmp_path)}
    new = random_array("int32", (400, 3), seed=9)
    marker = str(tmp_path.parent / (tmp_path.name + "-killed"))
    x = da.from_array(new, chunks=50)
    # the last block kills its worker while the other blocks' tiles are (being) written
    x = da.concatenate([x[:350], x[350:].map_blocks(die_once, marker, os.getpid(), dtype=x.dtype)])
    with pytest.raises(distributed.KilledWorker):
        h5d.to_file(x, tmp_path / "k.h5", "/k")
    assert os.path.exists(marker)
    os.remove(marker)
    assert {n: (tmp_path / n).read_bytes() for n in listing(tmp_path)} == before
    with h5py.File(tmp_path / "k.h5", "r") as f:
        assert np.array_equal(f["k"][...], old)
    cluster.wait_for_workers(2, timeout=60)
    # The same graph once the marker is there (no kill): the write completes on the restarted cluster.
    x = da.from_array(new, chunks=50)
    x = da.concatenate([x[:350], x[350:].map_blocks(die_once, marker, os.getpid(), dtype=x.dtype)])
    open(marker, "w").close()  # no kill this time
    h5d.to_file(x, tmp_path / "k.h5", "/k")
    os.remove(marker)
    with h5py.File(tmp_path / "k.h5", "r") as f:
        assert np.array_equal(f["k"][...], new)


def test_a_block_written_twice_fails_the_write_and_keeps_the_previous_file(tmp_path, monkeypatch):
    """What a write task that Dask runs a second time (its worker lost after the tile was
    written, its result with it) finds: its tile file there. The write raises; the old file stays."""
    old = np.arange(24, dtype=np.float32).reshape(6, 4)
    h5d.to_file(da.from_array(old, chunks=3), tmp_path / "t.h5", "/t")
    before = {n: (tmp_path / n).read_bytes() for n in listing(tmp_path)}
    once = h5d._write_block

    def twice(*args):
        once(*args)
        return once(*args)

    monkeypatch.setattr(h5d, "_write_block", twice)
    with pytest.raises(h5tile.Error, match=r"tile-\d+\.h5.*File exists"):
        h5d.to_file(da.from_array(old + 1, chunks=3), tmp_path / "t.h5", "/t")
    assert {n: (tmp_path / n).read_bytes() for n in listing(tmp_path)} == before


def test_an_empty_output_name_or_one_ending_in_a_slash_is_named(tmp_path, monkeypatch):
    """abspath would make "" the current folder and "out/" the file "out": the write's own checks
    name them instead, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    x = da.ones((10, 4), chunks=(5, 4))
    with pytest.raises(h5tile.InvalidArgumentError) as e:
        h5d.to_file(x, "", "/d")
    assert "empty" in str(e.value).replace(str(tmp_path), "")
    with pytest.raises(h5tile.IsADirectoryPathError, match="out/'.*ending in '/'"):
        h5d.to_file(x, "out/", "/d")
    assert listing(tmp_path) == []


def test_to_file_to_a_url_fails_at_once_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where abspath would make 'http://h/w.h5' the local path 'http:/h/w.h5'
    x = da.ones((10, 4), chunks=(5, 4))
    with pytest.raises(h5tile.InvalidArgumentError, match="remote writes are not supported") as e:
        h5d.to_file(x, "http://127.0.0.1:1/w.h5?token=SECRET", "/d")
    assert "SECRET" not in str(e.value)
    # s3:// is written (test_s3_writes.py); without credentials, refused before anything is sent.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_NO_SIGN_REQUEST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(h5tile.InvalidArgumentError, match="no AWS credentials"):
        h5d.to_file(x, "s3://bucket/w.h5", "/d")
    # A scheme h5tile does not serve is named, never written as a local folder 'gs:' (nor read as one).
    for url in ("gs://bucket/w.h5", "file:///w.h5", "simplecache::s3://bucket/w.h5"):
        scheme = url.split("://")[0]
        with pytest.raises(h5tile.InvalidArgumentError, match=f"does not write '{scheme}://'"):
            h5d.to_file(x, url, "/d", layout="virtual")
        with pytest.raises(h5tile.InvalidArgumentError, match=f"does not read '{scheme}://'"):
            h5d.from_file(url, "/d")
    assert listing(tmp_path) == []
