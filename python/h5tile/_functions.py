"""The package's functions: to_file, from_file, from_file_batched, read_box, describe,
consolidate, split, write_tile and read_tile (h5tile's entry file names them; the objects of
h5py's model live in _objects.py, writes in progress in _writes.py)."""
from __future__ import annotations

import os
from typing import Any, Callable, Iterator, Optional, Sequence, Tuple

import numpy as np

from . import _arguments as _args
from ._arrays import is_legate as _is_legate, prepare as _prepare
from . import _dtypes, _h5tile, _via_h5py, _writes
from ._writes import WriteHandle
from ._h5tile import ArgumentTypeError, CancelledError, Error, InvalidArgumentError, UnsupportedTypeError

_whole, _wholes, _chunk_list, _compression = _args.whole, _args.wholes, _args.chunk_list, _args.compression


def to_file(array: Any, path: "os.PathLike[str] | str", dataset_name: str, *, layout: str = "auto",
            mode: str = "w", ranks: int = 0, sync: bool = True, keep_previous: bool = True,
            chunks: "Optional[Sequence[int] | bool]" = None, compression: Optional[str] = None,
            level: Optional[int] = None, shuffle: bool = False, fletcher32: bool = False, comm: Any = None,
            progress: Optional[Callable[[int, int], Optional[bool]]] = None,
            compression_opts: Optional[int] = None, copy: bool = False) -> WriteHandle:
    """Write ``array`` to ``dataset_name`` in ``path``: a new file (mode "w", the default, replaces
    the file and every dataset in it; ``mode="a"`` adds the dataset to the file), tiles in parallel.

    Args:
        array: a NumPy or CuPy array, or any object with DLPack, ``__cuda_array_interface__``,
            ``__array_interface__`` or ``__array__``. Strides are honoured; device arrays are
            written from device memory. Legate and cuPyNumeric arrays are written by Legate's
            point tasks, each its own tile (:func:`h5tile.legate.to_file`, the virtual layout;
            layout "contiguous": each its rows of one file), where the options allow (layout
            "auto", "virtual" or "contiguous", mode "w", no chunks, compression, comm or progress).
        path: the HDF5 file; missing folders are created. Or an ``s3://bucket/key`` URL: one
            self-contained object (layout "auto", "contiguous" or "chunked"; mode "w", "x" or
            "w-"), uploaded in parts as it is written and made visible only when complete; or,
            layout "virtual", one object per tile under ``<key>.tiles/`` and the virtual dataset's
            object last (docs/REMOTE.md, "Writing to S3").
        dataset_name: full path of the dataset ("/data", "/group/x"); missing groups are created.
        layout: "auto" (default): one self-contained file, "contiguous", or "chunked" when
            ``compression`` or ``chunks`` is given; with ``comm`` (separate processes, each writing
            its own tile) "virtual". "contiguous" and "chunked" (one self-contained file, every
            tile written in place by its own thread): copy the ``.h5`` and you have everything.
            "virtual": one file per tile in ``<path>.tiles/`` and a virtual dataset mapping them;
            the ``.tiles/`` folder must travel with the file (h5py reads the fill value, zeros,
            where a tile is missing; ``h5tile verify`` says so).
        chunks: layout "chunked": the chunk shape; None: one chunk per tile (tiles are then
            aligned to chunks), at most 1 GiB each (1 MiB when compressed). True (h5py's
            automatic chunking): that chunk shape, and layout "chunked" where it is "auto". Layout "virtual" with
            compression: the chunk shape of the tile files (each clipped to its tile).
        compression: "gzip" (HDF5's deflate filter, as h5py's), "lzf" (h5py's own filter 32000:
            h5py reads it as it is), "zstd", "lz4" or "blosc" (hdf5plugin's filters 32015, 32004
            and 32001, with the client data hdf5plugin stores: h5py reads them once ``import
            hdf5plugin`` is done; :func:`compressors` lists those this build has), or None. Layouts "chunked" and
            "virtual": each rank compresses its own chunks on its worker threads and writes them
            whole; with ``comm``, every chunk must lie in one rank's tile. h5py reads the files.
        level: the compressor's level (gzip and blosc 0 to 9, zstd -131072 to 22; lz4 has none);
            None: its default (gzip 4, as h5py; zstd 3 and blosc 5, as hdf5plugin).
            ``compression_opts``, h5py's name for it, is accepted too.
        shuffle: HDF5's shuffle filter before the compressor (often smaller files for numbers);
            with blosc, Blosc's own byte shuffle instead.
        fletcher32: HDF5's Fletcher-32 checksum of every chunk, checked by every reader.
        mode: "w" overwrite (default), "a" add or replace the dataset in an existing file, "x" fail
            if the file exists.
        ranks: tiles (worker threads); 0 for the number of cores. Compressed "chunked" (or "auto"):
            the workers that compress the chunks of the one file.
        sync: flush to stable storage before the new file replaces the old one.
        keep_previous: keep the tile folder this write replaces until the next write of the
            file, so that programs which opened the old file before (h5py too) still read it
            whole; False removes it at once (less disk in use between writes).
        comm: an mpi4py communicator: every rank passes its own tile, stacked along the first axis
            in rank order (see :func:`write_tile` for other tilings). Blocks until done.
        progress: called as ``progress(bytes_done, bytes_total)`` from a worker thread (with the
            GIL); return False to cancel (the write then fails with :class:`CancelledError` and the
            previous file stays). Works with tqdm: ``lambda d, t: bar.update(d - bar.n)``.
        copy: snapshot the array when the call is made (a copy in the same kind of memory, made
            before this returns), so that the caller may change or free it at once; off: the
            array is written from where it is, with no copy (the write is asynchronous).

    Returns:
        A :class:`WriteHandle`; ``wait()`` it or call :func:`fence` before other programs read the
        file. Reads by this program are ordered after the write without waiting. Without
        ``copy=True`` the array is not copied: leave it unchanged until then (changes made
        meanwhile may or may not be written).

    Raises:
        IsADirectoryPathError, InvalidArgumentError (ValueError), UnsupportedTypeError (TypeError),
        FileAlreadyExistsError (FileExistsError; mode "x"), and the write's own errors from ``wait()``.
    """
    _via_h5py.reclaim(path)  # a file this process lent to h5py (File.id): taken back first
    path = _args.path("path", path)
    dataset_name = _args.dataset_name(dataset_name)
    level = _args.level_or_opts(level, compression_opts)
    filters = _compression(compression, level, shuffle, fletcher32)
    layout, mode = _args.text("layout", layout, _LAYOUTS), _args.text("mode", mode, _MODES)
    chunks, layout = _args.automatic_chunks(chunks, layout)
    sync, keep_previous = _args.flag("sync", sync), _args.flag("keep_previous", keep_previous)
    progress = _args.progress(progress)
    if (_is_legate(array) and comm is None and layout in ("auto", "virtual", "contiguous") and mode == "w"
            and chunks is None and progress is None and filters[0] == "none" and not shuffle and not fletcher32):
        # Legate and cuPyNumeric arrays: each of Legate's point tasks writes its own tile (or its
        # rows of one contiguous file).
        from . import legate as _legate
        _legate.to_file(array, path, dataset_name, sync=sync,
                        layout="contiguous" if layout == "contiguous" else "virtual")
        return WriteHandle(_writes.CompletedWrite(), None)
    if comm is not None:
        comm = _args.communicator(comm)

        def stacked_shape():
            shape = tuple(int(s) for s in _prepare(array)[0].shape)
            if not shape:
                raise InvalidArgumentError("to_file with comm stacks the ranks' tiles along their first axis, which a "
                                           "0-d array has not (write a scalar from one process, without comm)")
            return shape

        shape = _checked_on_every_rank(comm, stacked_shape)
        rows = comm.allgather(shape[0] if shape else 0)
        first = sum(rows[: comm.Get_rank()])
        write_tile(array, path, dataset_name, comm=comm, offset=(first,) + (0,) * (len(shape) - 1),
                   global_shape=(sum(rows),) + shape[1:], layout=layout, mode=mode, sync=sync,
                   keep_previous=keep_previous, chunks=chunks, compression=compression, level=level,
                   shuffle=shuffle, fletcher32=fletcher32)
        return WriteHandle(_writes.CompletedWrite(), None)  # collective writes return when done
    core, sized = _prepare(array)
    if _args.flag("copy", copy):
        core = _snapshot(core)
    handle = _h5tile.to_file(core, path, dataset_name, sized, layout, mode, _whole("ranks", ranks), sync,
                             keep_previous, _chunk_list(chunks), *filters, progress)
    return _writes.tracked(WriteHandle(handle, core, os.fspath(path), dataset_name))


