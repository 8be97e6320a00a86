"""h5py-style objects over h5tile's parallel engine: :class:`File`, :class:`Group`,
:class:`Dataset` and :class:`AttributeManager`.

They hold no HDF5 handle between calls: every read opens the file by path (or URL), as the
module-level functions do, and reads in parallel. A :class:`File` caches what it has listed and
described; objects pickle as (path, name) and reopen where they are unpickled (a Dask worker).
"""
from __future__ import annotations

import errno
import math
import os
import posixpath
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Callable, Iterator, Optional, Tuple, Union

import numpy as np

from . import _arguments as _args
from . import _h5tile
from ._attributes import AttributeManager, Empty  # noqa: F401 (Empty: re-exported)
from ._h5tile import InvalidArgumentError, IoError, NotADatasetError, UnsupportedTypeError
from ._selection import _Selection

__all__ = ["File", "Group", "Dataset", "AttributeManager", "Empty"]

_FILE_MODES = ("r", "r+", "a")


def _read_only(what: str, path: str) -> IoError:
    """An OSError (EBADF), as h5py raises for a write to a file opened read-only."""
    return IoError(errno.EBADF, f"cannot {what}: '{path}' is open read-only (mode 'r'); "
                                "open it with h5tile.File(path, 'a') to change it")


class _Catalog:
    """What a File knows of its file: the objects listed (once) and the datasets described (each
    once). Shared by every object of one File; reset where the File changes the file."""

    def __init__(self):
        self.lock = threading.Lock()
        self.kinds: Optional[dict] = None  # full name -> "group" | "dataset" | "datatype"
        self.described: dict = {}

    def reset(self) -> None:
        with self.lock:
            self.kinds, self.described = None, {}


class _Object:
    """What groups and datasets share: a name in a file, attributes, a parent."""

    def __init__(self, file: File, name: str):
        self._file = file
        self._name = name

    @property
    def name(self) -> str:
        """The full path of the object in its file ("/", "/grp/temp")."""
        return self._name

    @property
    def file(self) -> File:
        """The :class:`File` this object belongs to."""
        return self._file

    @property
    def parent(self) -> Group:
        """The group holding this object (the root group's parent is the root group)."""
        return self._file[posixpath.dirname(self._name) or "/"]

    @property
    def attrs(self) -> AttributeManager:
        """The object's attributes, as a mapping (read; write in mode "a" or "r+")."""
        return AttributeManager(self)

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and (self._file.filename, self._name) == (other._file.filename, other._name)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._file.filename, self._name))

    def __bool__(self) -> bool:
        return self._file._open


