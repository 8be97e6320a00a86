"""legate.io.hdf5's ``to_file``, ``from_file`` and ``from_file_batched``, with every Legate point
task reading or writing its own tile through h5tile's engine. A Legate or cuPyNumeric program
changes one import::

    from h5tile.legate import to_file, from_file, from_file_batched   # was: legate.io.hdf5
    a = from_file("data.h5", "/u")                  # a LogicalArray; cupynumeric.asarray(a) wraps it
    to_file(cupynumeric_array, "out.h5", "/v")      # each task writes its tile; nothing gathered
    get_legate_runtime().issue_execution_fence(block=True)

Arrays are split into tiles along their first axis, one per processor (GPU where Legate has
GPUs, else CPU), each tile a whole number of the file's chunks where the file is chunked. A
point task gets its tile's memory (its physical store: host memory in the CPU variant, the
GPU's framebuffer in the GPU variant) and reads into it with h5tile's ``read_into`` at the
tile's offset, or writes it as one rank of h5tile's collective ``write_tile`` (h5tile's
virtual layout: relative sources, checksums, the commit once every tile is on disk). The GPU
variant moves the bytes between the file and the framebuffer through h5tile's device path
(GPUDirect Storage where it works, else its bounded pinned staging), with no ZCMEM staging
and no size limit beyond the framebuffer; it views the framebuffer through CuPy.

Errors: the checks that legate.io.hdf5 makes at the call (a missing file, dataset or group, a
dtype it cannot hold, a bad ``chunk_size``, a directory as the path) are made at the call here
too, with h5tile's error types, each of which is also the built-in exception that
legate.io.hdf5 raises for it (ValueError for a missing dataset, a group, a bad chunk_size or a
directory to write; RuntimeError for a missing file or a path that is not an HDF5 file).
Errors in the tasks (a tile that cannot be read or written) are raised by Legate as the task's
h5tile error: at the call by default, which makes the call wait for its tasks, or at a later
fence inside ``Scope(exception_mode=ExceptionMode.DEFERRED)``. Unlike legate.io.hdf5, complex
datasets are read, and writes are synced to disk (``sync=False`` skips that).

Python's garbage collector is paused while the point tasks of a call run (a collection started
inside a task that frees a Legate store dropped outside it makes Legion abort the process), so
every call returns once its tasks have run, also inside a Scope that defers errors (its errors
still come where the Scope raises them). Not covered: a ``gc.enable()`` that another thread
makes meanwhile.
"""
from __future__ import annotations

import contextlib
import gc
import itertools
import os
import threading
from typing import Any, Iterator, Sequence, Tuple

import numpy as np
from legate.core import (ExceptionMode, LogicalArray, LogicalStore, Scope, TaskContext, TaskTarget, Type, VariantCode,
                         get_legate_runtime, get_machine)
from legate.core import types as ty
from legate.core.data_interface import as_logical_array
from legate.core.task import InputStore, OutputStore, task

from h5tile import _arguments as _args
from h5tile import _functions
from h5tile import _h5tile

__all__ = ["to_file", "from_file", "from_file_batched"]


class NoSuchFileError(_h5tile.NoSuchFileError, RuntimeError):
    """The file does not exist (a FileNotFoundError, and a RuntimeError as legate.io.hdf5 raises)."""


class DirectoryReadError(_h5tile.IsADirectoryPathError, RuntimeError):
    """A directory given as the file to read (an IsADirectoryError, and a RuntimeError as
    legate.io.hdf5 raises for a path that is not an HDF5 file)."""


class UnsupportedTypeError(_h5tile.UnsupportedTypeError, ValueError):
    """A dtype that a Legate store cannot hold (legate.io.hdf5 raises ValueError here)."""