def _snapshot(core: Any) -> Any:
    """A copy of the array `core` (as _prepare gives it) in its own kind of memory, C-contiguous:
    NumPy's or CuPy's ``copy()``, PyTorch's ``clone()``."""
    for method in ("copy", "clone"):
        made = getattr(core, method, None)
        if callable(made):
            return made()
    raise UnsupportedTypeError(_args.without_secrets(f"to_file(copy=True): h5tile copies arrays that have copy() or "
                                                     f"clone() (NumPy, CuPy, PyTorch), not {type(core).__name__}"))


_device_of, _probe = _args.device, _args.probe


def from_file(path: "os.PathLike[str] | str", dataset_name: str, *, device: Optional[int] = None,
              threads: int = 0, progress: Optional[Callable[[int, int], Optional[bool]]] = None,
              allow_external_sources: bool = False, verify_checksums: bool = False, out: Any = None,
              probe: Optional[bool] = None) -> Any:
    """Read a whole dataset, tiles in parallel (the tiling follows the on-disk layout).

    String datasets read as h5py's ``ds[...]`` reads them: fixed-length strings as NumPy ``S<n>``
    (in parallel, as any dtype), variable-length strings as object arrays of ``bytes`` (through
    HDF5, which keeps them in the file's global heap; host memory only).

    Args:
        device: None for a NumPy array in host memory, or a CUDA device ordinal for a CuPy array
            in that device's memory (read through a bounded pinned staging path, or GPUDirect
            Storage where it works).
        out: an existing C-contiguous, writable array of the dataset's dtype and shape (NumPy,
            CuPy, or anything with DLPack) to read into instead of a new one; it is returned.
            A buffer reused across reads costs no page faults (``device`` is then not used).
            A NumPy ``out`` of another dtype is filled as h5py's ``read_direct`` converts, where
            no value can change (int16 into int32, float32 into float64: read, then copied);
            any other raises InvalidArgumentError saying which dtype to pass.
        threads: worker threads; 0 for the default.
        progress: ``progress(bytes_done, bytes_total)``, as for :func:`to_file`.
        allow_external_sources: read virtual-dataset sources outside the file's folder (absolute
            paths elsewhere, ``..`` escapes); refused by default with VirtualSourceError.
        verify_checksums: check each tile's stored checksum first (virtual datasets h5tile
            wrote); a changed tile raises VirtualSourceError naming it.
        probe: for untrusted files: open the file's metadata in a child process first, with a time
            limit (``settings.probe_timeout()``), so that HDF5 crashing or hanging on a damaged
            file raises ProbeFailedError instead of taking this process down. None: the
            ``settings.probe()`` setting (``H5TILE_PROBE``). Costs a fork and one more opening of
            the metadata; damage in the data itself is not caught.

    Raises:
        NoSuchFileError (FileNotFoundError), NotHdf5FileError (ProbeFailedError), DatasetNotFoundError /
        NotADatasetError (ValueError), UnsupportedTypeError (TypeError), VirtualSourceError;
        KeyboardInterrupt on Ctrl-C, within a moment: the read is cancelled first.
    """
    _via_h5py.settle(path)  # a file this process lent to h5py (File.id): its changes first
    path, dataset_name = _args.path("path", path), _args.dataset_name(dataset_name)
    threads = _whole("threads", threads)
    probe = _probe(probe)
    device_ordinal = _device_of(device)
    progress = _args.progress(progress)
    allow_external_sources = _args.flag("allow_external_sources", allow_external_sources)
    verify_checksums = _args.flag("verify_checksums", verify_checksums)
    if out is None and device is not None:
        out = _cupy_pool_array(path, dataset_name, device, probe)
    if out is None:
        return _as_described(_h5tile.from_file(path, dataset_name, device_ordinal, threads, progress,
                                               allow_external_sources, verify_checksums, probe),
                             path, dataset_name, probe)
    out = _args.array_like("out", out)
    flags = getattr(out, "flags", None)
    if flags is not None and not flags["C_CONTIGUOUS"]:
        raise InvalidArgumentError("out must be C-contiguous")
    if isinstance(out, np.ndarray) and not out.flags.writeable:
        raise InvalidArgumentError("out is read-only")
    core, sized = _prepare(out, "out")  # the core checks out's dtype and shape against the dataset
    try:
        _h5tile.read_into(core, path, dataset_name, sized, [], threads, progress,
                          allow_external_sources, verify_checksums, probe)
    except InvalidArgumentError:
        info = describe(path, dataset_name, probe=probe)
        stored = np.dtype(info["dtype"])
        if np.dtype(out.dtype) == stored or tuple(out.shape) != tuple(info["shape"]):
            raise
        _read_converted(out, stored, f"dataset '{dataset_name}' in '{_args.redacted(path)}'",
                        lambda: from_file(path, dataset_name, threads=threads, progress=progress,
                                          allow_external_sources=allow_external_sources,
                                          verify_checksums=verify_checksums, probe=probe))
    return out