class Group(_Object, Mapping):
    """A group of an HDF5 file: a mapping from member names to :class:`Group` and :class:`Dataset`
    objects, as h5py's ``Group``.

    >>> with h5tile.File("data.h5") as f:           # doctest: +SKIP
    ...     list(f.keys())                            # ['grp', 'x']
    ...     temp = f["grp/temp"]                      # a Dataset; nothing read yet
    ...     block = temp[10:20, ::2]                  # numpy.ndarray, read in parallel
    ...     f.visit(print)                            # grp, grp/temp, x
    """

    def _path(self, name: str) -> str:
        if isinstance(name, bytes):
            name = name.decode()
        if not isinstance(name, str):
            raise TypeError(f"member names are strings, not {type(name).__name__} ({name!r})")
        full = name if name.startswith("/") else posixpath.join(self._name, name)
        full = posixpath.normpath(full)
        return "/" if full in ("/", "//", ".") else "/" + full.lstrip("/")

    def _members(self) -> list:
        kinds = self._file._kinds()
        prefix = self._name.rstrip("/") + "/"
        return [n[len(prefix):] for n in kinds if n.startswith(prefix) and "/" not in n[len(prefix):]]

    def __getitem__(self, name: str) -> "Union[Group, Dataset]":
        """The member ``name``: a path relative to this group ("temp", "sub/temp") or absolute
        ("/grp/temp"). Raises :class:`DatasetNotFoundError` (a ``KeyError``) where there is none."""
        full = self._path(name)
        if full == "/":
            return self._file._root()
        kind = self._file._kinds().get(full)
        if kind == "group":
            return Group(self._file, full)
        if kind == "dataset":
            return Dataset(self._file, full)
        if kind is None:
            # Not listed: reached through a soft link, or missing (describe says which).
            self._file._describe(full)
            return Dataset(self._file, full)
        raise UnsupportedTypeError(f"'{full}' in '{self._file.filename}' is a named datatype: h5tile "
                                   "opens groups and datasets")

    def __iter__(self) -> Iterator[str]:
        return iter(self._members())

    def __len__(self) -> int:
        return len(self._members())

    def __contains__(self, name: object) -> bool:
        try:
            self[name]  # type: ignore[index]
        except (KeyError, NotADatasetError, TypeError, InvalidArgumentError):
            return False
        return True

    def visit(self, func: Callable[[str], Any]) -> Any:
        """Calls ``func(name)`` for every group and dataset below this one (names relative to it),
        depth first in name order, as h5py's ``visit``; stops at, and returns, the first value
        that is not None."""
        return self._visit(lambda name, _: func(name), objects=False)

    def visititems(self, func: Callable[[str, Any], Any]) -> Any:
        """Calls ``func(name, obj)`` for every group and dataset below this one, as h5py's
        ``visititems``; stops at, and returns, the first value that is not None."""
        return self._visit(func, objects=True)

    def _visit(self, func: Callable[[str, Any], Any], objects: bool) -> Any:
        prefix = self._name.rstrip("/") + "/"
        for full, kind in self._file._kinds().items():
            if kind == "datatype" or not full.startswith(prefix):
                continue
            obj = (Group if kind == "group" else Dataset)(self._file, full) if objects else None
            result = func(full[len(prefix):], obj)
            if result is not None:
                return result
        return None

    def create_dataset(self, name: str, shape: Any = None, dtype: Any = None, data: Any = None, *,
                       chunks: Any = None, compression: Optional[str] = None, compression_opts: Optional[int] = None,
                       shuffle: bool = False, fletcher32: bool = False) -> Dataset:
        """Writes a new dataset ``name`` (mode "a" or "r+") from ``data`` (or zeros of ``shape``
        and ``dtype``), in parallel, as :func:`h5tile.to_file` with ``mode="a"``: one
        self-contained dataset, contiguous, or chunked where ``chunks`` (True: a chunk shape
        chosen for you, as h5py's) or ``compression`` is given. Raises FileExistsError where the
        name exists (as h5py)."""
        self._file._check_writable(f"create dataset '{name}'")
        full = self._path(name)
        if full in self._file._kinds():
            raise FileExistsError(f"cannot create dataset '{full}' in '{self._file.filename}': the name exists")
        if data is None:
            if shape is None:
                raise InvalidArgumentError("create_dataset needs data or a shape")
            data = np.zeros(shape, dtype=dtype if dtype is not None else "f4")
        else:
            data = np.asarray(data, dtype=dtype)
            if shape is not None and tuple(shape) != data.shape:
                data = data.reshape(shape)
        self._file._write(data, full, chunks=chunks, compression=compression,
                          level=compression_opts, shuffle=shuffle, fletcher32=fletcher32)
        return Dataset(self._file, full)

    def __repr__(self) -> str:
        if not self._file._open:
            return "<Closed h5tile Group>"
        return f'<h5tile Group "{self._name}" ({len(self)} members) in \'{self._file.filename}\'>'