def _as_bytes(interface: dict, opaque: int) -> dict:
    """An array interface of elements of ``opaque`` bytes (a struct or binary type: ``|V16``,
    ``|S5``, which CuPy cannot wrap and h5tile takes as bytes) as one of uint8 with one more
    axis of that length: how h5tile takes opaque elements."""
    interface = dict(interface)
    interface["shape"] = tuple(interface["shape"]) + (opaque,)
    interface["typestr"] = "|u1"
    interface.pop("descr", None)
    if interface.get("strides") is not None:
        interface["strides"] = tuple(interface["strides"]) + (1,)
    return interface


def _tile_memory(ctx: TaskContext, store, opaque: int = 0):
    """The memory of a point task's store as an array h5tile takes without a copy: NumPy over
    host memory in the CPU variant, CuPy over the framebuffer (``__cuda_array_interface__``) in
    the GPU variant, with the task's stream ordering it after the tasks that wrote the store.
    Through the array interfaces, not DLPack: Legate 26.6 exports float16 stores over DLPack with
    the bfloat type code, which NumPy, CuPy and h5tile rightly refuse. Elements of an opaque
    type (``opaque`` bytes each) come as uint8 with one more axis of that length."""
    if ctx.get_variant_kind() != VariantCode.GPU:
        if opaque:
            return np.asarray(_Interface(_as_bytes(store.__array_interface__, opaque), "__array_interface__", store))
        return np.asarray(store)
    try:
        import cupy
    except ImportError:
        raise _h5tile.UnsupportedTypeError("h5tile.legate's GPU tasks view the framebuffer through CuPy, which is not "
                                          "installed (pip install cupy-cuda13x)") from None
    interface = dict(store.__cuda_array_interface__)
    stream = ctx.task_stream
    if stream:
        # The data is ready on the task's stream; h5tile's copies run on its own streams, so
        # wait for the task's stream first (a no-op where Legate already synchronised it).
        cupy.cuda.runtime.streamSynchronize(stream)
    interface.pop("stream", None)
    if opaque:
        interface = _as_bytes(interface, opaque)
    return cupy.asarray(_Interface(interface, "__cuda_array_interface__", store))


class _Interface:
    """An array interface holder for NumPy or CuPy to wrap (without a stream to synchronise),
    keeping the store whose memory it describes alive."""

    def __init__(self, interface: dict, name: str, owner: Any):
        self._owner = owner
        setattr(self, name, interface)


