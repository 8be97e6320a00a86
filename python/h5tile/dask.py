"""Dask arrays read and written by h5tile::

    import h5tile.dask
    x = h5tile.dask.from_file("data.h5", "/u")          # lazy; blocks aligned to the file's chunks
    m = x.mean().compute()                              # blocks read in parallel, no HDF5 lock
    h5tile.dask.to_file(x * 2, "out.h5", "/v")          # each block its own tile; one commit

:func:`from_file` builds a ``dask.array.Array`` whose blocks are read with :func:`h5tile.read_box`:
a task holds the path, the dataset's name and its box, never an open file, so the graph
pickles and runs on any scheduler (threads, processes, ``dask.distributed``). h5tile reads
without HDF5's global lock: blocks decode in parallel on the threads of one process too.

:func:`to_file` writes every block as one tile of h5tile's virtual layout, in the task of the
worker that holds the block, and commits the virtual dataset once, from the client, with h5tile's
collective write (the one :func:`h5tile.write_tile` and :mod:`h5tile.legate` use): the client is
rank 0 of that write and holds no tile, each block is one more rank. The ranks of that write do
not run at the same time here (a cluster has fewer workers than an array has blocks), so the
messages of the collective travel through the task graph instead of a communicator: the client
runs its rank up to the point where the tiles are written (the checks of every rank's tile, the new
generation of the file), each block task replays those messages and writes its tile, and the
client's rank then takes every block's record of its tile (size, checksum) and commits. Until
that commit the previous file stays as it was; a write that fails (a block's error, a worker
lost) removes what it wrote and raises.
"""
from __future__ import annotations

import concurrent.futures
import errno
import os
import re
import struct
import threading
import time
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

try:
    import dask
    import dask.threaded
    import dask.array as da
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError("h5tile.dask needs Dask: pip install 'h5tile[dask]' (dask[array], distributed)") from e

from h5tile import _arguments as _args
from h5tile import _functions
from h5tile import _via_h5py
from h5tile import _arrays
from h5tile import _h5tile

__all__ = ["from_file", "to_file"]


# --------------------------------------------------------------------------------------------
# Reading


