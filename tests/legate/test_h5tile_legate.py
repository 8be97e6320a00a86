"""h5tile.legate against real Legate on two CPUs (so arrays split into two tiles), checked against
h5py and NumPy, and against legate.io.hdf5 where both should agree (offsets, errors). On a
machine where Legate has GPUs (scripts/gpu_machine.sh legate), the same tests run the GPU
variants, one tile per GPU."""
import contextlib
import gc
import os
import threading
import time

import h5py
import numpy as np
import pytest

import h5tile
import h5tile.legate as hl
import legate.io.hdf5 as lh
from conftest import DTYPES, random_array, same_bytes
from servers.fixtures import nginx_server  # noqa: F401 (a fixture: tests/python/servers/)
from servers.seaweedfs import bucket, seaweedfs_server  # noqa: F401 (fixtures: tests/python/servers/)
from legate.core.data_interface import as_logical_array
from legate.core import ExceptionMode, LogicalArray, Scope, TaskTarget, Type, get_legate_runtime, get_machine

LEGATE_DTYPES = [d for d in DTYPES if not d.startswith("V")]
SHAPE = (301, 7)  # rows that neither tile count nor chunk length divides
# A write makes one tile per processor the tasks run on: GPUs where Legate has them, else CPUs.
TILES = get_machine().count(TaskTarget.GPU) or get_machine().count(TaskTarget.CPU)


def fence():
    get_legate_runtime().issue_execution_fence(block=True)


def host(array: LogicalArray) -> np.ndarray:
    fence()
    return np.asarray(array.data.get_physical_store()).copy()


def write_h5py(path, name, data, **kwargs):
    with h5py.File(path, "a") as f:
        f.create_dataset(name, data=data, **kwargs)


def read_h5py(path, name):
    with h5py.File(path, "r") as f:
        return f[name][()]


@pytest.mark.parametrize("dtype", LEGATE_DTYPES)
@pytest.mark.parametrize("storage", ["contiguous", "chunked"])
def test_reads_every_dtype_as_h5py_does(tmp_path, dtype, storage):
    data = random_array(dtype, SHAPE, seed=len(dtype))
    write_h5py(tmp_path / "a.h5", "d", data, chunks=(32, 7) if storage == "chunked" else None)
    array = hl.from_file(tmp_path / "a.h5", "d")
    assert isinstance(array, LogicalArray)
    assert array.type == Type.from_numpy_dtype(np.dtype(dtype))
    assert same_bytes(host(array), read_h5py(tmp_path / "a.h5", "d"))


@pytest.mark.parametrize("shape", [(1,), (5,), (2, 3), (64, 3, 5), (3, 4, 5, 6)])
def test_reads_shapes_of_every_rank(tmp_path, shape):
    data = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    write_h5py(tmp_path / "a.h5", "group/d", data)
    assert np.array_equal(host(hl.from_file(str(tmp_path / "a.h5"), "/group/d")), data)


def test_tiles_follow_the_file_chunks():
    assert hl.tile_rows((301, 7), (32, 7), 2) == 160  # 10 chunks, 5 per tile
    assert hl.tile_rows((301, 7), None, 2) == 151
    assert hl.tile_rows((301, 7), None, 1) == 301
    assert hl.tile_rows((3,), None, 8) == 1  # fewer rows than processors: one row each
    assert hl.tile_rows((10,), (100,), 2) == 100  # one chunk: one tile


def test_reads_what_h5tile_wrote_in_every_layout(tmp_path):
    data = random_array("float64", (257, 9), seed=3)
    for layout in ["virtual", "contiguous", "chunked"]:
        h5tile.to_file(data, tmp_path / f"{layout}.h5", "/x", layout=layout, ranks=3).wait()
        assert same_bytes(host(hl.from_file(tmp_path / f"{layout}.h5", "/x")), data), layout


def test_reads_what_legate_io_hdf5_wrote(tmp_path):
    runtime = get_legate_runtime()
    data = random_array("int16", (40000, 3), seed=4)  # large enough that Legate writes several tiles
    store = runtime.create_store_from_buffer(Type.from_numpy_dtype(data.dtype), data.shape, data, read_only=True)
    lh.to_file(store, tmp_path / "lw" / "x.h5", "/x")
    fence()
    assert same_bytes(host(hl.from_file(tmp_path / "lw" / "x.h5", "/x")), data)


