"""What ``Group.create_dataset`` makes, from h5py's keywords: the dtype, shape, maximum shape,
chunks (h5py's guess where they are needed and not given), filters and fill value the core's
``create_dataset`` takes, and the data to write into it. Checked as h5py checks them; a keyword
h5tile cannot honour is refused by name, never dropped."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from . import _arguments as _args
from ._h5tile import InvalidArgumentError, UnsupportedTypeError

# h5py's guess of a chunk shape: chunks of about 16 KiB for a dataset of 1 MiB, twice that for
# each tenfold of size, between 8 KiB and 1 MiB; an axis of length 0 counts 1024 elements.
_CHUNK_BASE, _CHUNK_MIN, _CHUNK_MAX = 16 * 1024, 8 * 1024, 1024 * 1024

# h5py's compression names and HDF5 filter numbers, as h5tile's compressors.
_COMPRESSORS = {"gzip": "gzip", 1: "gzip", "lzf": "lzf", 32000: "lzf", 32015: "zstd", 32004: "lz4", 32001: "blosc"}

# h5py's create_dataset keywords that change nothing in what h5tile makes or reads.
_TAKEN_AS_IS = ("track_times", "rdcc_nbytes", "rdcc_w0", "rdcc_nslots", "efile_prefix", "virtual_prefix", "dapl")


def guess_chunk(shape: tuple, itemsize: int) -> tuple:
    """A chunk shape for a dataset of ``shape`` of ``itemsize``-byte elements, as h5py guesses
    one: each axis halved in turn until a chunk is near the target size."""
    dims = [1024 if n == 0 else n for n in shape]
    if not dims:
        return ()
    chunk = np.array(dims, dtype=np.float64)
    total = float(np.prod(chunk)) * itemsize
    target = _CHUNK_BASE * 2 ** math.log10(max(total, 1) / (1024 * 1024))
    target = min(max(target, _CHUNK_MIN), _CHUNK_MAX)
    axis = 0
    while True:
        size = float(np.prod(chunk)) * itemsize
        if (size < target or abs(size - target) / target < 0.5) and size < _CHUNK_MAX or np.prod(chunk) == 1:
            break
        chunk[axis % len(chunk)] = math.ceil(chunk[axis % len(chunk)] / 2.0)
        axis += 1
    return tuple(int(c) for c in chunk)


def core_dtype_name(dtype: np.dtype) -> str:
    """The core's name of ``dtype`` ("float32", "S5", "V7"); UnsupportedTypeError for the others."""
    if dtype.kind == "S":
        return f"S{dtype.itemsize}"
    if dtype.kind == "V" and dtype.fields is None and dtype.subdtype is None:
        return f"V{dtype.itemsize}"
    if dtype.kind in "biufc" and dtype.byteorder != ">" and dtype.subdtype is None:
        return dtype.name
    raise UnsupportedTypeError(_args.without_secrets(f"h5tile does not create datasets of {dtype} yet (it makes "
                                                     "bool, integers, floats, complex, S<n> and V<n>, native byte "
                                                     "order)"))


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(n) for n in shape)


def _compression(compression: Any, opts: Any) -> "tuple[str, int]":
    """(compressor name, level) of h5py's ``compression`` and ``compression_opts``."""
    if compression is None:
        if opts is not None:
            raise TypeError("compression_opts needs compression (h5py: Compression method must be specified)")
        return "", -1
    if isinstance(compression, (int, np.integer)) and 0 <= compression <= 9 and compression not in _COMPRESSORS:
        return "gzip", int(compression)  # h5py: an integer 0-9 is a gzip level
    name = _COMPRESSORS.get(compression if not isinstance(compression, np.integer) else int(compression))
    if name is None:
        raise InvalidArgumentError(_args.without_secrets(f"compression {compression!r}: h5tile writes gzip (HDF5's "
                                                         "deflate, filter 1), lzf (h5py's, 32000) and hdf5plugin's "
                                                         "zstd (32015), lz4 (32004) and blosc (32001)"))
    if name == "gzip":
        level = 4 if opts is None else opts
        if not isinstance(level, (int, np.integer)) or not 0 <= level <= 9:
            raise ValueError(_args.without_secrets(f"GZIP setting must be an integer from 0-9, not {level!r}"))
        return name, int(level)
    if name == "zstd" and opts:
        return name, int(opts[0] if isinstance(opts, (tuple, list)) else opts)
    if name == "blosc" and opts:
        return name, int(opts[4]) if len(opts) > 4 else -1
    return name, -1