def _read_converted(out: Any, stored: np.dtype, what: str, read: Callable[[], np.ndarray]) -> None:
    """Reads (``read()``) into ``out`` of a dtype other than the dataset's ``stored`` one, as h5py
    converts, where no value can change (NumPy's "safe" casting: int16 into int32 or float64,
    float32 into float64); else raises saying what to pass, naming ``what`` (the dataset and its
    file, the URL redacted)."""
    wanted = np.dtype(out.dtype)
    if not isinstance(out, np.ndarray) or not np.can_cast(stored, wanted, casting="safe"):
        where = "" if isinstance(out, np.ndarray) else " (and only into NumPy arrays)"
        raise InvalidArgumentError(_args.without_secrets(f"{what}: out has dtype {wanted} but the dataset holds "
                                                         f"{stored}: h5tile converts only where no value can "
                                                         f"change{where}; pass out of dtype {stored}, or convert "
                                                         f"the result (from_file(...).astype({str(wanted)!r}))"))
    np.copyto(out, read(), casting="safe")


def _cupy_pool_array(path, dataset_name: str, device: int, probe: Optional[bool]):
    """An empty CuPy array for the dataset from CuPy's memory pool (which later reads reuse,
    where a fresh allocation per call costs about a tenth of the read), or None where CuPy is
    missing or the dtype is opaque or a string (CuPy has no V<n>, S<n>): the core then allocates."""
    try:
        import cupy
    except ImportError:
        return None
    info = describe(path, dataset_name, probe=probe)
    if info["dtype"].startswith(("V", "S")) or info["dtype"] == "object":
        return None
    with cupy.cuda.Device(_device_of(device)):
        # (The pool may hand back memory that work queued on this stream still reads: _prepare,
        # which every array passes before the core, waits for it.)
        return cupy.empty(tuple(info["shape"]), np.dtype(info["dtype"]))


