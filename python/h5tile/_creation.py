"""What ``Group.create_dataset`` makes, from h5py's keywords: the dtype, shape, maximum shape,
chunks (h5py's guess where they are needed and not given), filters and fill value the core's
``create_dataset`` takes, and the data to write into it. Checked as h5py checks them; a keyword
h5tile cannot honour is refused by name, never dropped."""
from __future__ import annotations

import math
import operator
import os
from typing import Any, Optional

import numpy as np

from . import _arguments as _args
from . import _dtypes
from ._h5tile import InvalidArgumentError, UnsupportedTypeError

# h5py's guess of a chunk shape: chunks of about 16 KiB for a dataset of 1 MiB, twice that for
# each tenfold of size, between 8 KiB and 1 MiB; an axis of length 0 counts 1024 elements.
_CHUNK_BASE, _CHUNK_MIN, _CHUNK_MAX = 16 * 1024, 8 * 1024, 1024 * 1024

# h5py's compression names and HDF5 filter numbers, as h5tile's compressors.
_COMPRESSORS = {"gzip": "gzip", 1: "gzip", "lzf": "lzf", 32000: "lzf", 32015: "zstd", 32004: "lz4", 32001: "blosc"}

# h5py's create_dataset keywords that change nothing in what h5tile makes or reads.
_UNLIMITED = 2**64 - 1  # h5py's h5f.UNLIMITED: an external file used as far as needed
_TAKEN_AS_IS = ("rdcc_nbytes", "rdcc_w0", "rdcc_nslots", "virtual_prefix", "dapl")


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


def string_kind(dtype: np.dtype) -> "type | None":
    """str or bytes for h5py's variable-length string dtypes (``h5py.string_dtype()``: an object
    dtype whose metadata says ``vlen``); None for any other dtype."""
    vlen = (dtype.metadata or {}).get("vlen") if dtype.kind == "O" else None
    return vlen if vlen in (str, bytes) else None


def only_hdf5_writes(dtype: Any, data: Any = None) -> bool:
    """Whether a new dataset of ``dtype`` (or, where it is None, of ``data``) is of a type h5tile's
    core does not write and HDF5 does (h5py makes it then, _objects.Group.create_dataset):
    variable-length sequences, references, compounds and sub-arrays with such members or with
    variable-length strings, 128-bit floats and 256-bit complex numbers."""
    if dtype is None:
        if _is_empty(data) or isinstance(data, np.ndarray):
            dtype = data.dtype
        elif isinstance(data, (list, tuple)) and data:
            return _is_h5py_reference(data[0])
        else:
            return _is_h5py_reference(data)
    try:  # a dtype, or what NumPy makes one of (a name, a type, a list of fields)
        dtype = np.dtype(dtype)
    except (TypeError, ValueError):
        return False  # create_dataset's own checks name it
    return _only_hdf5(dtype)


def _only_hdf5(dtype: np.dtype) -> bool:
    if dtype.fields is not None:
        members = [dtype.fields[n][0] for n in dtype.names]
        return any(string_kind(m) is not None or _only_hdf5(m) for m in members)
    if dtype.subdtype is not None:
        base = dtype.subdtype[0]
        return string_kind(base) is not None or _only_hdf5(base)
    if dtype.kind == "O":
        return string_kind(dtype) is None and bool({"vlen", "ref"} & set(dtype.metadata or {}))
    return (dtype.kind == "f" and dtype.itemsize > 8) or (dtype.kind == "c" and dtype.itemsize > 16)


def _is_h5py_reference(value: Any) -> bool:
    kind = type(value)
    return kind.__name__ in ("Reference", "RegionReference") and kind.__module__.startswith("h5py")


def _item_type(data: Any) -> "type | None":
    """str or bytes where every item of the (nested) lists, tuples or object array `data` is one,
    exactly (not NumPy's str_ or bytes_), as h5py's ``guess_dtype`` finds them; None otherwise."""
    if type(data) in (str, bytes):
        return type(data)
    if isinstance(data, np.ndarray) and data.dtype.kind != "O":
        return None
    if not isinstance(data, (list, tuple, np.ndarray)):
        return None
    found = {_item_type(item) for item in data}
    return found.pop() if len(found) == 1 else None