def _threads_per_task(ctx: TaskContext) -> int:
    """Worker threads for one point task's I/O. A CPU task uses one: Legate runs a task on each
    of its CPU processors, and more threads per task only compete with them (2 per task on 2
    cores measured no faster, often slower). A GPU task is fed by its node's cores, shared
    among the node's GPUs: 0 lets h5tile choose (one per core) where there is one GPU."""
    if ctx.get_variant_kind() != VariantCode.GPU:
        return 1
    gpus = max(1, get_machine().count(TaskTarget.GPU))
    return 0 if gpus == 1 else max(1, (os.cpu_count() or 1) // gpus)


@task(variants=(VariantCode.CPU, VariantCode.GPU))
def _read_tile(ctx: TaskContext, out: OutputStore, path: str, dataset: str, base: tuple[int, ...],
               scalar: bool) -> None:
    """One point task: reads the dataset's region under this task's tile into the tile's memory
    (the physical store, viewed without a copy: host memory, or the GPU's framebuffer). ``base``
    is where the whole store lies in the dataset (a batch's offset). A scalar dataset is held
    in a store of shape (1,), as legate.io.hdf5 holds it."""
    tile = _tile_memory(ctx, out)
    if scalar:
        _h5tile.read_into(tile.reshape(()), path, dataset, "", [], 0)
        return
    offset = [b + int(lo) for b, lo in zip(base, out.domain.lo)]
    _h5tile.read_into(tile, path, dataset, "", offset, _threads_per_task(ctx))


def _processors() -> int:
    """The processors Legate runs the point tasks on: its GPUs where it has any, else its CPUs."""
    machine = get_machine()
    return max(1, machine.count(TaskTarget.GPU) or machine.count(TaskTarget.CPU))


def tile_rows(shape: Sequence[int], chunk: Sequence[int] | None, parts: int) -> int:
    """Rows (first-axis length) of each tile when ``shape`` is split into at most ``parts``
    tiles along its first axis, each a whole number of ``chunk``'s first length (the last tile
    may be shorter), so that no chunk of the file is read by two tasks."""
    rows = int(shape[0])
    step = int(chunk[0]) if chunk else 1
    chunks = -(-rows // step)
    per_tile = -(-chunks // max(1, parts))
    return max(1, per_tile * step)


def _legate_type(dtype: np.dtype, path: str, dataset_name: str) -> Type:
    if dtype.kind == "V":
        raise UnsupportedTypeError(_args.without_secrets(f"dataset '{dataset_name}' in '{_args.redacted(path)}' "
                                                         f"has opaque dtype {dtype}, which a Legate store cannot "
                                                         "hold"))
    if dtype.kind in "SO":
        raise UnsupportedTypeError(_args.without_secrets(f"dataset '{dataset_name}' in '{_args.redacted(path)}' "
                                                         f"holds strings ({dtype}), which a Legate store cannot "
                                                         "hold: read them with h5tile.from_file"))
    return Type.from_numpy_dtype(dtype)


def _describe(path: str, dataset_name: str) -> dict:
    try:
        return _functions.describe(path, dataset_name)
    except _h5tile.NoSuchFileError as e:
        raise NoSuchFileError(*e.args) from None
    except _h5tile.IsADirectoryPathError as e:
        raise DirectoryReadError(*e.args) from None
    except _h5tile.UnsupportedTypeError as e:
        raise UnsupportedTypeError(*e.args) from None


_paused_lock = threading.Lock()
_paused = [0, False]  # launches in execute() now, and whether the collector ran before the first


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector does not start while the point tasks of a launch run.
    A collection starts at any allocation, on whichever thread makes it: inside a point task
    (on a thread Legate runs it on) it may free a Legate store that the program dropped outside
    the task (cyclic garbage: an exception kept with its traceback, for one), and Legate aborts
    the process there. The collector is off while a launch's tasks run (see :func:`_execute`),
    and back on, if it was, after the last launch in flight; the garbage is collected later on
    the program's thread."""
    with _paused_lock:
        if _paused[0] == 0:
            _paused[1] = gc.isenabled()
            gc.disable()
        _paused[0] += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused[0] -= 1
            if _paused[0] == 0 and _paused[1]:
                gc.enable()


def _execute(launch) -> None:
    """Runs a launch with the collector paused until its point tasks have run. Legate runs them
    inside ``execute()`` where their errors are raised at the call (the default). Where a Scope
    defers (or ignores) the errors, ``execute()`` returns before the tasks run, so a blocking
    fence then waits for them: the call returns once its tasks are done, as by default, and the
    deferred errors still come where the Scope raises them (a fence does not)."""
    with _collector_paused():
        launch.execute()
        if Scope.exception_mode() != ExceptionMode.IMMEDIATE:
            get_legate_runtime().issue_execution_fence(block=True)


def _read(store: LogicalStore, path: str, dataset_name: str, base: Sequence[int], chunk, scalar: bool = False) -> None:
    """Launches the point tasks that read ``store`` from the dataset's region at ``base``, one
    tile per processor (GPU, else CPU). An error in a task (a tile that cannot be read) is
    raised by Legate as the task's h5tile error: at once by default, which makes the launch
    wait for the reads, or at a later fence in a Scope with
    ``exception_mode=ExceptionMode.DEFERRED``."""
    shape = tuple(store.shape)
    if 0 in shape:
        return
    rows = 1 if scalar else tile_rows(shape, chunk, _processors())
    partition = store.partition_by_tiling((rows,) + shape[1:])
    runtime = get_legate_runtime()
    launch = runtime.create_manual_task(_read_tile.library, _read_tile.task_id, partition.color_shape)
    launch.add_output(partition)
    launch.add_scalar_arg(path, ty.string_type)
    launch.add_scalar_arg(dataset_name, ty.string_type)
    launch.add_scalar_arg(tuple(int(b) for b in base) or (0,), (ty.int64,))
    launch.add_scalar_arg(scalar, ty.bool_)
    launch.throws_exception(_h5tile.Error)
    _execute(launch)


def from_file(path: "os.PathLike[str] | str", dataset_name: str) -> LogicalArray:
    """Read a dataset into a new LogicalArray, each point task (one per GPU, else per CPU) its own tile.

    Args:
        path: the HDF5 file (relative paths are taken from the current folder at this call).
        dataset_name: full path of the dataset in the file ("/data", "group/x").

    Returns:
        A LogicalArray of the dataset's shape (a scalar dataset: shape (1,), as legate.io.hdf5
        returns it) and dtype. Because the tasks declare their errors, Legate makes the call
        wait for them (measured: the launch alone takes ~0 ms without that declaration, the
        whole read with it); later tasks on the array are ordered after the reads.

    Raises:
        NoSuchFileError (a FileNotFoundError, also RuntimeError), NotHdf5FileError (RuntimeError),
        DatasetNotFoundError / NotADatasetError (ValueError), UnsupportedTypeError (also ValueError).
    """
    path = _args.absolute(_args.path("path", path))
    dataset_name = _args.dataset_name(dataset_name)
    info = _describe(path, dataset_name)
    dtype = np.dtype(info["dtype"])
    shape = tuple(info["shape"])
    # A scalar dataset becomes a store of shape (1,), as legate.io.hdf5 returns it.
    store = get_legate_runtime().create_store(_legate_type(dtype, path, dataset_name), shape=shape or (1,))
    _read(store, path, dataset_name, (0,) * len(shape), info["chunk"], scalar=not shape)
    return LogicalArray.from_store(store)


def batch_offsets(shape: Sequence[int], chunk_size: Sequence[int]) -> Iterator[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
    """(offset, extent) of every batch, low to high in row-major order, clipped at the edges."""
    ranges = [range(0, int(n), int(c)) for n, c in zip(shape, chunk_size)]
    for offset in itertools.product(*ranges):
        yield offset, tuple(min(int(c), int(n) - o) for o, n, c in zip(offset, shape, chunk_size))


def from_file_batched(path: "os.PathLike[str] | str", dataset_name: str,
                      chunk_size: Sequence[int]) -> Iterator[Tuple[LogicalArray, Tuple[int, ...]]]:
    """Iterate over a dataset in batches of at most ``chunk_size``: yields ``(array, offsets)``,
    low to high in row-major order, batches at the edges clipped (a length-5 axis with a chunk
    of 2 gives 2, 2, 1). Each batch is a new LogicalArray read by point tasks, like
    :func:`from_file` (and, like it, read by the time it is yielded).

    Raises ValueError (h5tile.InvalidArgumentError) at the call, not at the first batch, for a
    ``chunk_size`` with an element <= 0 or of another length than the dataset has axes; and the
    errors of :func:`from_file`.
    """
    path = _args.absolute(_args.path("path", path))
    dataset_name = _args.dataset_name(dataset_name)
    if isinstance(chunk_size, (str, bytes)) or not hasattr(chunk_size, "__iter__"):
        raise _h5tile.ArgumentTypeError(_args.without_secrets(f"Invalid chunk size ({chunk_size!r}): chunk_size "
                                                             "must be a sequence of integers >0"))
    chunk = list(chunk_size)
    if any(not _args.is_integer(c) for c in chunk):
        raise _h5tile.ArgumentTypeError(_args.without_secrets(f"Invalid chunk size ({tuple(chunk)}): chunk_size "
                                                             "must be a sequence of integers >0"))
    if any(c <= 0 or c > _args.UINT64_MAX for c in chunk):
        raise _h5tile.InvalidArgumentError(_args.without_secrets(f"Invalid chunk size ({tuple(chunk_size)}), must "
                                                                "be >0"))
    info = _describe(path, dataset_name)
    shape = tuple(info["shape"])
    if len(shape) != len(chunk):
        raise _h5tile.InvalidArgumentError(_args.without_secrets(f"Dimensions of chunks ({len(chunk)}) must match "
                                                                f"dimension of dataset ({len(shape)}): dataset "
                                                                f"'{dataset_name}' in '{_args.redacted(path)}' has "
                                                                f"shape {shape}"))
    legate_type = _legate_type(np.dtype(info["dtype"]), path, dataset_name)
    return _batches(path, dataset_name, shape, chunk, legate_type, info["chunk"])


def _batches(path, dataset_name, shape, chunk, legate_type, file_chunk):
    runtime = get_legate_runtime()
    for offset, extent in batch_offsets(shape, chunk):
        store = runtime.create_store(legate_type, shape=extent)
        _read(store, path, dataset_name, offset, file_chunk)
        yield LogicalArray.from_store(store), offset


class _TaskGroup:
    """The point tasks of one write, as ranks of a communicator with mpi4py's interface
    (Get_rank, Get_size, allgather, bcast), which h5tile's collective write_tile takes. The
    tasks run at the same time (a concurrent launch) on threads of this process; a collective
    waits, without the GIL, until every rank has brought its part."""

    _lock = threading.Lock()
    _groups: dict = {}
    _next_id = 0
    TIMEOUT_S = 600.0  # a rank that never comes (tasks not run together) fails instead of hanging

    def __init__(self, size: int):
        self.size = size
        self.condition = threading.Condition()
        self.rounds: dict = {}  # round -> [parts, number of ranks that have taken the result]
        self.finished = 0
        self.failure = None  # (rank, what): a task that failed before it could join the write

    def fail(self, rank: int, error: BaseException) -> None:
        """A task that cannot join the write (it failed before): the others stop waiting for it
        and fail too, at once instead of after TIMEOUT_S."""
        with self.condition:
            if self.failure is None:
                self.failure = (rank, _args.without_secrets(f"{type(error).__name__}: {error}"))
            self.condition.notify_all()

    @classmethod
    def open(cls, size: int) -> int:
        with cls._lock:
            cls._next_id += 1
            cls._groups[cls._next_id] = cls(size)
            return cls._next_id

    @classmethod
    def member(cls, group_id: int, rank: int) -> "_Rank":
        with cls._lock:
            return _Rank(cls._groups[group_id], group_id, rank)

    @classmethod
    def leave(cls, group: "_TaskGroup", group_id: int) -> None:
        with cls._lock:
            group.finished += 1
            if group.finished == group.size:
                del cls._groups[group_id]


class _Rank:
    # The point tasks are threads of this process: ranks that share what one of them made in
    # memory (an object's upload, into which every task writes its rows: docs/REMOTE.md).
    threads_of_one_process = True

    def __init__(self, group: _TaskGroup, group_id: int, rank: int):
        self.group, self.group_id, self.rank, self.round = group, group_id, rank, 0

    def Get_rank(self) -> int:  # noqa: N802  (mpi4py's names)
        return self.rank

    def Get_size(self) -> int:  # noqa: N802
        return self.group.size

    def allgather(self, part):
        group, this = self.group, self.round
        self.round += 1
        with group.condition:
            entry = group.rounds.setdefault(this, [[None] * group.size, 0, 0])
            entry[0][self.rank] = part
            entry[1] += 1
            group.condition.notify_all()
            arrived = group.condition.wait_for(lambda: entry[1] == group.size or group.failure is not None,
                                               timeout=_TaskGroup.TIMEOUT_S)
            if entry[1] != group.size and group.failure is not None:
                failed, what = group.failure
                raise _h5tile.OperationError(_args.without_secrets(f"h5tile.legate.to_file: point task {failed} "
                                                                  f"failed before the write ({what}); nothing was "
                                                                  "written"))
            if not arrived:
                raise _h5tile.OperationError(_args.without_secrets(f"h5tile.legate.to_file: {group.size - entry[1]} "
                                                                  f"of {group.size} point tasks did not reach the "
                                                                  f"write within {_TaskGroup.TIMEOUT_S:.0f} s"))
            parts = list(entry[0])
            entry[2] += 1
            if entry[2] == group.size:
                del group.rounds[this]
        return parts

    def bcast(self, part, root: int = 0):
        return self.allgather(part if self.rank == root else None)[root]


@task(variants=(VariantCode.CPU, VariantCode.GPU))
def _write_tile(ctx: TaskContext, tile: InputStore, path: str, dataset: str, shape: tuple[int, ...], rows: int, group_id: int,
                sync: bool, opaque: int, layout: str) -> None:
    """One point task: writes its tile (``rows`` rows of the array, from the tile's host memory)
    as one rank of h5tile's collective write: its own tile file, and on rank 0, once every
    tile is on disk, the commit of the virtual dataset. The GPU variant writes from the
    framebuffer through h5tile's device path. ``opaque``: the bytes of one element of a struct or
    binary type, written as HDF5's opaque type (0 for a numeric type)."""
    index = int(ctx.task_index[0])  # this task's tile: rows [index * rows, (index + 1) * rows)
    offset = [int(lo) for lo in tile.domain.lo]
    rank = _TaskGroup.member(group_id, index)
    try:
        try:
            memory = _tile_memory(ctx, tile, opaque)
            first = index * rows
            end = min(first + rows, shape[0])
            seen = (offset[0], offset[0] + memory.shape[0])
            if seen != (first, end) and seen[0] <= first and end <= seen[1]:
                # Legate gives every task all of a store that is broadcast along its first axis (a
                # stride of 0, as from broadcast_to): each task writes its own rows of it. (They took
                # the offset for their rank, all were rank 0, and the write failed with std::bad_cast.)
                memory = memory[first - offset[0]:end - offset[0]]
                offset[0] = first
            if ctx.get_variant_kind() == VariantCode.GPU and 0 in memory.strides and memory.size > 1:
                import cupy  # a broadcast view in the framebuffer: one device copy, not a copy per run
                memory = cupy.ascontiguousarray(memory)
        except BaseException as e:
            rank.group.fail(index, e)  # the other tasks wait for this one in the write: they fail too
            raise
        sized = f"V{opaque}" if opaque else ""  # as h5tile takes opaque elements: uint8, one more axis
        _h5tile.write_tile(rank, memory, path, dataset, sized, list(shape), offset, layout, "w", sync, True,
                           [], "none", -1, False, False)
    finally:
        _TaskGroup.leave(rank.group, group_id)


def to_file(array: Any, path: "os.PathLike[str] | str", dataset_name: str, *, sync: bool = True,
            layout: str = "virtual") -> None:
    """Write a Legate array (a LogicalArray, LogicalStore, cuPyNumeric array, or anything with
    ``__legate_data_interface__``) to ``dataset_name`` in ``path``, each point task (GPU or
    CPU) writing its own tile from its own memory: nothing is gathered. The file is h5tile's virtual layout
    (one tile file per task beside it, relative sources, a checksum per tile), committed once
    every tile is on disk; until then an older file at ``path`` stays intact.

    The write is a Legate task launch, ordered after the tasks that produce ``array`` and
    before later ones that change it. Because the tasks declare their errors, Legate makes the
    call wait until the file is complete (as ``issue_execution_fence(block=True)`` would). ``path`` may be relative (to the current folder at this
    call); missing folders are created. An ``s3://bucket/key.h5`` URL takes each task's tile as an
    object of its own under ``<key>.tiles/`` and the virtual dataset's object last
    (docs/REMOTE.md, "Writing to S3"). ``sync`` (h5tile's default; legate.io.hdf5 does not)
    flushes the tiles and the file to stable storage before the new file replaces the old one.
    ``layout="contiguous"`` writes one self-contained file (or ``s3://`` object) instead, each task
    writing its rows into it (into an object: its parts of the one upload, completed by the write).

    Raises:
        IsADirectoryPathError (ValueError) when ``path`` is a folder; InvalidArgumentError
        (ValueError) for a bad dataset name; UnsupportedTypeError for a dtype h5tile cannot write;
        the write's own errors (h5tile.Error) from Legate, as for :func:`from_file`.
    """
    path = _args.path("path", path)
    # Before anything is written; s3:// takes the tiles as objects.
    _args.check_writable_location(path, "h5tile.legate.to_file", objects=True)
    path = _args.absolute(path)
    if not path or path.endswith("/"):  # in the core's words, before a folder is made for the tiles
        raise _h5tile.InvalidArgumentError("the file path is empty") if not path else _h5tile.IsADirectoryPathError(
            _args.without_secrets(f"cannot write '{path}': a name ending in '/' names a folder; give a file name "
                                  f"such as '{path}data.h5'"))
    if os.path.isdir(path):
        raise _h5tile.IsADirectoryPathError(_args.without_secrets(f"'{_args.redacted(path)}' is a directory: "
                                                                 "to_file needs a file path such as "
                                                                 "/path/to/file.h5"))
    # The check that every write makes (the tasks' write_tile makes it again): a name with an
    # empty, '.' or '..' component would lead the tile folder out of '<path>.tiles/'.
    try:
        dataset_name = _h5tile.check_dataset_name(_args.dataset_name(dataset_name))
    except _h5tile.InvalidArgumentError as e:
        raise type(e)(_args.without_secrets(f"cannot write '{_args.redacted(path)}': {e}")) from None
    sync = _args.flag("sync", sync)
    layout = _args.name_in("layout", layout, ("virtual", "contiguous"))
    logical = array if isinstance(array, LogicalArray) else (
        LogicalArray.from_store(array) if isinstance(array, LogicalStore) else as_logical_array(array))
    if logical.nullable or logical.nested:
        raise UnsupportedTypeError("a nullable or nested Legate array: h5tile writes arrays of one plain field")
    store = logical.data
    shape = tuple(int(n) for n in store.shape)
    try:
        dtype = np.dtype(store.type.to_numpy_dtype())
    except Exception:
        raise UnsupportedTypeError(_args.without_secrets(f"Legate type {store.type} has no NumPy dtype for h5tile "
                                                         "to write")) from None
    # A struct type (NumPy: a structured dtype) or a binary one (S<n>): its elements written as
    # bytes, HDF5's opaque type of that size, as to_file writes NumPy's V<n> (h5py reads V<n>).
    opaque = int(store.type.size) if dtype.kind in "VS" else 0
    if len(shape) == 0 or 0 in shape:
        # Nothing to split: written from this process (h5tile keeps such a dataset in the main file).
        data = np.asarray(store.get_physical_store()).copy()
        if opaque:
            data = data.view(np.dtype(f"V{opaque}"))
        _functions.to_file(data, path, dataset_name, sync=sync).wait()
        return
    runtime = get_legate_runtime()
    if runtime.node_count > 1:
        raise _h5tile.InvalidArgumentError("h5tile.legate.to_file runs on one node for now: its point tasks meet in "
                                          "one process")
    rows = tile_rows(shape, None, _processors())
    partition = store.partition_by_tiling((rows,) + shape[1:])
    size = int(np.prod(partition.color_shape))
    if not _h5tile.is_remote(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    launch = runtime.create_manual_task(_write_tile.library, _write_tile.task_id, partition.color_shape)
    launch.add_input(partition)
    launch.add_scalar_arg(path, ty.string_type)
    launch.add_scalar_arg(dataset_name, ty.string_type)
    launch.add_scalar_arg(shape, (ty.int64,))
    launch.add_scalar_arg(rows, ty.int64)
    launch.add_scalar_arg(_TaskGroup.open(size), ty.int64)
    launch.add_scalar_arg(sync, ty.bool_)
    launch.add_scalar_arg(opaque, ty.int64)
    launch.add_scalar_arg(layout, ty.string_type)
    launch.set_concurrent(True)  # every rank of the collective write runs at once
    launch.set_side_effect(True)
    launch.throws_exception(_h5tile.Error)
    _execute(launch)