def test_legate_io_hdf5_reads_the_same_file_alike(tmp_path):
    data = random_array("uint32", SHAPE, seed=5)
    h5tile.to_file(data, tmp_path / "t.h5", "/x", ranks=3).wait()
    ours, theirs = hl.from_file(tmp_path / "t.h5", "/x"), lh.from_file(tmp_path / "t.h5", "/x")
    assert ours.shape == theirs.shape and ours.type == theirs.type
    assert same_bytes(host(ours), host(theirs))


def test_scalar_and_empty_datasets_as_legate_io_hdf5_returns_them(tmp_path):
    write_h5py(tmp_path / "s.h5", "s", np.float64(4.5))
    write_h5py(tmp_path / "s.h5", "e", np.zeros((0, 3), np.int32))
    scalar = hl.from_file(tmp_path / "s.h5", "s")
    assert tuple(scalar.shape) == tuple(lh.from_file(tmp_path / "s.h5", "s").shape) == (1,)
    assert host(scalar).tolist() == [4.5]
    assert tuple(hl.from_file(tmp_path / "s.h5", "e").shape) == (0, 3)


def test_cupynumeric_wraps_the_result(tmp_path):
    cn = pytest.importorskip("cupynumeric")
    data = np.arange(SHAPE[0] * SHAPE[1], dtype=np.float32).reshape(SHAPE)  # sums exactly in float32
    write_h5py(tmp_path / "a.h5", "d", data)
    result = hl.from_file(tmp_path / "a.h5", "d")
    wrapped = cn.asarray(result)
    assert wrapped.shape == SHAPE and wrapped.dtype == np.float32
    assert as_logical_array(wrapped).data.equal_storage(result.data), "cupynumeric.asarray copied the result"
    assert same_bytes(np.asarray(wrapped), data)
    assert float((wrapped * 2).sum()) == float((data.astype(np.float64) * 2).sum())