def guess_string_dtype(data: Any) -> "np.dtype | None":
    """h5py's variable-length string dtype for data made of str (UTF-8) or bytes (ASCII) items;
    None for an array that already says its string dtype (kept, as h5py keeps it)."""
    if isinstance(data, np.ndarray) and string_kind(data.dtype) is not None:
        return None
    kind = _item_type(data)
    return None if kind is None else np.dtype("O", metadata={"vlen": kind})


def type_keywords(dtype: np.dtype) -> dict:
    """The core's ``dtype``, ``numpy_type`` and ``charset`` of a NumPy dtype (create_dataset's and
    commit_datatype's)."""
    numpy_type = "" if string_kind(dtype) else _dtypes.numpy_type_json(dtype)
    charset = {str: "utf-8", bytes: "ascii"}.get(string_kind(dtype), "")
    return dict(dtype=f"V{dtype.itemsize}" if numpy_type else core_dtype_name(dtype), numpy_type=numpy_type,
                charset=charset)


def core_dtype_name(dtype: np.dtype) -> str:
    """The core's name of ``dtype`` ("float32", "S5", "V7", "object" for variable-length strings);
    UnsupportedTypeError for the others."""
    if string_kind(dtype) is not None:
        return "object"
    if dtype.kind == "O":
        raise TypeError(_args.without_secrets(f"Object dtype {dtype!r} has no native HDF5 equivalent"))
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
    """A shape as a tuple of ints; OverflowError for a negative length (as h5py's hsize_t)."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise OverflowError(_args.without_secrets(f"can't convert negative value to hsize_t (shape {shape})"))
    return shape


# hdf5plugin's Blosc client data: (filter version, format version, element size, chunk bytes,
# level, shuffle (0 none, 1 bytes, 2 bits), compressor (0 blosclz, 1 lz4, 2 lz4hc, 3 snappy, 4 zlib,
# 5 zstd)); h5tile writes Blosc with lz4, its bytes shuffled or not.
_BLOSC_LZ4, _BLOSC_BITSHUFFLE = 1, 2


def _blosc(opts: Any) -> "tuple[str, int, bool]":
    """("blosc", level, Blosc's own byte shuffle) of hdf5plugin's Blosc client data; refuses what
    h5tile does not write (another compressor than lz4, bit shuffle) instead of writing otherwise."""
    opts = tuple(opts or ())
    level = int(opts[4]) if len(opts) > 4 else -1
    shuffle = int(opts[5]) if len(opts) > 5 else 1
    cname = int(opts[6]) if len(opts) > 6 else _BLOSC_LZ4
    if cname != _BLOSC_LZ4 or shuffle == _BLOSC_BITSHUFFLE:
        raise InvalidArgumentError(_args.without_secrets(f"Blosc with client data {opts}: h5tile writes Blosc with "
                                                         "its lz4 compressor and byte shuffle or none (hdf5plugin's "
                                                         "Blosc(cname='lz4', shuffle=Blosc.SHUFFLE or "
                                                         "Blosc.NOSHUFFLE))"))
    return "blosc", level, shuffle == 1


def _compression(compression: Any, opts: Any) -> "tuple[str, int, bool]":
    """(compressor name, level, Blosc's own shuffle) of h5py's ``compression`` and
    ``compression_opts``."""
    if compression is None:
        if opts is not None:
            raise TypeError("compression_opts needs compression (h5py: Compression method must be specified)")
        return "", -1, False
    if isinstance(compression, (int, np.integer)) and 0 <= compression <= 9 and compression not in _COMPRESSORS:
        return "gzip", int(compression), False  # h5py: an integer 0-9 is a gzip level
    name = _COMPRESSORS.get(compression if not isinstance(compression, np.integer) else int(compression))
    if name is None:
        raise InvalidArgumentError(_args.without_secrets(f"compression {compression!r}: h5tile writes gzip (HDF5's "
                                                         "deflate, filter 1), lzf (h5py's, 32000) and hdf5plugin's "
                                                         "zstd (32015), lz4 (32004) and blosc (32001)"))
    if name == "gzip":
        level = 4 if opts is None else opts
        if not isinstance(level, (int, np.integer)) or not 0 <= level <= 9:
            raise ValueError(_args.without_secrets(f"GZIP setting must be an integer from 0-9, not {level!r}"))
        return name, int(level), False
    if name == "lzf" and opts is not None:
        raise ValueError("LZF compression filter accepts no options")
    if name == "zstd" and opts:
        return name, int(opts[0] if isinstance(opts, (tuple, list)) else opts), False
    if name == "blosc":
        return _blosc(opts)
    return name, -1, False


def plan(shape: Any, dtype: Any, data: Any, keywords: dict) -> "tuple[dict, Optional[np.ndarray]]":
    """(the core's create_dataset keywords, the data to write after it or None) of h5py's
    ``create_dataset(name, shape, dtype, data, **keywords)``."""
    keywords = dict(keywords)
    for name in _TAKEN_AS_IS:
        keywords.pop(name, None)
    if _is_empty(data):  # h5py.Empty(dtype) or h5tile.Empty(dtype) as the data: no elements
        dtype, data, shape = data.dtype if dtype is None else dtype, None, None
    if data is not None and dtype is None:
        dtype = guess_string_dtype(data)  # str and bytes items: variable-length strings, as h5py guesses
    if data is not None and dtype is not None and np.dtype(dtype).subdtype is not None:
        raise ValueError(_args.without_secrets(f"data= with the sub-array dtype {np.dtype(dtype)}: NumPy would "
                                               "spread each element over new axes; create the dataset with a "
                                               "shape, then write the data"))
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
    null_space = False
    if data is None and shape is None:
        if dtype is None:
            raise TypeError("One of data, shape or dtype must be specified")
        null_space, shape = True, ()  # h5py's Empty: a dataset without elements
    shape = _shape(shape)
    dtype = np.dtype("f4" if dtype is None else dtype)
    if not shape:
        _check_no_chunks(null_space, keywords)
    maxshape = keywords.pop("maxshape", None)
    if maxshape is not None:
        maxshape = (maxshape,) if isinstance(maxshape, (int, np.integer)) or maxshape is None else tuple(maxshape)
        maxshape = tuple(None if m is None else int(m) for m in maxshape)
        if len(maxshape) != len(shape):
            raise ValueError("Dimensionality of shape and maxshape must match")
        if any(m is not None and m < n for m, n in zip(maxshape, shape)):
            raise ValueError("All maxshape dimensions must be >= shape dimensions")
    chunks = keywords.pop("chunks", None)
    compressor, level, blosc_shuffle = _compression(keywords.pop("compression", None),
                                                    keywords.pop("compression_opts", None))
    shuffle = bool(keywords.pop("shuffle", False))
    if compressor == "blosc":
        if shuffle:
            raise InvalidArgumentError("shuffle=True with Blosc: h5tile writes Blosc's own shuffle (its client data) "
                                       "and not HDF5's shuffle filter before it")
        shuffle = blosc_shuffle
    fletcher32 = bool(keywords.pop("fletcher32", False))
    track_times = keywords.pop("track_times", None)
    if track_times not in (None, True, False):
        raise TypeError("track_times must be either True or False")
    fillvalue = keywords.pop("fillvalue", None)
    track_order = bool(keywords.pop("track_order", None) or False)
    scaleoffset = _scale_offset(keywords.pop("scaleoffset", None), dtype, fletcher32)
    external = _external(keywords.pop("external", None))
    if keywords.pop("efile_prefix", None) is not None and any(not os.path.isabs(e[0]) for e in external):
        # HDF5 would find relative external files in that folder; h5tile's would be in the process's
        raise InvalidArgumentError(_args.without_secrets("create_dataset: h5tile does not take efile_prefix yet: "
                                                         "give the external files absolute names"))
    fill_time = keywords.pop("fill_time", None)
    if fill_time is not None and fill_time not in ("ifset", "alloc", "never"):
        raise ValueError(_args.without_secrets("fill_time must be one of the following choices: 'alloc', 'never' or "
                                               f"'ifset', but it is {fill_time}."))
    for name in ("dcpl", "allow_unknown_filter"):
        value = keywords.get(name)
        if value is not None and value is not False:  # scaleoffset=0 asks for the filter too
            raise InvalidArgumentError(_args.without_secrets(f"create_dataset: h5tile does not make datasets with "
                                                             f"{name}= yet"))
        keywords.pop(name, None)
    if keywords:
        raise TypeError(_args.without_secrets(f"create_dataset() got an unexpected keyword argument "
                                              f"{next(iter(keywords))!r}"))
    filtered = bool(compressor) or shuffle or fletcher32 or scaleoffset is not None
    extendable = bool(maxshape) and not external  # external storage grows without chunks; () for a scalar
    if chunks is False and (filtered or extendable):
        raise ValueError("Chunked format required for given storage options")
    if chunks is True or (chunks is None and (filtered or extendable)):  # (a shape: _check_no_chunks)
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
        if string_kind(dtype) is not None:  # a variable-length string's fill value: its bytes
            fill = _string_fill(fillvalue, string_kind(dtype))
        else:
            given = np.asarray(fillvalue)
            if dtype.names is not None and given.dtype.names is None:  # HDF5 converts no number to a compound
                raise ValueError(_args.without_secrets(f"fillvalue {fillvalue!r} for the compound dtype {dtype}: give "
                                                       "a value of that dtype (h5py: no conversion path)"))
            fill = np.array(fillvalue, dtype=dtype).tobytes()
    core = dict(**type_keywords(dtype), shape=list(shape),
                max_shape=list(maxshape) if maxshape is not None else [], chunk=list(chunks),
                compressor=compressor, level=level, shuffle=shuffle, fletcher32=fletcher32,
                fill_value=fill, track_order=track_order, fill_time=fill_time or "ifset", scale_offset=scaleoffset,
                external=external, null_space=null_space, track_times=bool(track_times))
    return core, data


def _check_no_chunks(null_space: bool, keywords: dict) -> None:
    """h5py's refusals for an empty (null dataspace) or scalar dataset: no chunks or filters
    (TypeError, before any other check of them), no maximum shape."""
    kind = "Empty" if null_space else "Scalar"
    options = ("chunks", "compression", "compression_opts", "shuffle", "fletcher32")
    if any(keywords.get(k) for k in options) or keywords.get("scaleoffset") is not None:
        raise TypeError(_args.without_secrets(f"{kind} datasets don't support chunk/filter options"))
    if keywords.get("maxshape") not in (None, ()):
        raise TypeError(_args.without_secrets(f"{kind} datasets cannot be extended"))


def _string_fill(value: Any, kind: type) -> bytes:
    """The bytes of a variable-length string's fill value: a str (encoded as the dataset's strings
    are), bytes, or a NumPy scalar or 0-d array of one."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return _dtypes.string_bytes(value, ascii_only=kind is bytes)


def _is_empty(data: Any) -> bool:
    """Whether `data` is h5py's or h5tile's ``Empty`` (a dtype and no elements)."""
    named = any(c.__name__ == "Empty" for c in type(data).__mro__)  # a subclass of either too
    return named and hasattr(data, "dtype") and not isinstance(data, np.ndarray)


def _scale_offset(value: Any, dtype: np.dtype, fletcher32: bool) -> "Optional[int]":
    """The scale-offset filter's factor as h5py takes ``scaleoffset``: True for integers (HDF5
    finds the bits), a whole number of bits (integers) or decimal digits (floats); None: none."""
    if value is None:
        return None
    if value < 0:
        raise ValueError("scale factor must be >= 0")
    if dtype.kind == "f":
        if value is True:
            raise ValueError("integer scaleoffset must be provided for floating point types")
    elif dtype.kind in "ui":
        if value is True:
            value = 0  # HDF5's H5Z_SO_INT_MINBITS_DEFAULT
    else:
        raise TypeError("scale/offset filter only supported for integer and floating-point types")
    if fletcher32:
        raise ValueError("fletcher32 cannot be used with potentially lossy scale/offset filter")
    return int(value)


def _external(value: Any) -> list:
    """h5py's ``external``: a file name, or tuples of (name, offset, size), as (name, offset, size
    or None for as much as needed)."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [(value, 0, None)]
    entries = []
    for entry in value:
        if not isinstance(entry, tuple):
            raise TypeError("Each external entry must be a tuple of (name, offset, size)")
        name, offset, size = entry  # ValueError without three items, as h5py
        name = os.fsdecode(name)
        offset = operator.index(offset)
        size = None if size is None or size == _UNLIMITED else operator.index(size)
        entries.append((name, offset, size))
    return entries