class _Source:
    """What a read task needs: the file, the dataset and how to read it. Dask's ``from_array``
    slices it with one box per block; each slice is one read of an ``h5tile._Reader``, which keeps
    the dataset open between blocks in each process (checked before every read: a file replaced
    or rewritten since is opened again) for as long as this source lives, as a Dask array over an
    h5py dataset keeps its file open. The reader is not pickled: each worker opens its own.

    A local file's version (device, inode, size, modification time in ns) is recorded when the
    array is made and pickled with the source: every block checks, before and after its read, that
    the file is still that version, and raises where it is not (one compute, one version)."""

    def __init__(self, path: str, dataset_name: str, shape: Tuple[int, ...], dtype: np.dtype, device: Optional[int],
                 threads: int, described_dtype: str, version: Optional[Tuple[int, int, int, int]] = None):
        self.path, self.dataset_name, self.shape, self.dtype = path, dataset_name, shape, dtype
        self.described_dtype = described_dtype  # describe()'s name of it, which every open must find
        self.version = version  # the local file's version the array was made from; None for a URL
        self.node = os.uname().nodename  # where it was recorded: device numbers compare there only
        self.device, self.threads = device, threads
        self.ndim = len(shape)
        self._kept = None  # (pid, _h5tile._Reader), made by the first read in a process
        self._open_lock = (os.getpid(), threading.Lock())

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_kept"] = None
        state["_open_lock"] = None
        return state

    def _lock_of_this_process(self) -> threading.Lock:
        """The lock of the open in this process: a lock copied by fork() may be held for good (by a
        thread the child does not have), and an unpickled source has none."""
        owned = getattr(self, "_open_lock", None)  # absent from older pickles
        if owned is None or owned[0] != os.getpid():
            owned = (os.getpid(), threading.Lock())  # two threads racing here: two opens, both correct
            self._open_lock = owned
        return owned[1]

    def _reader(self):
        _via_h5py.settle(self.path)  # a file this process lent to h5py (File.id): its changes first
        kept = self._kept
        if kept is not None and kept[0] == os.getpid():
            return kept[1]
        # One open per process: the first blocks of a graph arrive on every thread at once, and
        # each opening its own would fetch a URL's first block and metadata once per thread.
        with self._lock_of_this_process():
            kept = self._kept
            if kept is None or kept[0] != os.getpid():  # a child of fork() opens its own
                reader = _h5tile._Reader(self.path, self.dataset_name, _args.device(self.device), self.threads)
                # The graph's blocks were cut by this shape: a file replaced since fails the reads.
                described = getattr(self, "described_dtype", None)  # absent from older pickles
                if described is not None:
                    reader.expect(list(self.shape), described)
                kept = (os.getpid(), reader)
                self._kept = kept
        return kept[1]

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        offset, extent = [], []
        for axis, s in enumerate(index):
            start, stop, step = s.indices(self.shape[axis])
            if step != 1:
                raise IndexError("h5tile.dask reads boxes (steps of 1)")
            offset.append(start)
            extent.append(max(0, stop - start))
        # The read opens the file by its path, or reads through an open it keeps only while the
        # path's stat is still the one it opened: where the path is the recorded version before and
        # after the read, the read read that version.
        self._check_version()
        block = self._read(offset, extent)
        self._check_version()
        return block

    def _check_version(self) -> None:
        """Raises IoError (ESTALE) where the local file is no longer the version the array was made
        from (replaced or rewritten since), naming both versions."""
        recorded = getattr(self, "version", None)  # None: a URL; absent from older pickles
        if recorded is None:
            return
        try:
            now = _file_version(self.path)
        except OSError as e:
            now, found = None, f"it cannot be found now ({e.strerror})"
        else:
            found = f"it is now {_version_text(now)}"
        if now is not None and _same_version(now, recorded, os.uname().nodename == getattr(self, "node", None)):
            return
        raise _h5tile.IoError(errno.ESTALE, _args.without_secrets(
            f"cannot read dataset '{self.dataset_name}' of '{_args.redacted(self.path)}' for this Dask array: the "
            f"file changed since the array was made (it was {_version_text(recorded)}; {found}): a compute reads "
            "one version of the file; make the array again (h5tile.dask.from_file) to read it as it is now"))

    def _read(self, offset: list, extent: list):
        """The box read into a new block (NumPy, or CuPy on the source's device)."""
        if self.device is None:
            return self._reader().read_box(offset, extent)
        # Device blocks come from CuPy's memory pool, which the next block reuses, not from memory
        # of the core's own (a cudaMalloc per block, and a cudaFree, which waits for the whole
        # device, when the block dies).
        import cupy
        with cupy.cuda.Device(self.device):
            block = cupy.empty(tuple(extent), self.dtype)
        # The pool may hand back memory that work queued on this stream still reads (the last
        # block's reduction): done first, as h5tile writes it on streams of its own.
        _arrays.queued_work_done(block)
        if block.size:
            self._reader().read_into(block, "", offset)
        return block

    def __repr__(self) -> str:
        return _args.without_secrets(f"h5tile dataset '{self.dataset_name}' in '{_args.redacted(self.path)}'")


