"""The NumPy dtypes of structured HDF5 types as h5py gives them, and h5py's field selections.

The core reads a compound (other than h5py's complex), enum (other than h5py's bool) or HDF5
array type as opaque bytes exactly as stored (V<n>), which are the bytes h5py returns for it,
and describes the dtype h5py gives it in JSON (``numpy_type``; its form is documented at
``DatasetInfo::numpy_type`` in include/h5tile/io.hpp). Here that JSON becomes the NumPy dtype,
and the bytes read are viewed as it."""
from __future__ import annotations

import json
from typing import Any, Optional, Tuple

import numpy as np

from . import _arguments as _args
from ._h5tile import UnsupportedTypeError


def _from_json(described: Any) -> np.dtype:
    if isinstance(described, str):
        return np.dtype(described)
    if "names" in described:
        return np.dtype({"names": described["names"], "formats": [_from_json(f) for f in described["formats"]],
                         "offsets": described["offsets"], "itemsize": described["itemsize"]})
    base = _from_json(described["base"])
    if "shape" in described:
        return np.dtype((base, tuple(described["shape"])))
    if "enum" in described:
        return np.dtype(base, metadata={"enum": dict(described["enum"])})
    if "h5py_opaque" in described:  # datetime64 / timedelta64 as h5py stores them
        return np.dtype(base, metadata={"h5py_opaque": True})
    return np.dtype(base, metadata={"h5py_encoding": described["h5py_encoding"]})


def _to_json(dtype: np.dtype) -> Any:
    """The inverse of _from_json: ``dtype`` in the core's JSON form."""
    if dtype.fields is not None:
        names = list(dtype.names)
        return {"names": names, "formats": [_to_json(dtype.fields[n][0]) for n in names],
                "offsets": [dtype.fields[n][1] for n in names], "itemsize": dtype.itemsize}
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        return {"base": _to_json(base), "shape": list(shape)}
    metadata = dtype.metadata or {}
    if "enum" in metadata:
        return {"base": np.dtype(dtype.str).str, "enum": {str(k): int(v) for k, v in metadata["enum"].items()}}
    if dtype.kind in "Mm":  # stored as h5py stores them: only where marked so (h5py.opaque_dtype), as in h5py
        if not metadata.get("h5py_opaque"):
            raise TypeError(_args.without_secrets(f"No conversion path for dtype: {dtype!r} (h5py.opaque_dtype "
                                                  "stores datetime64 and timedelta64 as opaque bytes)"))
        return {"base": dtype.str, "h5py_opaque": True}
    if dtype.kind == "S" and metadata.get("h5py_encoding") == "utf-8":
        return {"base": dtype.str, "h5py_encoding": "utf-8"}
    if dtype.kind in "biufcSV":
        return dtype.str
    raise UnsupportedTypeError(_args.without_secrets(f"h5tile does not create datasets of {dtype} yet (it makes "
                                                     "numbers, bool, complex, fixed-length strings, opaque bytes, "
                                                     "and compounds, enums and sub-arrays of them)"))


def numpy_type_json(dtype: np.dtype) -> str:
    """``dtype`` in the JSON form of the core's ``numpy_type`` where the core cannot name it itself
    (compounds, sub-arrays, enums, datetimes, big-endian numbers, UTF-8 fixed-length strings); ""
    for the dtypes the core names."""
    plain = dtype.fields is None and dtype.subdtype is None and not (dtype.metadata or {}).get("enum")
    if plain and dtype.kind in "biufcV" and dtype.byteorder != ">":
        return ""
    if plain and dtype.kind == "S" and (dtype.metadata or {}).get("h5py_encoding") != "utf-8":
        return ""
    return json.dumps(_to_json(dtype))


def string_bytes(value: Any, ascii_only: bool) -> bytes:
    """One variable-length string as h5py stores it: a str encoded (ASCII where the strings are,
    else UTF-8; one that does not encode raises UnicodeEncodeError), bytes as they are; anything
    else TypeError, and an embedded NUL (it would end the string in the file) ValueError."""
    if isinstance(value, str):
        value = value.encode("ascii" if ascii_only else "utf-8")
    elif not isinstance(value, bytes):
        raise TypeError(_args.without_secrets(f"Can't implicitly convert non-string objects to strings "
                                              f"({type(value).__name__})"))
    if b"\0" in value:
        raise ValueError("VLEN strings do not support embedded NULLs")
    return bytes(value)


def numpy_dtype(info: dict) -> np.dtype:
    """The dtype of a described dataset as h5py gives it (kept in `info` once made)."""
    made = info.get("_numpy_dtype")
    if made is None:
        described = info.get("numpy_type")
        made = np.dtype(info["dtype"]) if described is None else _from_json(json.loads(described))
        if made.kind == "S" and info.get("charset"):  # h5py's string dtypes say their encoding
            made = np.dtype(made, metadata={"h5py_encoding": info["charset"]})
        elif made.kind == "O" and info.get("charset"):
            made = np.dtype(made, metadata={"vlen": str if info["charset"] == "utf-8" else bytes})
        info["_numpy_dtype"] = made
    return made


def is_structured(info: dict) -> bool:
    """Whether the core reads the dataset as bytes that must be viewed as its dtype."""
    return info.get("numpy_type") is not None


def _has_enum(dtype: np.dtype) -> bool:
    if dtype.subdtype is not None:
        return _has_enum(dtype.subdtype[0])
    if dtype.names is None:
        return bool(dtype.metadata and "enum" in dtype.metadata)
    return any(_has_enum(dtype.fields[name][0]) for name in dtype.names)