@pytest.mark.parametrize("shape,chunk", [((5,), (2,)), ((5, 4), (2, 3)), ((301, 7), (100, 7)), ((6, 2, 3), (4, 1, 5))])
def test_batched_offsets_and_clipping_match_legate_io_hdf5(tmp_path, shape, chunk):
    data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    write_h5py(tmp_path / "a.h5", "d", data, chunks=tuple(max(1, s // 2) for s in shape))
    ours = [(host(a), o) for a, o in hl.from_file_batched(tmp_path / "a.h5", "d", chunk)]
    theirs = [o for _, o in lh.from_file_batched(tmp_path / "a.h5", "d", chunk)]
    assert [o for _, o in ours] == theirs
    covered = np.zeros(shape, dtype=int)
    for block, offset in ours:
        assert all(b <= c for b, c in zip(block.shape, chunk))
        region = tuple(slice(o, o + n) for o, n in zip(offset, block.shape))
        assert np.array_equal(block, data[region])
        covered[region] += 1
    assert (covered == 1).all()


def test_batched_clips_five_by_two_to_two_two_one(tmp_path):
    write_h5py(tmp_path / "a.h5", "d", np.arange(5, dtype=np.int8))
    assert [(tuple(a.shape), o) for a, o in hl.from_file_batched(tmp_path / "a.h5", "d", (2,))] == [
        ((2,), (0,)), ((2,), (2,)), ((1,), (4,))]


def raises_like_legate(call_ours, call_theirs, ours_type, match):
    """Our error is `ours_type` and also an instance of the class legate.io.hdf5 raises."""
    with pytest.raises(Exception) as theirs:
        call_theirs()
        fence()
    with pytest.raises(ours_type, match=match) as ours:
        call_ours()
    assert isinstance(ours.value, type(theirs.value)), (type(ours.value).__mro__, type(theirs.value))


def test_missing_file(tmp_path):
    missing = tmp_path / "missing.h5"
    raises_like_legate(lambda: hl.from_file(missing, "d"), lambda: lh.from_file(missing, "d"),
                       h5tile.NoSuchFileError, "missing.h5")


@pytest.mark.parametrize("name", ["nope", "g"])
def test_missing_dataset_or_a_group(tmp_path, name):
    write_h5py(tmp_path / "a.h5", "g/d", np.ones(3))
    raises_like_legate(lambda: hl.from_file(tmp_path / "a.h5", name), lambda: lh.from_file(tmp_path / "a.h5", name),
                       ValueError, f"'/?{name}'")


def test_a_directory_or_a_file_that_is_not_hdf5(tmp_path):
    (tmp_path / "text.h5").write_text("not HDF5")
    for path in [tmp_path, tmp_path / "text.h5"]:
        raises_like_legate(lambda: hl.from_file(path, "d"), lambda: lh.from_file(path, "d"), h5tile.Error,
                           str(path.name))


def test_opaque_dtype_is_refused_at_the_call(tmp_path):
    write_h5py(tmp_path / "a.h5", "d", np.zeros(4, dtype="V3"))
    with pytest.raises(ValueError, match="opaque") as e:
        hl.from_file(tmp_path / "a.h5", "d")
    assert isinstance(e.value, h5tile.UnsupportedTypeError)


@pytest.mark.parametrize("chunk", [(0, 1), (-1, 2), (-1, -2), (2, 1.5)])
def test_bad_chunk_size_is_refused_at_the_call(tmp_path, chunk):
    write_h5py(tmp_path / "a.h5", "d", np.ones((4, 4)))
    with pytest.raises(ValueError, match="Invalid chunk size"):
        hl.from_file_batched(tmp_path / "a.h5", "d", chunk)


def test_chunk_size_of_the_wrong_length(tmp_path):
    write_h5py(tmp_path / "a.h5", "d", np.ones((4, 4, 2)))
    theirs = pytest.raises(ValueError, match=r"Dimensions of chunks \(2\) must match dimension of dataset \(3\)")
    with theirs:
        next(iter(lh.from_file_batched(tmp_path / "a.h5", "d", (2, 2))))
    with pytest.raises(ValueError, match=r"Dimensions of chunks \(2\) must match dimension of dataset \(3\)"):
        hl.from_file_batched(tmp_path / "a.h5", "d", (2, 2))


def test_an_error_inside_a_task_reaches_the_caller(tmp_path):
    # The layout is read at the call; the missing source is found by the point tasks.
    layout = h5py.VirtualLayout(shape=(100,), dtype="i4")
    layout[:] = h5py.VirtualSource(str(tmp_path / "gone.h5"), "d", shape=(100,))
    with h5py.File(tmp_path / "v.h5", "w") as f:
        f.create_virtual_dataset("v", layout, fillvalue=-1)
    with pytest.raises(h5tile.VirtualSourceError, match="gone.h5"):
        hl.from_file(tmp_path / "v.h5", "v")
        fence()


def test_an_error_inside_a_task_can_be_deferred_to_the_fence(tmp_path):
    layout = h5py.VirtualLayout(shape=(100,), dtype="i4")
    layout[:] = h5py.VirtualSource(str(tmp_path / "gone.h5"), "d", shape=(100,))
    with h5py.File(tmp_path / "v.h5", "w") as f:
        f.create_virtual_dataset("v", layout, fillvalue=-1)
    with pytest.raises(h5tile.VirtualSourceError, match="gone.h5"):
        with Scope(exception_mode=ExceptionMode.DEFERRED):
            hl.from_file(tmp_path / "v.h5", "v")  # returns at once
        fence()


def test_relative_paths_are_taken_at_the_call(tmp_path, monkeypatch):
    data = np.arange(1000, dtype=np.int64)
    write_h5py(tmp_path / "a.h5", "d", data)
    monkeypatch.chdir(tmp_path)
    array = hl.from_file("a.h5", "d")
    monkeypatch.chdir(os.path.dirname(tmp_path))
    assert np.array_equal(host(array), data)


def legate_store(data: np.ndarray):
    return get_legate_runtime().create_store_from_buffer(Type.from_numpy_dtype(data.dtype), data.shape, data,
                                                         read_only=True)


def test_to_file_into_an_s3_prefix(seaweedfs_server, bucket, monkeypatch, tmp_path):
    """The point tasks each upload their tile as an object under the target's prefix; the
    virtual dataset's object comes last (h5tile's virtual layout into S3, docs/REMOTE.md)."""
    for name, value in seaweedfs_server.aws_env().items():
        monkeypatch.setenv(name, value)
    data = random_array("float64", SHAPE, seed=41)
    url = f"s3://{bucket}/legate/w.h5"
    hl.to_file(legate_store(data), url, "/d")
    listing = seaweedfs_server.client().list_objects_v2(Bucket=bucket).get("Contents", [])
    stored = sorted(o["Key"] for o in listing)
    assert stored[0] == "legate/w.h5" and len(stored) == 1 + TILES, stored
    assert all(k.startswith("legate/w.h5.tiles/d/") for k in stored[1:]), stored
    assert same_bytes(h5tile.from_file(url, "/d"), data)
    assert list(tmp_path.iterdir()) == []  # no local path made of the URL


@pytest.mark.parametrize("where", ["local", "s3"])
def test_to_file_contiguous_writes_one_self_contained_file(seaweedfs_server, bucket, monkeypatch, tmp_path, where):
    """layout="contiguous": every point task writes its rows into one file, or into its parts of one
    object's upload (the tasks are threads of one process: they share it), completed once; h5py
    reads it (a copy of the object) and finds no virtual dataset."""
    for name, value in seaweedfs_server.aws_env().items():
        monkeypatch.setenv(name, value)
    data = random_array("float32", SHAPE, seed=43)
    target = tmp_path / "c.h5" if where == "local" else f"s3://{bucket}/legate/c.h5"
    hl.to_file(legate_store(data), target, "/d", layout="contiguous")
    fence()
    local = target
    if where == "s3":
        client = seaweedfs_server.client()
        assert [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])] == ["legate/c.h5"]
        assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
        local = tmp_path / "copy.h5"
        client.download_file(bucket, "legate/c.h5", str(local))
    with h5py.File(local, "r") as f:
        assert not f["d"].is_virtual and f["d"].chunks is None
        assert same_bytes(f["d"][()], data)
    assert same_bytes(h5tile.from_file(target, "/d"), data)
    with pytest.raises(ValueError, match="layout"):
        hl.to_file(legate_store(data), tmp_path / "x.h5", "/d", layout="chunked")


@pytest.mark.parametrize("dtype", LEGATE_DTYPES)
def test_to_file_writes_every_dtype_as_h5py_reads_it(tmp_path, dtype):
    data = random_array(dtype, SHAPE, seed=10 + len(dtype))
    hl.to_file(legate_store(data), tmp_path / "w.h5", "/d")
    fence()
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert f["d"].is_virtual and len(f["d"].virtual_sources()) == TILES  # one tile per processor
        assert all(not os.path.isabs(s.file_name) for s in f["d"].virtual_sources())
        assert same_bytes(f["d"][()], data)


@pytest.mark.parametrize("shape", [(1,), (2, 3), (64, 3, 5), (3, 4, 5, 6)])
def test_to_file_shapes_of_every_rank_round_trip(tmp_path, shape):
    data = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    hl.to_file(legate_store(data), tmp_path / "w.h5", "group/d")
    fence()
    assert np.array_equal(host(hl.from_file(tmp_path / "w.h5", "/group/d")), data)
    assert np.array_equal(read_h5py(tmp_path / "w.h5", "group/d"), data)


def test_what_to_file_wrote_is_read_by_legate_io_hdf5_and_checks_out(tmp_path):
    data = random_array("float32", SHAPE, seed=11)
    hl.to_file(LogicalArray.from_store(legate_store(data)), tmp_path / "w.h5", "/d")
    fence()
    assert same_bytes(host(lh.from_file(tmp_path / "w.h5", "/d")), data)
    assert same_bytes(h5tile.from_file(tmp_path / "w.h5", "/d", verify_checksums=True), data)
    assert h5tile.describe(tmp_path / "w.h5", "/d")["virtual_sources"] == TILES


def test_to_file_writes_a_cupynumeric_array(tmp_path):
    cn = pytest.importorskip("cupynumeric")
    array = cn.arange(3000, dtype=np.int32).reshape(600, 5) * 3
    hl.to_file(array, tmp_path / "c.h5", "/c")
    fence()
    assert np.array_equal(read_h5py(tmp_path / "c.h5", "c"), np.arange(3000, dtype=np.int32).reshape(600, 5) * 3)


@pytest.mark.parametrize("view", ["rows", "columns"])
def test_to_file_writes_a_broadcast_cupynumeric_array(tmp_path, view):
    """A view broadcast along the first axis is not split by Legate: every task gets all of it. Each
    writes its own rows (the tasks took the offset for their rank, so all were rank 0, and the write
    failed with std::bad_cast)."""
    cn = pytest.importorskip("cupynumeric")
    row, column = np.arange(5, dtype=np.int32), np.arange(601, dtype=np.int32)[:, None]
    expected = np.broadcast_to(row if view == "rows" else column, (601, 5))
    array = cn.broadcast_to(cn.asarray(row) if view == "rows" else cn.asarray(column), (601, 5))
    hl.to_file(array, tmp_path / "b.h5", "/b")
    fence()
    assert np.array_equal(read_h5py(tmp_path / "b.h5", "b"), expected)
    assert h5tile.describe(tmp_path / "b.h5", "/b")["virtual_sources"] == TILES


def test_to_file_then_from_file_in_one_program_is_ordered_by_legate(tmp_path):
    data = random_array("uint16", SHAPE, seed=12)
    hl.to_file(legate_store(data), tmp_path / "w.h5", "/d")
    fence()
    data2 = data[::-1].copy()
    hl.to_file(legate_store(data2), tmp_path / "w.h5", "/d")  # overwrites
    fence()
    assert same_bytes(host(hl.from_file(tmp_path / "w.h5", "/d")), data2)


def test_to_file_refuses_a_directory_like_legate_io_hdf5(tmp_path):
    data = np.ones((10, 2))
    raises_like_legate(lambda: hl.to_file(legate_store(data), tmp_path, "/d"),
                       lambda: lh.to_file(legate_store(data), tmp_path, "/d"), h5tile.IsADirectoryPathError,
                       "directory")


def test_an_interrupted_write_leaves_the_old_file_intact(tmp_path):
    old = np.arange(50, dtype=np.float64)
    write_h5py(tmp_path / "w.h5", "d", old)
    (tmp_path / "w.h5.tiles").write_text("a file where the tile folder should be")  # every tile write fails
    with pytest.raises(h5tile.Error):
        hl.to_file(legate_store(random_array("float64", SHAPE, seed=13)), tmp_path / "w.h5", "/d")
        fence()
    assert np.array_equal(read_h5py(tmp_path / "w.h5", "d"), old)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.h5", "w.h5.tiles"]


def test_a_task_that_fails_before_the_write_fails_the_others_at_once(tmp_path, monkeypatch):
    # The tasks of a write meet in h5tile's collective write: one that fails before it (here, its
    # tile's memory) must not leave the others waiting for it (they gave up after 600 s).
    if TILES < 2:
        pytest.skip("needs two point tasks")
    real = hl._tile_memory

    def failing(ctx, store, *rest):
        if int(ctx.task_index[0]) == TILES - 1:
            raise h5tile.OperationError("no memory for this tile")
        return real(ctx, store, *rest)

    monkeypatch.setattr(hl, "_tile_memory", failing)
    data = random_array("int32", SHAPE, seed=4)
    started = time.monotonic()
    with pytest.raises(h5tile.Error, match="no memory for this tile"):
        hl.to_file(legate_store(data), tmp_path / "f.h5", "/d")
        fence()
    assert time.monotonic() - started < 60
    assert not (tmp_path / "f.h5").exists() and not (tmp_path / "f.h5.tiles").exists()


@pytest.mark.parametrize("deferred", [False, True], ids=["errors-at-the-call", "errors-deferred"])
def test_no_garbage_collection_starts_inside_the_point_tasks(tmp_path, deferred):
    """A collection that starts inside a point task (at any allocation there) and frees a Legate
    store made outside it aborts the process. With the collector set to start at every
    allocation, none starts on another thread than the program's while h5tile.legate's tasks
    write, read and read in batches; also where a Scope defers the tasks' errors to a fence
    (the calls then return before their tasks run)."""
    main = threading.get_ident()
    elsewhere = []

    def on_collection(phase, info):
        if phase == "start" and threading.get_ident() != main:
            elsewhere.append(threading.current_thread().name)

    data = random_array("float64", SHAPE, seed=21)
    write_h5py(tmp_path / "r.h5", "d", data)
    before = gc.get_threshold()
    gc.callbacks.append(on_collection)
    gc.set_threshold(1, 1, 1)
    try:
        with Scope(exception_mode=ExceptionMode.DEFERRED) if deferred else contextlib.nullcontext():
            hl.to_file(legate_store(data), tmp_path / "w.h5", "/d")
            read = hl.from_file(tmp_path / "r.h5", "/d")
            batches = list(hl.from_file_batched(tmp_path / "r.h5", "/d", (100, 7)))
            garbage = [[]]
            garbage[0].append(garbage)  # a cycle for a collection to find meanwhile
            del garbage
        fence()
        batches = [(host(b), offset) for b, offset in batches]
    finally:
        gc.set_threshold(*before)
        gc.callbacks.remove(on_collection)
    assert elsewhere == []
    assert same_bytes(read_h5py(tmp_path / "w.h5", "d"), data)
    assert same_bytes(host(read), data)
    assert same_bytes(np.concatenate([b for b, _ in batches]), data)


def test_h5tile_to_file_writes_cupynumeric_through_the_tasks(tmp_path):
    cn = pytest.importorskip("cupynumeric")
    expected = np.arange(4000, dtype=np.float64).reshape(800, 5) / 7
    array = cn.arange(4000, dtype=np.float64).reshape(800, 5) / 7
    h5tile.to_file(array, tmp_path / "t.h5", "/t", ranks=3).wait()
    assert h5tile.describe(tmp_path / "t.h5", "/t")["virtual_sources"] == TILES  # one per task, not ranks=3
    assert same_bytes(read_h5py(tmp_path / "t.h5", "t"), expected)
    # Options the tasks do not offer take the single-process path, as before.
    h5tile.to_file(array, tmp_path / "c.h5", "/t", layout="contiguous").wait()
    assert same_bytes(read_h5py(tmp_path / "c.h5", "t"), expected)


# --- URLs: read as h5tile.from_file reads them; writes refused at once ---------------------------

def test_reads_an_http_url_as_h5py_reads_the_file_locally(nginx_server):
    data = random_array("float32", SHAPE, seed=21)
    path = nginx_server.root / "r.h5"
    write_h5py(path, "g/d", data, chunks=(32, 7), compression="gzip", shuffle=True)
    url = f"{nginx_server.url}/r.h5?token=SECRET"
    assert same_bytes(host(hl.from_file(url, "/g/d")), read_h5py(path, "g/d"))
    batches = list(hl.from_file_batched(url, "/g/d", (100, 7)))
    assert [offset for _, offset in batches] == [(0, 0), (100, 0), (200, 0), (300, 0)]
    assert same_bytes(np.concatenate([host(b) for b, _ in batches]), data)
    with pytest.raises(h5tile.DatasetNotFoundError) as e:  # the URL in messages, without its query
        hl.from_file(url, "/missing")
    assert f"{nginx_server.url}/r.h5" in str(e.value) and "SECRET" not in str(e.value)


def test_to_file_to_a_url_fails_at_once_and_writes_nothing(tmp_path, monkeypatch, nginx_server):
    here = tmp_path / "cwd"  # where abspath would have made the URL the local path 'http:/127.0.0.1:.../w.h5'
    here.mkdir()
    monkeypatch.chdir(here)
    with pytest.raises(h5tile.InvalidArgumentError, match="remote writes are not supported") as e:
        hl.to_file(legate_store(np.ones((10, 2))), f"{nginx_server.url}/w.h5?token=SECRET", "/d")
    assert "SECRET" not in str(e.value)
    # s3:// is written (test_to_file_into_an_s3_prefix); without credentials, refused at once.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE",
                 "AWS_CONFIG_FILE", "AWS_NO_SIGN_REQUEST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(h5tile.InvalidArgumentError, match="no AWS credentials"):
        hl.to_file(legate_store(np.ones((10, 2))), "s3://bucket/w.h5", "/d")
    assert list(here.iterdir()) == [] and list(nginx_server.root.iterdir()) == []
    assert not any(" PUT " in line or " POST " in line for line in nginx_server.requests())