def read_box(path: "os.PathLike[str] | str", dataset_name: str, offset: Sequence[int], shape: Sequence[int], *,
             device: Optional[int] = None, threads: int = 0, allow_external_sources: bool = False,
             verify_checksums: bool = False, probe: Optional[bool] = None) -> Any:
    """Read the region ``[offset, offset + shape)`` of a dataset (options as :func:`from_file`)."""
    _via_h5py.settle(path)  # a file this process lent to h5py (File.id): its changes first
    path, dataset_name = _args.path("path", path), _args.dataset_name(dataset_name)
    data = _h5tile.read_box(path, dataset_name, _wholes("offset", offset), _wholes("shape", shape),
                            _device_of(device), _whole("threads", threads),
                            _args.flag("allow_external_sources", allow_external_sources),
                            _args.flag("verify_checksums", verify_checksums), _probe(probe))
    return _as_described(data, path, dataset_name, probe)


def _as_described(data: Any, path: str, dataset_name: str, probe: Optional[bool]) -> Any:
    """A host array of opaque bytes (V<n>) read from a compound, enum or array dataset as the
    dtype h5py gives it (describe()'s ``numpy_type``); anything else as it is. Device arrays
    stay bytes (CuPy has no structured dtypes)."""
    if not isinstance(data, np.ndarray) or data.dtype.kind != "V":
        return data
    info = describe(path, dataset_name, probe=probe)
    return _dtypes.as_numpy(data, _dtypes.numpy_dtype(info)) if info.get("numpy_type") else data


