"""h5tile: parallel, GPU-aware HDF5 input and output of tiled arrays.

Write any NumPy, CuPy or DLPack array; read back into host (NumPy) or device (CuPy) memory::

    import numpy as np, h5tile
    a = np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000)
    h5tile.to_file(a, "out/result.h5", "/u").wait()     # tiles written in parallel
    b = h5tile.from_file("out/result.h5", "/u")          # numpy.ndarray
    for block, offset in h5tile.from_file_batched("out/result.h5", "/u", (100, 1000)):
        ...                                               # blocks of at most 100 x 1000

The files are ordinary HDF5: h5py reads them.

Functions:
    to_file, from_file, from_file_batched, read_box    write and read arrays, tiles in parallel
    describe                                         a dataset's dtype, shape, layout and filters
    fence                                            wait for every write to_file started
    consolidate, split                               one self-contained dataset <-> tiles
    write_tile, read_tile                            per-rank (MPI) writes and reads
    compressors, cuda_device_count                   what this build and machine offer
    last_device_io, last_remote_io                   what the last GPU or URL read cost
    last_read_pattern                                how the last large local read was shaped (cold or warm)
    settings                                         the settings module (threads, probe, ...)

Classes: File, Group, Dataset, AttributeManager (h5py's object model, reads in parallel),
WriteHandle (a write in progress: wait(), result(), done(), a ``with`` block); h5tile.dask
and h5tile.legate for those frameworks. Ctrl-C stops a wait, a read or an iteration within a
moment, cancelling the work (a cancelled write leaves the previous file as it was).

Errors derive from :class:`h5tile.Error` and from
the built-in exception Python users expect: :class:`NoSuchFileError` is a ``FileNotFoundError``,
:class:`FileAlreadyExistsError` a ``FileExistsError``, :class:`OperationError` (and its subclasses)
a ``RuntimeError``, :class:`InvalidArgumentError` a ``ValueError``, :class:`UnsupportedTypeError` a
``TypeError``, :class:`IoError` an ``OSError``; an argument of the wrong type raises
:class:`ArgumentTypeError`, both a ``TypeError`` and an :class:`InvalidArgumentError`, naming the
argument. Their names differ from the built-ins', so
``from h5tile import *`` leaves those intact.
"""
from __future__ import annotations

from . import _h5tile, settings
from ._functions import (consolidate, describe, from_file, from_file_batched, read_box, read_tile, split, to_file,
                         write_tile)
from ._writes import WriteHandle, fence
from ._objects import AttributeManager, Dataset, Datatype, Empty, ExternalLink, File, Group, HardLink, SoftLink
from ._h5tile import (ArgumentTypeError, CancelledError, DatasetNotFoundError, Error, FileAlreadyExistsError, Hdf5Error,
                      InvalidArgumentError, IoError, IsADirectoryPathError, NoSuchFileError, NotADatasetError,
                      NotHdf5FileError, OperationError, ProbeFailedError, UnsupportedTypeError, VirtualSourceError,
                      compressors, cuda_device_count, last_device_io, last_read_pattern,
                      last_remote_io)

__all__ = [
    "to_file", "from_file", "from_file_batched", "read_box", "describe", "fence", "WriteHandle",
    "write_tile", "read_tile", "consolidate", "split", "compressors", "cuda_device_count", "last_device_io",
    "last_read_pattern", "last_remote_io",
    "File", "Group", "Dataset", "Datatype", "AttributeManager", "Empty", "HardLink", "SoftLink", "ExternalLink",
    "CancelledError",
    "Error", "InvalidArgumentError", "ArgumentTypeError", "UnsupportedTypeError", "DatasetNotFoundError", "NotADatasetError",
    "IsADirectoryPathError", "NoSuchFileError", "FileAlreadyExistsError", "NotHdf5FileError", "ProbeFailedError",
    "VirtualSourceError", "Hdf5Error", "IoError", "OperationError", "settings",
]
__version__: str = _h5tile.__version__  # from CMakeLists.txt, the one place it is written