def _file_version(path: str) -> Tuple[int, int, int, int]:
    """A local file's version: (device, inode, size, modification time in ns)."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _same_version(a: Tuple[int, ...], b: Tuple[int, ...], same_node: bool) -> bool:
    """Whether two versions of a file are one: the device numbers compare on one machine only (a
    shared file system's differ from machine to machine; its inodes do not)."""
    return tuple(a) == tuple(b) if same_node else tuple(a[1:]) == tuple(b[1:])


def _version_text(version: Tuple[int, int, int, int]) -> str:
    device, inode, size, modified_ns = version
    return f"device {device}, inode {inode}, {size} bytes, modified at {modified_ns} ns"


def _described(path: str, dataset_name: str) -> Tuple[dict, Optional[Tuple[int, int, int, int]]]:
    """The dataset's description and the version of the local file it describes (None for a
    URL): the version before and after describe() is the same (else described again)."""
    if _args.is_url(path):
        return _functions.describe(path, dataset_name), None
    for _ in range(_DESCRIBE_ATTEMPTS):
        try:
            before = _file_version(path)
        except OSError:
            before = None  # describe() says what is wrong
        info = _functions.describe(path, dataset_name)
        after = _file_version(path)
        if before == after:
            return info, after
    raise _h5tile.IoError(errno.ESTALE, _args.without_secrets(
        f"cannot make a Dask array of dataset '{dataset_name}' of '{_args.redacted(path)}': the file changed while "
        f"being described, {_DESCRIBE_ATTEMPTS} times"))


# How many times from_file describes a local file that changes meanwhile before it gives up.
_DESCRIBE_ATTEMPTS = 3


def _virtual_tile_chunks(path: str, dataset_name: str, shape: Tuple[int, ...]):
    """The tiles of a virtual dataset as Dask chunks (each axis cut where a tile starts or
    ends), or None where they cannot be listed (no h5py, a URL, a dataset h5py cannot open)."""
    if "://" in path:
        return None
    try:
        import h5py
        with h5py.File(path, "r") as f:
            cuts = [{0, n} for n in shape]
            for source in f[dataset_name].virtual_sources():
                low, high = source.vspace.get_select_bounds()
                for axis, (lo, hi) in enumerate(zip(low, high)):
                    cuts[axis].update((lo, min(hi + 1, shape[axis])))
    except Exception:  # noqa: BLE001 - only a better default; the read itself reports errors
        return None
    return tuple(tuple(int(b - a) for a, b in zip(sorted(c)[:-1], sorted(c)[1:])) for c in cuts)


def from_file(path_or_url: "os.PathLike[str] | str", dataset_name: str,
              chunks: Union[str, int, Sequence[Any]] = "auto", device: Optional[int] = None, *, threads: int = 1,
              name: Optional[str] = None) -> "dask.array.Array":
    """A dataset as a lazy ``dask.array.Array``, each block read by :func:`h5tile.read_box`.

    Args:
        path_or_url: an HDF5 file, or a URL where h5tile reads URLs (relative paths are taken
            from the current folder at this call).
        dataset_name: full path of the dataset in the file.
        chunks: "auto" (default): blocks that are whole numbers of the file's chunks (a
            chunked dataset; Dask's ``array.chunk-size`` sets their size), the tiles of a
            virtual dataset, Dask's own choice for a contiguous one. Anything else Dask's
            ``chunks`` take (a tuple of lengths per axis, a shape, -1 for a whole axis).
        device: None (host memory, NumPy blocks) or a CUDA device ordinal: blocks are CuPy
            arrays read straight into that device's memory (``meta`` is a CuPy array).
        threads: h5tile's threads per block read (default 1: Dask runs one task per core
            already; 0 lets h5tile use every core for each block).
        name: the Dask name of the array (default: from the file, dataset, chunks and the file's
            version, so that a rewritten file gets a new name).

    Raises at the call what :func:`h5tile.describe` raises (no such file, dataset, a group...);
    blocks raise h5tile's errors where they are computed. A compute reads one version of a local
    file: the file's version (device, inode, size, modification time in ns) is recorded here, and a
    block that finds the file replaced or rewritten since (``to_file`` renames a new file over it)
    raises :class:`h5tile.IoError` (``errno.ESTALE``) naming both versions, never a block of
    another version; make the array again to read the new one. A URL's blocks fail where the
    dataset's shape or dtype changed (other than grown along an unlimited axis), naming both.
    """
    path = _args.absolute(_args.path("path_or_url", path_or_url))
    dataset_name = _args.dataset_name(dataset_name)
    threads = _args.whole("threads", threads)
    info, version = _described(path, dataset_name)
    dtype = np.dtype(info["dtype"])
    shape = tuple(int(n) for n in info["shape"])
    meta = np.empty((0,) * len(shape), dtype)
    if device is not None:
        _args.device(device)
        try:
            import cupy
        except ImportError:
            raise _h5tile.UnsupportedTypeError("h5tile.dask.from_file(device=...) gives CuPy blocks, and CuPy is not "
                                              "installed (pip install cupy-cuda13x)") from None
        if dtype.kind in "VSO":
            raise _h5tile.UnsupportedTypeError(_args.without_secrets(f"dataset '{dataset_name}' in "
                                                                    f"'{_args.redacted(path)}' has dtype {dtype}, "
                                                                    "which CuPy cannot hold: read it with "
                                                                    "device=None"))
        with cupy.cuda.Device(int(device)):
            meta = cupy.empty((0,) * len(shape), dtype)
    if isinstance(chunks, str) and chunks == "auto" and shape:
        if info["layout"] == "virtual":
            tiles = _virtual_tile_chunks(path, dataset_name, shape)
            if tiles is not None:
                chunks = tiles
        elif info.get("chunk"):
            chunks = da.core.normalize_chunks("auto", shape, dtype=dtype if dtype.kind != "O" else np.dtype("V64"),
                                              previous_chunks=tuple(info["chunk"]))
    if dtype.kind == "O" and isinstance(chunks, str):
        chunks = da.core.normalize_chunks(chunks, shape, dtype=np.dtype("V64"))  # Dask cannot size objects
    if name is None:  # a file rewritten since gets another name: Dask reuses no block of the old one
        name = "h5tile-" + dask.base.tokenize(path, dataset_name, chunks, device, version)
    source = _Source(path, dataset_name, shape, dtype, device, threads, info["dtype"], version)
    return da.from_array(source, chunks=chunks, name=name, lock=False, asarray=False, fancy=False, meta=meta)


# --------------------------------------------------------------------------------------------
# Writing


class _Captured(Exception):
    """Stops a rank's write at its first message: how a rank's description is taken."""


class _Describe:
    """A communicator that takes rank ``rank``'s description (the first message of the write,
    every rank's check of its tile) and stops the write there, before anything is created."""

    def __init__(self, rank: int, size: int):
        self.rank, self.size, self.message = rank, size, None

    def Get_rank(self) -> int:  # noqa: N802  (mpi4py's names)
        return self.rank

    def Get_size(self) -> int:  # noqa: N802
        return self.size

    def allgather(self, part):
        self.message = bytes(part)
        raise _Captured()

    def bcast(self, part, root: int = 0):  # pragma: no cover - never reached
        raise _Captured()


_OK = struct.pack("<QQ", 1, 0)  # a root's message that its step succeeded with nothing to say


class _Replay:
    """Rank ``rank`` (a block) of the write, with the messages that the other ranks would send
    it: every rank's description, the client's broadcasts (the new generation; the main file's
    start, empty for the virtual layout), and, after its tile is written, the client's success
    (the client raises where its commit fails). Keeps the record of its tile, for the client."""

    def __init__(self, rank: int, size: int, descriptions, broadcasts):
        self.rank, self.size = rank, size
        self.descriptions, self.broadcasts = descriptions, list(broadcasts)
        self.gathers = 0
        self.record = None

    def Get_rank(self) -> int:  # noqa: N802
        return self.rank

    def Get_size(self) -> int:  # noqa: N802
        return self.size

    def allgather(self, part):
        self.gathers += 1
        if self.gathers == 1:  # the descriptions: agree on the plan
            return list(self.descriptions)
        if self.gathers == 2:  # agreement after the write: this rank's error (if any) is everyone's
            return [bytes(part)] * self.size
        if self.gathers == 3:  # the records of the tiles
            self.record = bytes(part)
            return [bytes(part) if r == self.rank else b"" for r in range(self.size)]
        raise _h5tile.OperationError("h5tile.dask: unexpected message in h5tile's collective write (a version mismatch "
                                    "between h5tile.dask and the extension)")

    def bcast(self, part, root: int = 0):
        if self.broadcasts:
            return self.broadcasts.pop(0)
        return _OK


class _Client:
    """Rank 0 of the write, on the client: holds no tile. Its broadcasts (the generation, the
    main file's start) are kept for the blocks; at the records' gather it runs the blocks'
    tasks (``run(descriptions, broadcasts)`` returns their records, in rank order) and then
    commits."""

    def __init__(self, size: int, descriptions, run):
        self.size, self.descriptions, self.run = size, descriptions, run
        self.broadcasts = []
        self.gathers = 0

    def Get_rank(self) -> int:  # noqa: N802
        return 0

    def Get_size(self) -> int:  # noqa: N802
        return self.size

    def allgather(self, part):
        self.gathers += 1
        if self.gathers == 1:
            return list(self.descriptions)
        if self.gathers == 2:  # this rank wrote nothing; a block's failure comes with the records
            return [bytes(part)] + [b""] * (self.size - 1)
        if self.gathers == 3:
            return [bytes(part)] + list(self.run(self.descriptions, self.broadcasts))
        raise _h5tile.OperationError("h5tile.dask: unexpected message in h5tile's collective write (a version mismatch "
                                    "between h5tile.dask and the extension)")

    def bcast(self, part, root: int = 0):
        self.broadcasts.append(bytes(part))
        return bytes(part)


def _tile(block: Any, dtype: np.dtype):
    """A block as the core takes it, with the name of a sized dtype (V<n>, S<n>) or ""."""
    if dtype.kind in "VS":
        block = np.ascontiguousarray(np.asarray(block))
        return block.view(np.uint8).reshape(block.shape + (dtype.itemsize,)), f"{dtype.kind}{dtype.itemsize}"
    return _arrays.prepare(block, "block")


def _placeholder(shape: Sequence[int], dtype: np.dtype):
    """An array of ``shape`` and ``dtype`` that holds no memory (a broadcast zero): what a rank's
    description needs of its tile."""
    if dtype.kind in "VS":
        item = np.zeros((dtype.itemsize,), np.uint8)  # the bytes of one element: a contiguous last axis
        return np.broadcast_to(item, tuple(shape) + (dtype.itemsize,)), f"{dtype.kind}{dtype.itemsize}"
    return np.broadcast_to(np.zeros((), dtype), tuple(shape)), ""


def _write_block(block, rank: int, size: int, offset, extent, dtype, options, descriptions, broadcasts) -> bytes:
    """A block's task: writes the block as tile ``rank`` of the write and returns its record.
    The block must have the shape and dtype that the Dask array declares for it: the plan that
    every rank agreed on was made from them (a block function that returns another shape or
    dtype would otherwise fill another box of the dataset than the one the file maps)."""
    if getattr(block, "dtype", None) is None or getattr(block, "shape", None) is None:
        block = np.asarray(block)
    got_shape, got = tuple(int(n) for n in block.shape), np.dtype(block.dtype)
    if got_shape != tuple(extent) or got != dtype:
        raise _h5tile.InvalidArgumentError(
            _args.without_secrets(f"h5tile.dask.to_file: the block at {tuple(offset)} of '{options[1]}' in "
                                  f"'{_args.redacted(options[0])}' is {got_shape} {got}, but the Dask array "
                                  f"declares {tuple(extent)} {dtype} for it (a map_blocks function that changes "
                                  "its block's shape or dtype needs chunks= and dtype=)"))
    array, sized = _tile(block, dtype)
    comm = _Replay(rank, size, descriptions, broadcasts)
    path, dataset_name, shape, mode, sync, keep_previous, chunk, filters, layout = options
    _h5tile.write_tile(comm, array, path, dataset_name, sized, list(shape), list(offset), layout, mode, sync,
                       keep_previous, chunk, *filters)
    if comm.record is None:  # pragma: no cover - the write returned without its records' gather
        raise _h5tile.OperationError("h5tile.dask: a block's write ended before its tile's record")
    return comm.record


def _distributed_client(collections) -> Any:
    """The ``dask.distributed`` client that computes ``collections`` by default, or None."""
    client = getattr(dask.base.get_scheduler(collections=collections), "__self__", None)
    try:
        import distributed
    except ImportError:  # pragma: no cover - dask without distributed
        return None
    return client if isinstance(client, distributed.Client) else None


def _write_block_caught(*args):
    """As :func:`_write_block`, returning ``(False, error)`` instead of raising: Dask's local
    schedulers return at the first error while other tasks still run, and no task may still be
    writing when the client removes the write's files."""
    try:
        return True, _write_block(*args)
    except Exception as e:  # noqa: BLE001 - raised again on the client
        return False, e


def _settle(client: Any, futures: list, timeout: float = 60.0) -> None:
    """After a failed write on a distributed cluster: cancels its tasks and waits (at most
    `timeout` seconds) until none of them still runs on a worker, so that no tile is written after
    the write's files are removed. A write task whose result died with its worker is run again by
    the scheduler (its tile then exists, or, after the clean-up, would be written anew); one that
    was running when the error came runs to its end."""
    keys = {f.key for f in futures}
    try:
        client.cancel(futures)
    except Exception:  # pragma: no cover - a client already closing: nothing more to wait for
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            busy = client.processing()
        except Exception:  # pragma: no cover
            return
        if not any(key in keys for running in busy.values() for key in running):
            return
        time.sleep(0.05)


def _write(array, path: str, dataset_name: str, mode: str, sync: bool, keep_previous: bool, chunk, filters,
           layout: str, client: Any = None) -> None:
    """Writes the Dask array ``array`` (every block a tile, the client rank 0) and commits."""
    shape = tuple(int(n) for n in array.shape)
    dtype = np.dtype(array.dtype)
    blocks = array.to_delayed().ravel()
    starts = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64) for c in array.chunks]
    indices = list(np.ndindex(*array.numblocks))
    offsets = [[int(starts[a][i]) for a, i in enumerate(index)] for index in indices]
    extents = [[int(array.chunks[a][i]) for a, i in enumerate(index)] for index in indices]
    size = len(indices) + 1
    options = (path, dataset_name, shape, mode, sync, keep_previous, chunk, filters, layout)

    # Every rank's description, as it would send it: the client's empty tile, then the blocks'.
    descriptions = []
    for rank in range(size):
        offset, extent = ([0] * len(shape), [0] + list(shape[1:])) if rank == 0 else (offsets[rank - 1], extents[rank - 1])
        tile, sized = _placeholder(extent, dtype)
        comm = _Describe(rank, size)
        try:
            _h5tile.write_tile(comm, tile, path, dataset_name, sized, list(shape), offset, layout, mode, sync,
                               keep_previous, chunk, *filters)
        except _Captured:
            pass
        if comm.message is None:  # pragma: no cover - the protocol changed
            raise _h5tile.OperationError("h5tile.dask: h5tile's collective write did not describe its tile")
        descriptions.append(comm.message)

    client = client if client is not None else _distributed_client([array])

    def run(descriptions, broadcasts):
        shared = dask.delayed(tuple(descriptions), pure=True, traverse=False)
        told = dask.delayed(tuple(broadcasts), pure=True, traverse=False)
        write = _write_block if client is not None else _write_block_caught
        tasks = [dask.delayed(write, pure=False)(block, rank + 1, size, offsets[rank], extents[rank], dtype, options,
                                                 shared, told)
                 for rank, block in enumerate(blocks)]
        if client is not None:
            import distributed
            futures = client.compute(tasks)
            try:
                distributed.wait(futures)
                return client.gather(futures)
            except BaseException:
                _settle(client, futures)
                raise
            finally:
                for f in futures:
                    f.release()
        if dask.base.get_scheduler(collections=tasks) is dask.threaded.get:
            # A pool of our own: at a failing task upstream of the writes (the array's own graph),
            # Dask returns at once while the tasks it submitted still run; leaving the `with`
            # waits for them, so that no block is still writing its tile when the files go.
            workers = dask.config.get("num_workers", None) or os.cpu_count() or 1
            with concurrent.futures.ThreadPoolExecutor(workers) as pool:
                results = dask.compute(*tasks, scheduler="threads", pool=pool)
        else:
            results = dask.compute(*tasks)
        for ok, value in results:
            if not ok:
                raise value
        return [value for _, value in results]

    empty, sized = _placeholder([0] + list(shape[1:]), dtype)
    try:
        _h5tile.write_tile(_Client(size, descriptions, run), empty, path, dataset_name, sized, list(shape),
                           [0] * len(shape), layout, mode, sync, keep_previous, chunk, *filters)
    except _h5tile.InvalidArgumentError as e:
        # The core names ranks: say which block each is (the client is rank 0, block k rank k + 1).
        ranks = sorted({int(r) for r in re.findall(r"\branks? (\d+)", str(e)) if 0 < int(r) < size})
        if not ranks:
            raise
        blocks = "; ".join(f"rank {r} is the block at {tuple(offsets[r - 1])}" for r in ranks)
        raise type(e)(_args.without_secrets(f"{e} (h5tile.dask: the client is rank 0; {blocks})")) from None