def describe(path: "os.PathLike[str] | str", dataset_name: str, *, probe: Optional[bool] = None) -> dict:
    """dtype, shape, layout, chunk shape, filters (by name: "deflate", "shuffle", "lzf", ...; an unknown
    one as "filter N (unknown to h5tile)"), ``charset`` of a string dataset ("ascii" or "utf-8"; dtype
    ``S<n>``, or ``object`` for variable-length strings; None otherwise), number of virtual sources of
    a dataset, and who decodes a filtered one: ``decoder`` is "h5tile" (h5tile's own decoder, on its worker threads,
    in parallel) or "hdf5" (the HDF5 library, one call at a time), with ``decoder_reason`` saying
    why (``"h5tile does not decode szip"``, ...); both None when nothing is filtered and for a
    virtual dataset (``probe`` as in :func:`from_file`)."""
    _via_h5py.settle(path)  # a file this process lent to h5py (File.id): its changes first
    return _h5tile.describe(_args.path("path", path), _args.dataset_name(dataset_name), _probe(probe))


def _check_chunk_size(chunk_size: Sequence[int], ndim: int, where: str, name: str = "chunk_size") -> list:
    if isinstance(chunk_size, (str, bytes)) or not hasattr(chunk_size, "__iter__"):
        raise ArgumentTypeError(_args.without_secrets(f"{name} must be a sequence of {ndim} positive integers, not "
                                                      f"{chunk_size!r}"))
    chunk = list(chunk_size)
    if len(chunk) != ndim:
        raise InvalidArgumentError(_args.without_secrets(f"{name} {tuple(chunk)} has {len(chunk)} elements but "
                                                         f"{where} has {ndim} axes"))
    for i, c in enumerate(chunk):
        if not _args.is_integer(c):
            raise ArgumentTypeError(_args.without_secrets(f"{name} {tuple(chunk)}: element {i} is {c!r}, not an "
                                                          "integer"))
        if c <= 0 or c > _args.UINT64_MAX:
            raise InvalidArgumentError(_args.without_secrets(f"{name} {tuple(chunk)}: element {i} is {c}; every "
                                                             "element must be positive (and below 2**64)"))
    return [int(c) for c in chunk]


def from_file_batched(path: "os.PathLike[str] | str", dataset_name: str, chunks: Optional[Sequence[int]] = None, *,
                      device: Optional[int] = None, threads: int = 0,
                      progress: Optional[Callable[[int, int], Optional[bool]]] = None,
                      probe: Optional[bool] = None, allow_external_sources: bool = False,
                      verify_checksums: bool = False,
                      chunk_size: Optional[Sequence[int]] = None) -> Iterator[Tuple[Any, Tuple[int, ...]]]:
    """Iterate over a dataset in blocks of at most ``chunks``: yields ``(block, offsets)``,
    low to high in row-major order, boundary blocks clipped (a length-5 axis with chunk 2 gives
    2, 2, 1). The next block is read while the caller works on the current one; memory stays at
    a few blocks whatever the file's size. The iterator may be consumed from another thread.

    An iteration reads the version of the file it opened: a write that replaces the file meanwhile
    (``to_file``, or any program that renames a new file over it) does not change what it yields.
    It holds the file and its tile files open until it is dropped (tiles up to a quarter of the
    process's descriptor limit); where a tile it could not hold was removed meanwhile
    (``keep_previous=False``), it raises :class:`VirtualSourceError` saying that the file was
    replaced during the iteration, and never yields a block of the new version.

    ``progress``: called as ``progress(bytes_done, bytes_total)`` after each block is read, before
    it is yielded (``bytes_done`` counts that block); return False to stop: the iterator then
    raises :class:`CancelledError`. Ctrl-C cancels the block being read and raises
    KeyboardInterrupt once the read's tasks under way have ended (``settings.task_size`` bytes
    each: a moment on local disks; the iteration is then over).

    ``chunks`` is the block shape, one length per axis, under the name :func:`to_file`, Dask and
    the command (``--chunks``) give a shape of blocks; ``chunk_size``, legate.io.hdf5's name for
    it (which :func:`h5tile.legate.from_file_batched` keeps), is accepted instead.

    Raises InvalidArgumentError (ValueError) at once for ``chunks`` of the wrong length or
    with an element <= 0. ``probe``, ``allow_external_sources`` and ``verify_checksums`` as in
    :func:`from_file`.
    """
    _via_h5py.settle(path)  # a file this process lent to h5py (File.id): its changes first
    if chunks is not None and chunk_size is not None:
        raise InvalidArgumentError("from_file_batched takes chunks or chunk_size (its other name), not both")
    if chunks is None and chunk_size is None:
        raise ArgumentTypeError("from_file_batched needs chunks: the block shape, one length per axis")
    given, given_name = (chunks, "chunks") if chunks is not None else (chunk_size, "chunk_size")
    path, dataset_name = _args.path("path", path), _args.dataset_name(dataset_name)
    probe = _probe(probe)
    device, threads = _device_of(device), _whole("threads", threads)
    progress = _args.progress(progress)
    allow_external_sources = _args.flag("allow_external_sources", allow_external_sources)
    verify_checksums = _args.flag("verify_checksums", verify_checksums)
    info = describe(path, dataset_name, probe=probe)
    chunk = _check_chunk_size(given, len(info["shape"]), f"dataset '{dataset_name}' in '{_args.redacted(path)}'",
                              given_name)
    batched = _h5tile._Batched(path, dataset_name, chunk, device, threads, probe, allow_external_sources,
                               verify_checksums)
    if progress is None:
        return batched
    total = int(np.prod(info["shape"], dtype=np.uint64)) * np.dtype(info["dtype"]).itemsize
    return _BatchedWithProgress(batched, progress, total)