def _padding(dtype: np.dtype) -> np.ndarray:
    """A mask of the bytes of one `dtype` element that HDF5's conversion of it to h5py's memory
    type leaves zero: the gaps between the fields of every compound with an enum inside (a
    compound without one is copied whole, its gaps as stored)."""
    covered = np.zeros(dtype.itemsize, bool)

    def cover(dt: np.dtype, at: int) -> None:
        if not _has_enum(dt):
            covered[at:at + dt.itemsize] = True
        elif dt.subdtype is not None and dt.subdtype[0].names is not None:
            base, shape = dt.subdtype
            for i in range(int(np.prod(shape))):
                cover(base, at + i * base.itemsize)
        elif dt.names is not None:
            for name in dt.names:
                field, offset = dt.fields[name][:2]
                cover(field, at + offset)
        else:
            covered[at:at + dt.itemsize] = True

    cover(dtype, 0)
    return ~covered


def as_read(data: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Bytes the core read (V<n>) as `dtype`, a compound or enum dtype (which keeps the shape).

    A compound with an enum inside is the one such type that h5py reads through a conversion
    (it reads enums as their integer type): the bytes between fields are then whatever h5py's
    buffer held (not data: a review saw leftovers of its heap there), and zeros here; h5py reads
    every other one unconverted, padding as stored."""
    if data.dtype == dtype:
        return data
    if dtype.subdtype is not None:
        return data.view(dtype)  # the type's axes appended
    if dtype.names is not None and _has_enum(dtype):
        gaps = _padding(dtype)
        if gaps.any():
            data.reshape(-1).view(np.uint8).reshape(-1, dtype.itemsize)[:, gaps] = 0  # a fresh C-contiguous read, one row per element
    return data.view(dtype)


def as_numpy(data: Any, dtype: np.dtype) -> Any:
    """A selection read as stored bytes (a V<n> array or NumPy void scalar) as h5py gives it
    for `dtype`: a structured array (a NumPy void for one element), an enum's integers (a NumPy
    integer for one), an HDF5 array type's elements with the type's axes after the selection's."""
    if isinstance(data, np.ndarray):
        return as_read(data, dtype)  # 0-d too: h5py's ds[...] of a scalar dataset is a 0-d array
    array = as_read(np.array(data), dtype)
    return array[()] if array.ndim == 0 else array  # ds[()], or every axis an integer: a scalar


def split_field_names(key: Any, dtype: np.dtype, where: str) -> Tuple[tuple, Any]:
    """(the field names in a selection, the rest of it), as h5py takes names anywhere in it:
    ``ds["x"]``, ``ds["x", 0:10]``, ``ds[0:10, "x", "y"]``. ValueError where the dataset's type
    is not compound."""
    parts = key if isinstance(key, tuple) else (key,)
    if any(p is None for p in parts):
        return (), key  # refused by the selection (TypeError), as h5py refuses None before names
    names = tuple(p for p in parts if isinstance(p, str))
    if not names:
        return (), key
    if dtype.names is None:
        raise ValueError(_args.without_secrets(f"field names {list(names)} select fields of a compound type, but "
                                               f"{where} is of type {dtype}: Field names only allowed for "
                                               "compound types"))
    for name in names:
        if name not in dtype.names:
            raise ValueError(_args.without_secrets(f"{where} has no field '{name}' (its fields: "
                                                   f"{list(dtype.names)})"))
    return names, tuple(p for p in parts if not isinstance(p, str))


def field_dtype(dtype: np.dtype, names: tuple) -> np.dtype:
    """The dtype h5py reads `names` of `dtype` as: one field's own dtype, or several fields
    packed in the order named."""
    if len(names) == 1:
        return dtype.fields[names[0]][0]
    return np.dtype([(name, dtype.fields[name][0]) for name in names])


def pick_fields(data: Any, names: tuple) -> Any:
    """Fields `names` of read data (an array or a NumPy void scalar), as h5py returns them: a
    new array of field_dtype (one field: its own values; a scalar where `data` is one). h5py reads
    fields through a conversion, which leaves the gaps of a compound field zero: copied field by
    field into zeros, they are zero here too."""
    if len(names) == 1:
        picked = data[names[0]]
        if not isinstance(picked, np.ndarray):
            return picked
        out = np.zeros(picked.shape, picked.dtype)
        out[...] = picked
        return out
    out = np.zeros(np.shape(data), field_dtype(data.dtype, names))
    for name in names:
        out[name] = data[name]
    return out if isinstance(data, np.ndarray) else out[()]


class FieldsView:
    """``ds.fields(names)``: reads only those fields of a compound dataset, as h5py's
    ``Dataset.fields`` (``ds.fields("x")[0:10]``, ``ds.fields(["x", "y"])[...]``)."""

    def __init__(self, dataset: Any, names: Any):
        self._dataset = dataset
        self._names = (names,) if isinstance(names, str) else tuple(names)
        split_field_names(self._names, dataset.dtype, repr(dataset))

    @property
    def dtype(self) -> np.dtype:
        return field_dtype(self._dataset.dtype, self._names)

    def __getitem__(self, key: Any) -> Any:
        return pick_fields(self._dataset[key], self._names)

    def __array__(self, dtype: Optional[Any] = None, copy: Optional[bool] = None) -> np.ndarray:
        if copy is False:
            raise ValueError("FieldsWrapper.__array__ received copy=False but memory allocation cannot be avoided "
                             "on read (reading fields always makes a new array)")
        data = np.asarray(self[()])
        return data if dtype is None else data.astype(dtype)

    def __len__(self) -> int:
        return len(self._dataset)

    @property
    def shape(self) -> Any:
        return self._dataset.shape

    @property
    def ndim(self) -> int:
        return self._dataset.ndim

    @property
    def size(self) -> Any:
        return self._dataset.size