def to_file(array: Any, path: "os.PathLike[str] | str", dataset_name: str, layout: str = "virtual",
            compute: bool = True, *, mode: str = "w", sync: bool = True, keep_previous: bool = True,
            chunks: Optional[Sequence[int]] = None, compression: Optional[str] = None, level: Optional[int] = None,
            shuffle: bool = False, fletcher32: bool = False) -> "Optional[dask.delayed.Delayed]":
    """Write a Dask array to ``dataset_name`` in ``path``: every block written as its own tile
    by the task (the worker) that computes it, nothing gathered on the client, and the virtual
    dataset committed once by the client when every tile is on disk (h5tile's virtual layout:
    the tiles in ``<path>.tiles/``, relative sources, a checksum per uncompressed tile).

    Crash-safe as every h5tile write: until the commit, an older file at ``path`` stays intact;
    where a block fails or a worker is lost (Dask's ``KilledWorker``, or a retried task's error),
    every block is waited for, the files of this write are removed, and the error is raised.
    A block recomputed after its worker died is written once, by its retry (Dask's
    ``distributed.scheduler.allowed-failures``); but a write task that Dask runs a second time
    (its worker lost while or after it wrote the tile) finds its tile file there, and the write
    raises (h5tile creates tile files exclusively): run it again. (Into ``s3://``, such a task
    uploads its tile object again, with the same bytes, replacing the first.)

    Args:
        array: a ``dask.array.Array`` of a dtype h5tile writes (NumPy or CuPy blocks; CuPy blocks
            are written from device memory, uncompressed).
        path: the HDF5 file, local (or on a file system every worker and the client share);
            missing folders are created. Or an ``s3://bucket/key.h5`` URL: each block's tile an
            object of its own under ``<key>.tiles/``, uploaded by the worker that computed it,
            and the virtual dataset's object last (docs/REMOTE.md, "Writing to S3").
        layout: "virtual" (default). Into an ``s3://`` object also "contiguous" or "chunked"
            (uncompressed): one self-contained object, one upload that the client starts and
            completes, each block's bytes sent as parts of it by the worker that computed the
            block, where its bytes make runs of at least 5 MiB, S3's smallest part (blocks of whole
            rows along the first axis, of 5 MiB or more); blocks of shorter runs give their bytes
            to the client instead, up to 64 MiB in all, and more is refused (docs/REMOTE.md).
            Into a local file they are refused: every block would have to write into one file
            that the client creates, an HDF5 file that the blocks' processes cannot extend
            without HDF5's metadata coordination (parallel HDF5) and whose parts h5tile could
            not check one by one. For one self-contained file, write the virtual layout and run
            :func:`h5tile.consolidate` (a parallel streamed copy), or
            ``h5tile.to_file(array.compute(), ...)`` where the array fits in memory.
        compute: True (default) writes now and returns None; False returns a ``dask.delayed``
            object that writes when computed (the blocks then run on the scheduler that computes
            it, from inside that task; the commit is made where that task runs).
        mode: "w" (default) replaces the file; "a" adds the dataset to it; "x" fails if it exists.
        sync, keep_previous, chunks, compression, level, shuffle, fletcher32: as in
            :func:`h5tile.to_file` (``chunks``: the chunk shape of compressed tile files).

    Raises InvalidArgumentError for another layout, a bad path or dataset name, a non-Dask array;
    UnsupportedTypeError for a dtype h5tile does not write; the write's errors.
    """
    if not isinstance(array, da.Array):
        raise _h5tile.ArgumentTypeError(_args.without_secrets("h5tile.dask.to_file writes a dask.array.Array, not "
                                                             f"{type(array).__name__} (h5tile.to_file writes NumPy "
                                                             "and CuPy arrays)"))
    layout = _args.name_in("layout", layout, _args.LAYOUTS)
    path = _args.path("path", path)
    to_object = isinstance(path, str) and path.lower().startswith("s3://")
    if layout != "virtual" and not to_object:
        raise _h5tile.InvalidArgumentError(
            _args.without_secrets("h5tile.dask.to_file writes layout 'virtual' (each block its own tile file), "
                                  f"not '{layout}': one self-contained file cannot be written by separate worker "
                                  "processes; write 'virtual' and run h5tile.consolidate for one, or "
                                  "h5tile.to_file(array.compute(), ...) where the array fits in memory (into an "
                                  "s3:// object, 'contiguous' and 'chunked' are written by the workers)"))
    if layout == "auto":
        raise _h5tile.InvalidArgumentError(
            _args.without_secrets("h5tile.dask.to_file into an s3:// object takes layout 'virtual', 'contiguous' or "
                                  "'chunked', not 'auto'"))
    # Before abspath, which would make 'http://h/f' local; s3:// takes the tiles as objects.
    _args.check_writable_location(path, "h5tile.dask.to_file", objects=True)
    path = _args.absolute(path)  # an empty name, or one ending in '/', refused by the core's write
    if os.path.isdir(path):
        raise _h5tile.IsADirectoryPathError(_args.without_secrets(f"'{_args.redacted(path)}' is a directory: "
                                                                 "to_file needs a file path such as "
                                                                 "/path/to/file.h5"))
    dataset_name = _args.dataset_name(dataset_name)
    mode = _args.name_in("mode", mode, _args.MODES)
    sync, keep_previous = _args.flag("sync", sync), _args.flag("keep_previous", keep_previous)
    chunk = _args.chunk_list(chunks)
    filters = _args.compression(compression, level, shuffle, fletcher32)
    if layout != "virtual" and (filters[0] != "none" or filters[2] or filters[3]):  # filtered chunks
        raise _h5tile.InvalidArgumentError(
            _args.without_secrets(f"h5tile.dask.to_file: compressed chunks of one {layout} object cannot be written by "
                                  "worker processes (only the client could write them into HDF5's file); write layout "
                                  "'virtual' with compression (each block its own compressed tile object)"))
    compute = _args.flag("compute", compute)
    dtype = np.dtype(array.dtype)
    _arrays.prepare(np.empty((0,), dtype), "array")  # the dtype check of every write, at the call
    if array.ndim == 0 or 0 in array.shape:
        # Nothing to split: the client writes it (h5tile keeps such a dataset in the main file).
        def small(value):
            _functions.to_file(np.asarray(value), path, dataset_name, mode=mode, sync=sync,
                           keep_previous=keep_previous).wait()
        if compute:
            small(array.compute())
            return None
        return dask.delayed(small, pure=False)(array)
    if compute:
        _write(array, path, dataset_name, mode, sync, keep_previous, chunk, filters, layout)
        return None
    return dask.delayed(_write_later, pure=False)(_Later(array), path, dataset_name, mode, sync, keep_previous, chunk,
                                                  filters, layout)


class _Later:
    """An array passed to a delayed task without being computed first (Dask would compute a
    ``dask.array.Array`` argument: the task writes it block by block instead)."""

    def __init__(self, array):
        self.array = array


def _write_later(later: _Later, *args) -> None:
    """The task of ``to_file(compute=False)``: on a ``dask.distributed`` worker, the blocks go to
    the cluster through the worker's client (this task leaves the worker's threads meanwhile)."""
    try:
        from distributed import get_worker, worker_client
        get_worker()
    except (ImportError, ValueError):
        _write(later.array, *args)
        return
    with worker_client() as client:
        _write(later.array, *args, client=client)