def plan(shape: Any, dtype: Any, data: Any, keywords: dict) -> "tuple[dict, Optional[np.ndarray]]":
    """(the core's create_dataset keywords, the data to write after it or None) of h5py's
    ``create_dataset(name, shape, dtype, data, **keywords)``."""
    keywords = dict(keywords)
    for name in _TAKEN_AS_IS:
        keywords.pop(name, None)
    if data is not None and not isinstance(data, np.ndarray):
        data = np.asarray(data, order="C", dtype=dtype)
    elif data is not None and dtype is not None:
        data = np.asarray(data, order="C", dtype=dtype)
    if data is not None:
        if shape is not None and int(np.prod(_shape(shape), dtype=object)) != data.size:
            raise ValueError("Shape tuple is incompatible with data")
        shape = _shape(shape) if shape is not None else data.shape
        data = data.reshape(shape)
        dtype = data.dtype
    elif shape is None:
        raise TypeError("One of data, shape or dtype must be specified")
    shape = _shape(shape)
    dtype = np.dtype("f4" if dtype is None else dtype)
    maxshape = keywords.pop("maxshape", None)
    if maxshape is not None:
        maxshape = (maxshape,) if isinstance(maxshape, (int, np.integer)) or maxshape is None else tuple(maxshape)
        maxshape = tuple(None if m is None else int(m) for m in maxshape)
        if len(maxshape) != len(shape):
            raise ValueError("Dimensionality of shape and maxshape must match")
        if any(m is not None and m < n for m, n in zip(maxshape, shape)):
            raise ValueError("All maxshape dimensions must be >= shape dimensions")
    chunks = keywords.pop("chunks", None)
    compressor, level = _compression(keywords.pop("compression", None), keywords.pop("compression_opts", None))
    shuffle = bool(keywords.pop("shuffle", False))
    fletcher32 = bool(keywords.pop("fletcher32", False))
    fillvalue = keywords.pop("fillvalue", None)
    track_order = bool(keywords.pop("track_order", None) or False)
    for name in ("scaleoffset", "external", "dcpl", "fill_time", "allow_unknown_filter"):
        if keywords.get(name) not in (None, False):
            raise InvalidArgumentError(_args.without_secrets(f"create_dataset: h5tile does not make datasets with "
                                                             f"{name}= yet"))
        keywords.pop(name, None)
    if keywords:
        raise TypeError(_args.without_secrets(f"create_dataset() got an unexpected keyword argument "
                                              f"{next(iter(keywords))!r}"))
    filtered = bool(compressor) or shuffle or fletcher32
    if chunks is False and (filtered or maxshape is not None):
        raise ValueError("Chunked format required for given storage options")
    if chunks is True or (chunks is None and (filtered or (maxshape is not None and maxshape != shape))):
        if not shape:
            raise TypeError("Scalar datasets don't support chunk/filter options")
        chunks = guess_chunk(shape, dtype.itemsize)
    elif chunks in (None, False):
        chunks = ()
    else:
        chunks = _shape(chunks)
        if len(chunks) != len(shape):
            raise ValueError(_args.without_secrets("Chunk shape must not be greater than data shape in any "
                                                   f"dimension. {chunks} is not compatible with {shape}"))
        for c, n, m in zip(chunks, shape, maxshape or shape):
            if m is not None and c > m:
                raise ValueError(_args.without_secrets("Chunk shape must not be greater than data shape in "
                                                       f"any dimension. {chunks} is not compatible with {shape}"))
    fill = b""
    if fillvalue is not None:
        fill = np.array(fillvalue, dtype=dtype).tobytes()
    core = dict(dtype=core_dtype_name(dtype), shape=list(shape),
                max_shape=list(maxshape) if maxshape is not None else [], chunk=list(chunks),
                compressor=compressor, level=level, shuffle=shuffle, fletcher32=fletcher32,
                fill_value=fill, track_order=track_order)
    return core, data
