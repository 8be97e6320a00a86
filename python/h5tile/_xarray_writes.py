"""``ds.to_netcdf(path, engine="h5tile")``: netCDF-4 files laid out by h5netcdf, filled by h5tile.

The netCDF-4 structure of a file (groups, dimensions as HDF5 dimension scales with their
``REFERENCE_LIST``/``DIMENSION_LIST``, ``_Netcdf4Dimid``, ``_NCProperties``, variables created
with their chunks, filters and fill values, attributes) is what h5netcdf writes: xarray's own
``H5NetCDFStore`` makes it, so ncdump, netCDF4-python and h5netcdf read the file as they read
h5netcdf's. No numeric variable's values go through h5netcdf (strings do, as h5netcdf writes
them, while it lays the file out; Dask-backed ones computed then): each write of one is recorded
while the structure is made, and once it is complete (the first write of a Dask block, or the
store's close) h5netcdf's open is closed and one :class:`h5tile.File` in mode "a" writes them,
each a box of the variable in place (chunks compressed on h5tile's threads, no HDF5 global lock
around them). Dask blocks are written from the threads that computed them, through that File.

With a scheduler of processes (``dask.distributed``, ``multiprocessing``), xarray closes the store
before the blocks are computed; each block task then opens the file in mode "a" in its worker,
under xarray's lock of the file for that scheduler (a ``distributed.Lock``), writes its block and
closes it: writes of one file from several processes take turns (HDF5 lets one process write a
file at a time); each still compresses its chunks on all of its worker's threads.

Targets other than a local path (``to_netcdf()`` returning bytes) are written by h5netcdf
throughout; URLs are refused (h5tile writes local files).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Optional

import numpy as np
from xarray.backends.h5netcdf_ import H5NetCDFStore
from xarray.backends.locks import get_write_lock
from xarray.namedarray.pycompat import is_chunked_array

from . import _arguments as _args
from . import _via_h5py
from ._objects import File

__all__ = ["H5tileWriteStore"]


class _Writes:
    """The values of one file's variables, written by h5tile once h5netcdf has laid the file out.

    Shared by a store and its groups' stores. ``laying_out`` counts stores inside ``store()``:
    a write then is one of xarray's writes of an in-memory variable, kept (the array, not a copy)
    until the layout is done. The file is open in one library at a time: h5netcdf's open (the
    layout, and reads through the store) is closed before h5tile's File opens it for a write, and
    that File is closed before h5netcdf opens it again (a read through the store after writes, as
    ``xr.decode_cf(store)`` makes). Pickled for a worker process, it keeps the path and the lock
    only: there each write opens the file."""

    def __init__(self, path: str, store: Optional["H5tileWriteStore"], lock: Any):
        self.path, self._store, self._lock = path, store, lock
        self.laying_out = 0
        self._pending: list = []
        self._file: Optional[File] = None
        self._guard = threading.RLock()
        self._pid = os.getpid()
        self._closed = False  # the store closed: later writes (a block still running after another failed) refused

    def __getstate__(self) -> dict:
        if self._pending:
            raise RuntimeError(_args.without_secrets(
                f"to_netcdf to {_args.redacted(self.path)!r}: values of variables not written before the store "
                "was pickled"))
        return {"path": self.path, "lock": self._lock}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["path"], None, state["lock"])  # the store that laid the file out is elsewhere

    def _here(self) -> bool:
        return self._store is not None and os.getpid() == self._pid

    def write(self, name: str, key: Any, value: Any) -> None:
        if self._closed:
            self._check_open()
        if not self._here() or (self._store.autoclose and not self.laying_out):
            # Another process, or a store xarray keeps closed between writes (a scheduler of
            # processes: autoclose): one open per block, in turn.
            with self._lock, File(self.path, "a") as f:
                f[name][key] = value
            return
        with self._guard:
            if self.laying_out:
                self._pending.append((name, key, value))
                return
            file = self._file_for_writes()
        file[name][key] = value  # a File closed meanwhile (by close()) refuses it: nothing reopens

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(_args.without_secrets(
                f"to_netcdf to {_args.redacted(self.path)!r} is over (its store was closed, as after another "
                "block's failure): this write is not made"))

    def _file_for_writes(self) -> File:
        """The File the values go through (h5netcdf's open closed first, where it is open), the
        values kept until now written through it first."""
        with self._guard:
            self._check_open()
            if self._file is None:
                self._store._manager.close()
                # None of h5py's opens of the file may outlive h5netcdf's (h5py's HDF5 would write
                # its metadata over h5tile's at its close); h5tile Files of it forget what they read.
                _via_h5py._close_every_open_of(_via_h5py.identity(self.path))
                _via_h5py.reclaim(self.path)
                self._file = File(self.path, "a")
            pending, self._pending = self._pending, []
            for name, key, value in pending:
                self._file[name][key] = value
            return self._file

    def to_h5netcdf(self) -> None:
        """Before h5netcdf opens the file (a read through the store, more layout): the values
        kept written (outside a layout) and h5tile's File closed. Nothing where it is not open."""
        if not self._here():
            return
        with self._guard:
            if self._pending and not self.laying_out:
                self._file_for_writes()
            file, self._file = self._file, None
            if file is not None:
                file.close()

    def flush(self) -> bool:
        """The values kept written (outside a layout); whether h5tile's File holds the file (its
        writes are in the file as each returns) rather than h5netcdf."""
        if not self._here():
            return True
        with self._guard:
            if self._pending and not self.laying_out:
                self._file_for_writes()
            return self._file is not None

    def close(self) -> None:
        """What is kept written (outside a layout) and h5tile's File closed, whatever fails on the
        way. The store's last close (not one of those xarray makes after each write where it keeps
        the store closed between writes, autoclose) ends the writes: later ones (of blocks still
        running after another failed) are refused, not made in a file reopened."""
        try:
            if self._here() and self._pending and not self.laying_out:
                self._file_for_writes()
        finally:
            with self._guard:
                if self._here() and not self._store.autoclose and not self.laying_out:
                    self._closed = True
                file, self._file = self._file, None
            if file is not None:
                file.close()


class _Target:
    """Where xarray writes one variable: ``target[key] = value`` (a region of the variable: its
    whole, or a Dask block's box), through the file's :class:`_Writes`."""

    def __init__(self, writes: _Writes, name: str, shape: tuple, dtype: Any):
        self.writes, self.name, self.shape, self.dtype = writes, name, shape, dtype
        self.ndim = len(shape)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.writes.write(self.name, key, value)


class H5tileWriteStore(H5NetCDFStore):
    """xarray's h5netcdf store with the values of variables written by h5tile (see the module)."""

    @classmethod
    def open(cls, filename: Any, mode: str = "w", format: Optional[str] = "NETCDF4", group: Optional[str] = None,
             lock: Any = None, autoclose: bool = False, **keywords: Any) -> Any:
        """What ``to_netcdf(engine="h5tile")`` writes through: this store for a local path (the
        values written by h5tile), xarray's h5netcdf store for bytes in memory; a URL refused."""
        if mode == "r":
            raise ValueError("engine='h5tile' writes in modes 'w', 'a' and 'r+'; open_dataset reads")
        if not isinstance(filename, (str, os.PathLike)):  # to_netcdf() without a path: bytes in memory
            return H5NetCDFStore.open(filename, mode=mode, format=format, group=group, lock=lock,
                                      autoclose=autoclose, **keywords)
        path = os.fspath(filename)
        if "://" in path:
            raise ValueError(_args.without_secrets(
                f"to_netcdf to {_args.redacted(path)!r}: engine='h5tile' writes local files; write one locally and "
                "copy it (h5tile reads URLs in place)"))
        store = super().open(path, mode=mode, format=format, group=group, lock=lock, autoclose=autoclose,
                             **keywords)
        store._writes = _Writes(os.path.abspath(path), store, get_write_lock(os.path.abspath(path)))
        return store

    def get_child_store(self, group: str) -> Any:
        child = super().get_child_store(group)
        child._writes = self._writes
        return child

    def store(self, variables: Any, attributes: Any, *args: Any, **kwargs: Any) -> None:
        _check_bytes_attributes(attributes, variables)
        self._writes.laying_out += 1
        try:
            super().store(variables, attributes, *args, **kwargs)
        finally:
            self._writes.laying_out -= 1

    def prepare_variable(self, name: str, variable: Any, check_encoding: bool = False,
                         unlimited_dims: Any = None) -> tuple:
        target, data = super().prepare_variable(name, variable, check_encoding, unlimited_dims)
        stored = self.ds.variables[name]
        if stored.dtype.kind in "SUO":
            # Strings (fixed, variable-length, characters) as h5netcdf writes them, by h5netcdf, now:
            # it writes fixed strings with the file's own type (a NULLTERM one of the classic
            # format holds as many characters as its size), where a conversion would cut one.
            if is_chunked_array(data):
                data = np.asarray(data)
            return target, data
        # The HDF5 name h5netcdf gave it (a variable named as a dimension it does not hold is
        # stored as "_nc4_non_coord_<name>", as netCDF-C stores it).
        return _Target(self._writes, stored._h5ds.name, tuple(stored.shape), stored.dtype), data

    def _acquire(self, needs_lock: bool = True) -> Any:
        writes = self.__dict__.get("_writes")  # None while xarray's __init__ reads the file name
        if writes is not None:
            writes.to_h5netcdf()  # every access of h5netcdf's open of the file goes through here
        return super()._acquire(needs_lock)

    def sync(self) -> None:
        if not self._writes.flush():
            super().sync()

    def close(self, **kwargs: Any) -> None:
        try:
            self._writes.close()
        finally:
            super().close(**kwargs)


def _check_bytes_attributes(attributes: Any, variables: Any) -> None:
    """xarray's check of bytes attributes for engine="h5netcdf" (its writers._validate_attrs, which
    it makes for that engine's name only), before anything is written: the layout is h5netcdf's,
    whose HDF5 strings hold UTF-8 without NUL."""
    every = [("", attributes)] + [(f" of variable {name!r}", v.attrs) for name, v in variables.items()]
    for where, attrs in every:
        for name, value in attrs.items():
            if not isinstance(value, bytes):
                continue
            try:
                value.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(_args.without_secrets(
                    f"Invalid value provided for attribute {name!r}{where}: {value!r}. Only binary data derived from "
                    "UTF-8 encoded strings is allowed for the 'h5tile' engine (h5netcdf's netCDF-4 layout). Consider "
                    "using the 'netcdf4' engine.")) from e
            if b"\x00" in value:
                raise ValueError(_args.without_secrets(
                    f"Invalid value provided for attribute {name!r}{where}: {value!r}. Null characters are not "
                    "permitted for the 'h5tile' engine (h5netcdf's netCDF-4 layout). Consider using the 'netcdf4' "
                    "engine."))