class _BatchedWithProgress:
    """A batched read that reports each block to a progress callback."""

    def __init__(self, batched, progress: Callable[[int, int], Optional[bool]], total: int):
        self._batched = batched
        self._progress = progress
        self._total = total
        self._done = 0

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._batched)

    def __next__(self):
        block, offset = next(self._batched)
        self._done += int(block.nbytes)
        if self._progress(min(self._done, self._total), self._total) is False:
            raise CancelledError("cancelled by the progress callback")
        return block, offset


def consolidate(path_in: "os.PathLike[str] | str", dataset_name: str, path_out: "os.PathLike[str] | str", *,
                mode: str = "x", threads: int = 0, sync: bool = True, keep_previous: bool = True,
                chunks: Optional[Sequence[int]] = None, compression: Optional[str] = None,
                level: Optional[int] = None, shuffle: bool = False, fletcher32: bool = False,
                progress: Optional[Callable[[int, int], Optional[bool]]] = None,
                probe: Optional[bool] = None) -> None:
    """Copy a dataset (a virtual dataset and its tiles, or any other) into one self-contained
    dataset in ``path_out``, streamed in parallel blocks; the output appears only when complete.
    Contiguous, or chunked with ``chunks`` (one length per axis), and then filtered with
    ``compression``, ``level``, ``shuffle`` and ``fletcher32`` as in :func:`to_file` (the chunks
    compressed in parallel). ``mode`` "x" (default, as the command's) fails if ``path_out``
    exists (FileAlreadyExistsError), "w" replaces it, "a" adds the dataset to it (or replaces that
    dataset there). ``keep_previous`` as in :func:`to_file`; ``probe`` (of the input) as in
    :func:`from_file`."""
    _via_h5py.settle(path_in)  # a file this process lent to h5py (File.id): its changes first
    _via_h5py.reclaim(path_out)  # a file this process lent to h5py (File.id): taken back first
    _h5tile.consolidate(_args.path("path_in", path_in), _args.dataset_name(dataset_name),
                        _args.path("path_out", path_out), _whole("threads", threads), _args.flag("sync", sync),
                        _args.flag("keep_previous", keep_previous), _chunk_list(chunks),
                        *_compression(compression, level, shuffle, fletcher32), _args.progress(progress),
                        _probe(probe), _args.name_in("mode", mode, _MODES))


def split(path_in: "os.PathLike[str] | str", dataset_name: str, path_out: "os.PathLike[str] | str", *,
          tiles: int = 0, mode: str = "x", sync: bool = True, chunks: Optional[Sequence[int]] = None,
          compression: Optional[str] = None, level: Optional[int] = None, shuffle: bool = False,
          fletcher32: bool = False) -> None:
    """Write a dataset (any layout) as tiles plus a virtual dataset in ``path_out`` (the inverse of
    :func:`consolidate`, as ``h5tile split``): ``tiles`` tiles along the first axis (0: one per
    core), each tile file compressed as ``compression``, ``level``, ``shuffle`` and
    ``fletcher32`` say (in chunks of ``chunks``, default at most 1 MiB), as in :func:`to_file`.
    Holds the dataset in memory. ``mode`` "x" (default) fails if ``path_out`` exists, "w" replaces it."""
    _via_h5py.settle(path_in)  # a file this process lent to h5py (File.id): its changes first
    _via_h5py.reclaim(path_out)  # a file this process lent to h5py (File.id): taken back first
    path_in, path_out = _args.path("path_in", path_in), _args.path("path_out", path_out)
    tiles, mode = _whole("tiles", tiles), _args.name_in("mode", mode, _MODES)
    _compression(compression, level, shuffle, fletcher32)
    _args.flag("sync", sync)
    _chunk_list(chunks)
    data = from_file(path_in, dataset_name)
    to_file(data, path_out, dataset_name, layout="virtual", mode=mode, ranks=tiles, sync=sync, chunks=chunks,
            compression=compression, level=level, shuffle=shuffle, fletcher32=fletcher32).wait()