class File(Group):
    """An HDF5 file as h5py's ``File``: the root :class:`Group`, used as a context manager.

    Args:
        name: a path (``str`` or ``os.PathLike``) or an ``http(s)://`` URL (read-only).
        mode: "r" (read, the default), "r+" or "a" (read and write an existing file: attributes,
            whole datasets and new datasets). h5tile has no mode "w": write a new file with
            :func:`h5tile.to_file`.
        threads: worker threads of each read (0: the ``threads`` setting).
        probe, allow_external_sources, verify_checksums: as in :func:`h5tile.from_file`.

    Like h5py's, an open File keeps the datasets it has read from open (at most 32, the least
    recently read let go first) until :meth:`close`, so that small reads do not open the file
    again each time; with HDF5's file locking, HDF5 programs cannot open it for writing meanwhile,
    as with h5py. Unlike h5py's, every read first checks (stat) that the file is still the one
    opened, and opens it again where it was replaced or rewritten: a File sees the file as it is
    at each call. It is picklable (it reopens where it is unpickled). What it lists and describes
    is cached until it writes.

    Raises:
        NoSuchFileError (FileNotFoundError), IsADirectoryPathError (IsADirectoryError),
        NotHdf5FileError (OSError), InvalidArgumentError (ValueError) for another mode.

    Example::

        with h5tile.File("data.h5") as f:
            ds = f["grp/temp"]
            ds.shape, ds.dtype, ds.chunks, ds.compression
            part = ds[10:20, ::2]          # numpy.ndarray
            whole = ds[...]                # or np.asarray(ds)
            units = ds.attrs["units"]
    """

    def __init__(self, name: Union[str, "os.PathLike[str]"], mode: str = "r", *, threads: int = 0,
                 probe: Optional[bool] = None, allow_external_sources: bool = False, verify_checksums: bool = False):
        path = _args.path("name", name)
        self._path_text = os.fspath(path)
        if mode not in _FILE_MODES:
            raise InvalidArgumentError(f"mode must be 'r' (read), 'r+' or 'a' (read and write an existing file), not "
                                       f"{mode!r}; write a new file with h5tile.to_file")
        self._mode = mode
        self._options = dict(threads=_args.whole("threads", threads), probe=_args.probe(probe),
                             allow_external_sources=_args.flag("allow_external_sources", allow_external_sources),
                             verify_checksums=_args.flag("verify_checksums", verify_checksums))
        self._catalog = _Catalog()
        self._readers: "OrderedDict[str, Any]" = OrderedDict()  # name -> _h5tile._Reader, most recent last
        self._readers_lock = threading.Lock()
        self._open = True
        super().__init__(self, "/")
        if mode != "r" and self._is_url():
            raise InvalidArgumentError(f"'{self._path_text}' is a URL: URLs open in mode 'r' only")
        _h5tile.read_attributes(self._path_text, "/")  # the file exists and is HDF5 (errors as h5py's)

    # -- File's own properties
    @property
    def filename(self) -> str:
        """The path or URL the file was opened with."""
        return self._path_text

    @property
    def mode(self) -> str:
        """"r" (read-only) or "r+" (read and write), as h5py reports it."""
        return "r" if self._mode == "r" else "r+"

    def close(self) -> None:
        """Closes the file: lets go of the datasets kept open (waiting for reads in progress) and
        marks the objects closed."""
        self._open = False
        with self._readers_lock:
            readers, self._readers = list(self._readers.values()), OrderedDict()
        for reader in readers:
            reader.close()

    def flush(self) -> None:
        """Nothing to do: every write is complete on disk when it returns."""

    def __enter__(self) -> File:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __reduce__(self):
        return (_reopen_file, (self._path_text, self._mode, self._options, self._open))

    def __repr__(self) -> str:
        if not self._open:
            return "<Closed h5tile File>"
        return f"<h5tile File '{self._path_text}' (mode {self.mode})>"

    # -- what objects share
    def _is_url(self) -> bool:
        return "://" in self._path_text

    def _root(self) -> File:
        return self

    def _reader(self, name: str):
        """The reader of dataset `name`, which keeps it open between reads (h5tile.DatasetReader):
        at most _KEPT_DATASETS per File, the least recently read closed first."""
        with self._readers_lock:
            reader = self._readers.get(name)
            if reader is not None:
                self._readers.move_to_end(name)
                return reader
            o = self._options
            reader = _h5tile._Reader(self._path_text, name, -1, o["threads"], o["allow_external_sources"],
                                     o["verify_checksums"], o["probe"])
            self._readers[name] = reader
            oldest = self._readers.popitem(last=False)[1] if len(self._readers) > _KEPT_DATASETS else None
        if oldest is not None:
            oldest.close()  # waits for its reads in progress
        return reader

    def _check_open(self) -> None:
        if not self._open:
            raise InvalidArgumentError(f"'{self._path_text}' is closed")

    def _check_writable(self, what: str) -> None:
        self._check_open()
        if self._mode == "r":
            raise _read_only(what, self._path_text)

    def _kinds(self) -> dict:
        self._check_open()
        catalog = self._catalog
        with catalog.lock:
            if catalog.kinds is None:
                catalog.kinds = dict(_h5tile.list_objects(self._path_text))
            return catalog.kinds

    def _describe(self, name: str) -> dict:
        self._check_open()
        catalog = self._catalog
        with catalog.lock:
            info = catalog.described.get(name)
        if info is None:
            info = _h5tile.describe(self._path_text, name, self._options["probe"])
            with catalog.lock:
                catalog.described[name] = info
        return info

    def _write(self, data: np.ndarray, name: str, **options: Any) -> None:
        from . import to_file  # the package's own checks and conversions
        chunked = options.get("chunks") is not None or options.get("compression") is not None
        to_file(data, self._path_text, name, mode="a", layout="chunked" if chunked else "contiguous",
                **{k: v for k, v in options.items() if v is not None or k in ("chunks", "compression")}).wait()
        self._catalog.reset()