def write_tile(array: Any, path: "os.PathLike[str] | str", dataset_name: str, *, comm: Any,
               offset: Sequence[int], global_shape: Sequence[int], layout: str = "auto", mode: str = "w",
               sync: bool = True, keep_previous: bool = True, chunks: Optional[Sequence[int]] = None,
               compression: Optional[str] = None, level: Optional[int] = None, shuffle: bool = False,
               fletcher32: bool = False) -> None:
    """Collective (MPI, through an mpi4py communicator): every rank writes its tile ``array`` at
    ``offset`` of a dataset of ``global_shape``. All ranks pass the same path, dataset, shape and
    options; together the tiles cover the dataset exactly once. If any rank fails, every rank
    raises the same error and the previous file is left intact. ``layout="auto"`` is "virtual" here
    (each rank's tile in its own file); "contiguous" and "chunked" write one self-contained file.
    Compression as in :func:`to_file` (layout "chunked": every chunk must lie in one tile)."""
    _via_h5py.reclaim(path)  # a file this process lent to h5py (File.id): taken back first
    comm = _args.communicator(comm)

    def arguments():
        core, sized = _prepare(array)
        filters = _compression(compression, level, shuffle, fletcher32)
        return (core, _args.path("path", path), _args.dataset_name(dataset_name), sized,
                _wholes("global_shape", global_shape), _wholes("offset", offset), _name_in("layout", layout, _LAYOUTS),
                _name_in("mode", mode, _MODES), _args.flag("sync", sync), _args.flag("keep_previous", keep_previous),
                _chunk_list(chunks), *filters)

    _h5tile.write_tile(comm, *_checked_on_every_rank(comm, arguments))


def read_tile(path: "os.PathLike[str] | str", dataset_name: str, *, comm: Any, device: Optional[int] = None,
              threads: int = 0, probe: Optional[bool] = None) -> Tuple[Any, Tuple[int, ...]]:
    """Collective (MPI): every rank reads its share of the dataset, the split following the
    on-disk layout. Returns ``(array, offset)``. ``probe`` as in :func:`from_file` (rank 0
    probes, for every rank, before any rank opens the file)."""
    _via_h5py.settle(path)  # a file this process lent to h5py (File.id): its changes first
    comm = _args.communicator(comm)
    return _h5tile.read_tile(comm, *_checked_on_every_rank(comm, lambda: (
        _args.path("path", path), _args.dataset_name(dataset_name), _device_of(device), _whole("threads", threads),
        _probe(probe))))


_LAYOUTS, _MODES, _COMPRESSORS, _name_in = _args.LAYOUTS, _args.MODES, _args.COMPRESSORS, _args.name_in


def _checked_on_every_rank(comm: Any, check: Callable[[], Any]) -> Any:
    """Collective: this rank's checks before a collective call (``check()``, whose result is
    returned); where they fail on any rank, every rank raises (the others would wait for it)."""
    failure, result = None, None
    try:
        result = check()
    except Exception as e:
        failure = e
    _raise_on_every_rank(comm, failure)
    return result


def _raise_on_every_rank(comm: Any, failure: Optional[BaseException]) -> None:
    """Collective: where the arguments of one rank failed the checks made before the collective
    call, every rank raises that error (the first failing rank's, with its rank in the message),
    as the collective raises its own errors, instead of the others waiting for that rank."""
    failures = comm.allgather(None if failure is None else (type(failure).__name__, str(failure)))
    for rank, found in enumerate(failures):
        if found is None:
            continue
        name, message = found
        kind = getattr(_h5tile, name, None)
        if not (isinstance(kind, type) and issubclass(kind, Error)):
            kind, message = InvalidArgumentError, f"{name}: {message}"
        error = kind(_args.without_secrets(f"rank {rank}: {message}"))
        if failure is not None and rank == comm.Get_rank():
            raise error from failure
        raise error