def _reopen_file(path: str, mode: str, options: dict, is_open: bool) -> File:
    f = File.__new__(File)
    f._path_text, f._mode, f._options = path, mode, dict(options)
    f._catalog, f._open = _Catalog(), is_open
    f._readers, f._readers_lock = OrderedDict(), threading.Lock()
    _Object.__init__(f, f, "/")
    return f


def _dataset_from_state(file: File, name: str, info: Optional[dict]) -> Dataset:
    if info is not None:
        file._catalog.described[name] = info
    return Dataset(file, name)


# Datasets a File keeps open at most (File._reader).
_KEPT_DATASETS = 32

# A selection whose covering box is larger than this and than 4 times the selection is read in
# slabs (Dataset._read_by_slabs) instead of as one box.
_COVERING_BOX_BYTES = 64 << 20

_COMPRESSION_NAMES = {"deflate": "gzip", "lzf": "lzf", "szip": "szip"}


class Dataset(_Object):
    """A dataset of an HDF5 file, as h5py's ``Dataset``: its properties come from its description
    (read once per File), its data from parallel reads of the smallest box that covers the
    selection.

    Selections are NumPy's basic indexing: integers (negative from the end), slices with any
    step (negative too), ``...`` and ``()``::

        ds[10:20, ::2]      # rows 10..19, every other column
        ds[-1]              # the last row
        ds[()]              # everything (a NumPy scalar for a scalar dataset)
        np.asarray(ds)      # everything, as an array

    Lists and boolean masks (h5py's fancy selections) are not supported: read a box and index
    the array. Writes (mode "a"/"r+") replace the whole dataset: ``ds[...] = array``.
    """

    # -- description
    @property
    def _info(self) -> dict:
        return self._file._describe(self._name)

    @property
    def shape(self) -> Tuple[int, ...]:
        """The dataset's shape (``()`` for a scalar dataset)."""
        return tuple(int(n) for n in self._info["shape"])

    @property
    def maxshape(self) -> Tuple[Optional[int], ...]:
        """The largest shape the dataset may be extended to, None on an unlimited axis (h5py's
        ``maxshape``; netCDF-4's unlimited dimensions)."""
        return tuple(None if n is None else int(n) for n in self._info.get("max_shape", self._info["shape"]))

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype the data reads as."""
        return np.dtype(self._info["dtype"])

    @property
    def ndim(self) -> int:
        return len(self._info["shape"])

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """The size of the data in memory, in bytes."""
        return self.size * self.dtype.itemsize

    @property
    def chunks(self) -> Optional[Tuple[int, ...]]:
        """The chunk shape, or None where the dataset is not chunked."""
        chunk = self._info["chunk"]
        return None if chunk is None else tuple(int(n) for n in chunk)

    @property
    def compression(self) -> Optional[str]:
        """"gzip", "lzf" or "szip" as h5py names them, else None (other filters: see ``filters``)."""
        for f in self._info["filters"] or ():
            if f in _COMPRESSION_NAMES:
                return _COMPRESSION_NAMES[f]
        return None

    @property
    def compression_opts(self) -> Optional[int]:
        """The gzip level (as h5py reports it), else None."""
        for f, values in zip(self._info["filters"] or (), self._info.get("filter_values") or ()):
            if f == "deflate" and values:
                return int(values[0])
        return None

    @property
    def shuffle(self) -> bool:
        """Whether HDF5's shuffle filter is in the pipeline."""
        return "shuffle" in (self._info["filters"] or ())

    @property
    def fletcher32(self) -> bool:
        """Whether the chunks carry Fletcher-32 checksums."""
        return "fletcher32" in (self._info["filters"] or ())

    @property
    def filters(self) -> Tuple[str, ...]:
        """The filter pipeline, by name (h5tile's own view; empty for an unfiltered dataset)."""
        return tuple(self._info["filters"] or ())

    @property
    def layout(self) -> str:
        """"contiguous", "chunked", "compact" or "virtual"."""
        return self._info["layout"]

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a scalar dataset")
        return shape[0]

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        if not self._file._open:
            return "<Closed h5tile Dataset>"
        return f'<h5tile Dataset "{self._name}": shape {self.shape}, type "{self.dtype.str}">'

    def __reduce__(self):
        info = self._file._catalog.described.get(self._name)
        return (_dataset_from_state, (self._file, self._name, info))

    # -- reads
    def _read_box(self, offset: Tuple[int, ...], extent: Tuple[int, ...], out: Optional[np.ndarray] = None):
        """The box read in parallel: into ``out`` (C-contiguous, of the box's shape and the dtype)
        where given, else into a new array."""
        dtype = self.dtype
        if out is None:
            if 0 in extent:
                return np.empty(extent, dtype)
            return self._file._reader(self._name).read_box(list(offset), list(extent))
        if 0 not in extent:
            from . import _prepare
            core, opaque = _prepare(out, "out")
            self._file._reader(self._name).read_into(core, opaque, list(offset))
        return out

    def __getitem__(self, key: Any) -> Any:
        """The selection ``key`` (NumPy basic indexing) as a NumPy array (a NumPy scalar where
        every axis is indexed by an integer, and for ``ds[()]`` of a scalar dataset)."""
        self._file._check_open()
        shape = self.shape
        sel = _Selection(key, shape)
        if not shape and sel.scalar_request:
            return self._read_box((), ())[()]
        itemsize = self.dtype.itemsize
        box_bytes = math.prod(sel.extent) * itemsize
        wanted_bytes = math.prod(sel.result_shape) * itemsize
        if box_bytes <= max(4 * wanted_bytes, _COVERING_BOX_BYTES):
            return sel.finish(self._read_box(sel.offset, sel.extent))
        return self._read_by_slabs(sel)

    def _read_by_slabs(self, sel: "_Selection"):
        """A sparse selection (steps that leave most of the covering box unread), read in slabs
        along the outermost stepped axis: one box per run of picked indices, each run of at most
        _COVERING_BOX_BYTES or within one chunk there, ending at a chunk's edge (so that no chunk
        is decoded twice). Memory stays at the result and one slab, not the whole covering box."""
        axis = next(i for i, p in enumerate(sel.post) if isinstance(p, slice) and p.step not in (None, 1))
        step = sel.post[axis].step
        picks = list(range(sel.offset[axis], sel.offset[axis] + sel.extent[axis])[::step])
        chunk = self.chunks[axis] if self.chunks else 1
        full = [len(range(n)[p]) if isinstance(p, slice) else 1 for n, p in zip(sel.extent, sel.post)]
        out = np.empty(full, self.dtype)
        inner = [slice(None) if not isinstance(p, slice) else p for p in sel.post]
        # Bytes of the box per index along `axis`: a run grows while it stays in one chunk, or
        # while its box stays within _COVERING_BOX_BYTES (then it ends at a chunk's edge).
        per_index = math.prod(sel.extent) // max(sel.extent[axis], 1) * self.dtype.itemsize
        j = 0
        while j < len(picks):
            run = j + 1
            while run < len(picks) and (picks[run] // chunk == picks[run - 1] // chunk
                                        or (abs(picks[run] - picks[j]) + 1) * per_index <= _COVERING_BOX_BYTES):
                run += 1
            lo, hi = min(picks[j], picks[run - 1]), max(picks[j], picks[run - 1]) + 1
            offset, extent = list(sel.offset), list(sel.extent)
            offset[axis], extent[axis] = lo, hi - lo
            inner[axis] = slice(None, None, step)  # from the box's first (or, stepping back, last) index
            place = tuple(slice(j, run) if i == axis else slice(None) for i in range(len(full)))
            block = self._read_box(offset, extent)
            out[place] = block[tuple(inner)]
            j = run
        return out[tuple(0 if not isinstance(p, slice) else slice(None) for p in sel.post)]

    def read_direct(self, dest: np.ndarray, source_sel: Any = None, dest_sel: Any = None) -> None:
        """Reads ``self[source_sel]`` into ``dest[dest_sel]`` (h5py's ``read_direct``). Where the
        source is a box (no steps) and the destination is all of a C-contiguous ``dest`` of the
        dataset's dtype, the engine reads straight into ``dest``, without a copy."""
        self._file._check_open()
        if not isinstance(dest, np.ndarray):
            raise TypeError(f"dest must be a numpy.ndarray, not {type(dest).__name__}")
        sel = _Selection(() if source_sel is None else source_sel, self.shape)
        target = dest if dest_sel is None else dest[dest_sel]
        direct = (dest_sel is None and sel.is_box and dest.dtype == self.dtype and dest.flags.c_contiguous
                  and dest.flags.writeable and dest.shape == tuple(sel.extent))
        if direct:
            self._read_box(sel.offset, sel.extent, out=dest)
            return
        target[...] = self[() if source_sel is None else source_sel]
        if dest_sel is not None and not np.shares_memory(target, dest):
            dest[dest_sel] = target

    def read(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The whole dataset: into ``out`` where given (converted where its dtype differs, read in
        place where it is C-contiguous and of the dataset's dtype), else a new array."""
        if out is None:
            return self[...]
        self.read_direct(out)
        return out

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        if copy is False:
            raise ValueError("reading a dataset always makes a new array: copy=False is impossible")
        data = self[...]
        return data if dtype is None else data.astype(dtype, copy=False)

    def astype(self, dtype: Any) -> _AsType:
        """A view that reads the dataset converted to ``dtype``: ``ds.astype("f8")[0:10]``."""
        return _AsType(self, np.dtype(dtype))

    # -- writes
    def __setitem__(self, key: Any, value: Any) -> None:
        """Writes the whole dataset (mode "a"/"r+"): ``ds[...] = array`` (or ``ds[()]``, or a
        selection of every element), converted to the dataset's dtype and broadcast to its
        shape, in parallel, keeping its layout, chunks, filters and attributes. The write
        replaces the dataset: h5tile has no writes of a part of an existing dataset; for those,
        read it (``a = ds[...]``), change ``a`` and write it back (``ds[...] = a``)."""
        self._file._check_writable(f"write dataset '{self._name}'")
        shape = self.shape
        sel = _Selection(key, shape)
        if not (sel.is_box and tuple(sel.offset) == (0,) * len(shape) and tuple(sel.extent) == shape
                and sel.result_shape == shape):
            raise InvalidArgumentError(
                f"h5tile writes whole datasets: {_Selection.text(key)} selects part of '{self._name}' of shape {shape} "
                f"in '{self._file.filename}'; read it (a = ds[...]), change a[...] and write it back (ds[...] = a)")
        data = np.array(np.broadcast_to(np.asarray(value, dtype=self.dtype), shape), order="C")
        info = self._info
        filters = list(info["filters"] or ())
        options: dict = {"layout": "contiguous"}
        if info["layout"] == "virtual":
            options["layout"] = "virtual"
        elif info["layout"] == "chunked":
            options.update(layout="chunked", chunks=self.chunks, shuffle="shuffle" in filters,
                           fletcher32="fletcher32" in filters)
            others = [f for f in filters if f not in ("shuffle", "fletcher32")]
            if others:
                codec = {"deflate": "gzip", "zstd": "zstd", "lz4": "lz4", "blosc": "blosc"}.get(others[0])
                if codec is None or len(others) > 1:
                    raise InvalidArgumentError(f"cannot rewrite '{self._name}' in '{self._file.filename}' with its "
                                               f"filters {filters}: h5tile writes gzip, zstd, lz4 and blosc")
                options.update(compression=codec, level=self.compression_opts)
        # h5tile's own attributes (h5tile_*) are made anew by the write; the others come back after it.
        kept = {name: raw for name, raw in self.attrs._raw().items() if not name.startswith("h5tile_")}
        lost = sorted(name for name, raw in kept.items()
                      if raw[0] not in _RESTORABLE or (raw[0] == "empty" and raw[2] is None))
        if lost:
            raise InvalidArgumentError(f"cannot rewrite '{self._name}' in '{self._file.filename}': h5tile could not "
                                       f"write back its attributes {lost} (of a type h5tile does not read)")
        from . import to_file
        to_file(data, self._file.filename, self._name, mode="a", **options).wait()
        self._file._catalog.reset()
        # The write replaced the dataset: its attributes come back (those the write made are kept).
        now = set(self.attrs.keys())
        for name, raw in kept.items():
            if name not in now:
                self.attrs._write_raw(name, raw)


_RESTORABLE = ("numbers", "fixed_strings", "variable_strings", "empty")


class _AsType:
    """A dataset read as another dtype (``Dataset.astype``)."""

    def __init__(self, dataset: Dataset, dtype: np.dtype):
        self._dataset, self._dtype = dataset, dtype

    def __getitem__(self, key: Any) -> np.ndarray:
        return np.asarray(self._dataset[key]).astype(self._dtype)

    def __len__(self) -> int:
        return len(self._dataset)

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        return np.asarray(self[()], dtype=dtype)
