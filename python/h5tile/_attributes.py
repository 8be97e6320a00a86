"""Attributes of h5tile's h5py-style objects: :class:`AttributeManager` (``obj.attrs``) and
:class:`Empty` (the value of an attribute with no elements), read and written through the core's
attribute functions; the file is opened by path on each call, as the objects do."""
from __future__ import annotations

import functools
import os
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from . import _arguments as _args
from . import _via_h5py
from . import _h5tile
from ._arrays import prepare
from ._h5tile import (ArgumentTypeError, DatasetNotFoundError, InvalidArgumentError, IoError,
                      UnsupportedTypeError)

if TYPE_CHECKING:
    from ._base import _Object


class Empty:
    """The value of an attribute with no elements (a null dataspace): only a dtype, as h5py's
    ``h5py.Empty``."""

    def __init__(self, dtype: Any):
        self.dtype = np.dtype(dtype) if dtype is not None else None

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Empty) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("Empty", self.dtype))

    def __repr__(self) -> str:
        return _args.without_secrets(f"Empty(dtype={self.dtype!r})")




def _text_name(name: Any) -> Any:
    """An attribute name given as ``bytes`` (h5py takes them: HDF5's names are bytes) as the text
    h5tile lists it by, UTF-8 (bytes that are not UTF-8 as surrogates, so that they are simply not
    found); any other name as it is."""
    return name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name


def _by_name(attributes: list) -> dict:
    """_h5tile.read_attributes's [(name, kind, shape, value, width)] as {name: (kind, shape,
    value, width)}."""
    return {name: (kind, shape, value, width) for name, kind, shape, value, width in attributes}


def _vlen_encoding(dtype: np.dtype) -> Any:
    """The encoding of a variable-length string dtype as h5py marks one (``h5py.string_dtype()``:
    object, with ``{"vlen": str}`` or ``{"vlen": bytes}`` as metadata): "utf-8", "ascii", or None."""
    kind = (dtype.metadata or {}).get("vlen") if dtype.kind == "O" else None
    return "utf-8" if kind is str else "ascii" if kind is bytes else None


def _find_item_type(data: Any) -> Any:
    """The one type of the items of ``data`` (lists and tuples, nested; object arrays), or of
    ``data`` itself where it is not a collection; None where they differ: h5py's
    ``find_item_type``, by which it guesses a string dtype."""
    if isinstance(data, np.ndarray):
        if data.dtype.kind != "O" or (data.dtype.metadata or {}).get("vlen") is not None:
            return None
        item_types = {type(e) for e in data.flat}
    elif isinstance(data, (list, tuple)):
        item_types = {_find_item_type(e) for e in data}
    else:
        return type(data)
    return item_types.pop() if len(item_types) == 1 else None


def _guess_dtype(data: Any) -> Any:
    """h5py's ``guess_dtype``: a variable-length string dtype where the items are all ``str``
    (UTF-8) or all ``bytes`` (ASCII), else None (NumPy's guess stands)."""
    item_type = _find_item_type(data)
    if item_type is bytes:
        return np.dtype("O", metadata={"vlen": bytes})
    if item_type is str:
        return np.dtype("O", metadata={"vlen": str})
    return None


def _is_h5py_reference_type(item_type: Any) -> bool:
    """Whether ``item_type`` is h5py's Reference or RegionReference (which h5py stores)."""
    return (isinstance(item_type, type) and item_type.__name__ in ("Reference", "RegionReference")
            and item_type.__module__.startswith("h5py"))


def _no_conversion(where: str, source: np.dtype, target: np.dtype) -> IoError:
    """What h5py raises (OSError) where HDF5 has no conversion from an array's type to the type of
    the attribute it modifies."""
    return IoError(_args.without_secrets(f"{where}: Can't synchronously write data (no appropriate function for "
                                         f"conversion path): HDF5 does not convert {source} to the attribute's "
                                         f"type ({target})"))


def _hdf5_converted(array: np.ndarray, target: np.dtype, kind: str, where: str) -> np.ndarray:
    """``array`` converted to the type of an existing attribute (``kind`` as read_attributes names
    it, NumPy dtype ``target``) as HDF5 converts it when h5py's ``modify`` writes an array:
    integers saturate at the target's limits, floats are truncated toward zero (NaN to 0), an
    integer into a bool (an HDF5 enum) keeps its byte; no conversion between numbers and strings,
    or between complex and real numbers."""
    source = array.dtype
    if source.kind == "U":
        raise ArgumentTypeError(_args.without_secrets(f"{where}: No conversion path for dtype: {source!r}"))
    if kind == "variable_strings":
        if source.kind in "OS":
            return array.astype(object)
        raise ArgumentTypeError(_args.without_secrets(f"{where}: Operation not defined for data type class: HDF5 "
                                                      f"does not convert {source} to a variable-length string"))
    if kind == "fixed_strings":
        if source.kind == "S":
            return array.astype(target)
        raise _no_conversion(where, source, target)
    if source == target:
        return array
    if source.kind == "V" or target.kind == "V":
        if source.kind == target.kind and source.itemsize == target.itemsize:
            return array.view(target)
        raise _no_conversion(where, source, target)
    if source.kind not in "biufc" or (source.kind == "c") != (target.kind == "c"):
        raise _no_conversion(where, source, target)
    if target.kind == "b":
        if source.kind == "b":
            return array.astype(target)
        if source.kind in "iu":
            return np.array([min(max(v, -128), 127) for v in array.ravel().tolist()],
                            dtype=np.int8).reshape(array.shape).view(np.bool_)
        raise _no_conversion(where, source, target)
    if target.kind in "iu" and source.kind in "iu":
        info = np.iinfo(target)
        return np.array([min(max(v, int(info.min)), int(info.max)) for v in array.ravel().tolist()],
                        dtype=target).reshape(array.shape)
    if target.kind in "iu" and source.kind == "f":
        info = np.iinfo(target)
        truncated = np.trunc(array.astype(np.float64))
        out = np.zeros(array.shape, dtype=target)  # NaN: 0
        high, low = truncated >= float(info.max), truncated <= float(info.min)
        middle = ~(high | low | np.isnan(truncated))
        out[high], out[low] = info.max, info.min
        out[middle] = truncated[middle].astype(target)
        return out
    with np.errstate(over="ignore", invalid="ignore"):
        return array.astype(target)  # to floats or complex: overflow to infinity, as HDF5


def _core_strides(array: np.ndarray) -> np.ndarray:
    """``array`` (C-ordered) with the strides the core checks for contiguity: NumPy gives an array
    with no elements strides of 0, which the core takes for a non-contiguous array."""
    if array.size != 0:
        return array
    strides, step = [], array.itemsize
    for n in reversed(array.shape):
        strides.insert(0, step)
        step *= n
    return np.lib.stride_tricks.as_strided(array, shape=array.shape, strides=tuple(strides))


def _writing(method: Callable[..., Any]) -> Callable[..., Any]:
    """A write of attributes: with no read through h5py of this process meanwhile; counted as a
    change of the file (other Files of it forget the attributes they read)."""
    @functools.wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _via_h5py.WRITES:
            try:
                return method(self, *args, **kwargs)
            finally:
                self._obj._file._attributes_changed()
    return locked


def _named_type_in(dtype: Any, file: Any) -> "str | None":
    """The path of `dtype` where it is a named datatype (h5tile's Datatype) of `file`, else None."""
    if type(dtype).__name__ != "Datatype" or not hasattr(dtype, "file") or not hasattr(dtype, "name"):
        return None
    same = os.path.abspath(dtype.file.filename) == os.path.abspath(file.filename)
    return dtype.name if same else None


class _OnlyHdf5Writes(Exception):
    """An attribute of a type h5tile's core does not write (variable-length sequences, references,
    HDF5 array types): raised before the file changes, and made by h5py instead (create)."""


class AttributeManager(MutableMapping):
    """The attributes of a group or dataset (``obj.attrs``), as h5py's: a mapping from names to
    values. Numbers read as NumPy scalars or arrays, fixed-length strings as ``bytes``
    (``numpy.bytes_``), variable-length ones as ``str``, a null dataspace as :class:`Empty`,
    object references (and lists of them, as netCDF-4's ``DIMENSION_LIST``) as an object array
    whose elements are tuples of the paths referred to (h5py gives ``Reference`` objects).
    Writes (mode "a"/"r+") change the file in place, storing what h5py stores: ``str`` (and lists
    of them) as variable-length UTF-8 strings, ``bytes`` (and lists of them) as variable-length
    strings too (h5py marks them ASCII, h5tile's core UTF-8), NumPy ``bytes_`` and ``S<n>`` arrays
    as fixed-length, numbers with their dtype; a value HDF5 has no type for (``None``, a dict, a
    NumPy ``str`` array...) raises :class:`TypeError`. ``modify`` keeps the attribute's type.

    >>> with h5tile.File("data.h5", "a") as f:    # doctest: +SKIP
    ...     f["x"].attrs["units"] = "m/s"
    ...     dict(f["x"].attrs)                     # {'units': 'm/s'}
    """

    def get_id(self, name: str) -> Any:
        """h5py's low-level ``AttrID`` of attribute `name`, from h5py's read-only open of the file
        (see ``Dataset.id``)."""
        return _via_h5py.object_of(self._obj._file._h5py_view(), self._obj._name).attrs.get_id(name)

    def __init__(self, obj: _Object):
        self._obj = obj

    def _raw(self) -> dict:
        f = self._obj._file
        f._check_open()
        preloaded = f._attributes_of(self._obj._name)
        if preloaded is not None:
            # Copies: the arrays returned are the caller's to change, as when read anew.
            return {name: (kind, shape, value.copy() if isinstance(value, np.ndarray) else value, width)
                    for name, (kind, shape, value, width) in preloaded.items()}
        return _by_name(_h5tile.read_attributes(f.filename, self._obj._name))

    def __getitem__(self, name: str) -> Any:
        name = _text_name(name)
        raw = self._raw()
        if name not in raw:
            raise DatasetNotFoundError(_args.without_secrets(f"attribute '{name}' of '{self._obj._name}' in "
                                                             f"'{self._obj._file._shown}' does not exist"))
        kind = raw[name][0]
        if kind not in _READ_KINDS and not self._obj._file._is_url():
            # A type only HDF5 reads (variable-length sequences...): through h5py where installed.
            value = _via_h5py.attribute(self._obj._file._path_text, self._obj._name, name)
            if value is not _via_h5py.MISSING:
                return value
        return _attribute_value(*raw[name])

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._raw()))

    def __len__(self) -> int:
        return len(self._raw())

    def __contains__(self, name: object) -> bool:
        return _text_name(name) in self._raw()

    def __setitem__(self, name: str, value: Any) -> None:
        self.create(name, value)

    @_writing
    def create(self, name: str, data: Any, shape: Any = None, dtype: Any = None) -> None:
        """Creates (or replaces) attribute ``name`` from ``data``, as h5py's ``create``: the dtype
        guessed as h5py guesses it (``str``, and lists or object arrays of ``str``: variable-length
        UTF-8; ``bytes`` and lists of them: variable-length; NumPy ``bytes_`` and ``S<n>`` arrays:
        fixed-length; numbers: ``np.asarray``'s dtype), or ``dtype`` where given, reshaped to
        ``shape`` where given. A value HDF5 has no type for (``None``, a dict, any other object, a
        NumPy ``str`` array) raises :class:`TypeError`, as h5py does, and leaves the file as it was."""
        name = _text_name(name)
        f = self._obj._file
        f._check_writable(f"write attribute '{name}' of '{self._obj._name}'")
        if isinstance(data, Empty) or (type(data).__name__ == "Empty" and hasattr(data, "dtype")):  # h5py's too
            if data.dtype is None:
                raise InvalidArgumentError(_args.without_secrets(f"attribute '{name}': an Empty value needs a dtype"))
            empty = np.dtype(data.dtype)
            _h5tile.write_empty_attribute(f.filename, self._obj._name, name,
                                          f"V{empty.itemsize}" if empty.kind == "V" else empty.name)
            return
        named = _named_type_in(dtype, f)
        try:
            if named is not None:
                raise _OnlyHdf5Writes()  # the attribute's type is the named type itself, as h5py links it
            array, vlen = self._new_value(name, data, shape, dtype)
            self._write(name, array, vlen, data)
        except _OnlyHdf5Writes:  # made by h5py, which h5tile lends the file to (File._through_h5py)
            with f._through_h5py(f"write attribute '{name}' of '{self._obj._name}'") as h5py_file:
                if named is not None:
                    dtype = _via_h5py.object_of(h5py_file, named)
                _via_h5py.object_of(h5py_file, self._obj._name).attrs.create(name, data, shape=shape, dtype=dtype)

    @_writing
    def modify(self, name: str, value: Any) -> None:
        """Changes the value of attribute ``name`` keeping its type and shape, as h5py's ``modify``:
        the value is converted to the attribute's dtype (a NumPy array as HDF5 converts it:
        integers saturate, floats are truncated toward zero); a value of another shape raises
        :class:`TypeError` (``()`` and ``(1,)`` are interchangeable), an attribute with no elements
        (:class:`Empty`) :class:`OSError`. An attribute that does not exist is created, as by
        ``attrs[name] = value``."""
        name = _text_name(name)
        f = self._obj._file
        f._check_writable(f"modify attribute '{name}' of '{self._obj._name}'")
        raw = self._raw()
        if name not in raw:
            self.create(name, value)
            return
        kind, shape, old, width = raw[name]
        where = f"attribute '{name}' of '{self._obj._name}'"
        if kind == "empty":
            raise IoError(_args.without_secrets(f"{where}: Empty attributes can't be modified (it has no elements; "
                                                "replace it with attrs[name] = value)"))
        if kind not in ("numbers", "fixed_strings", "variable_strings"):
            raise UnsupportedTypeError(_args.without_secrets(f"{where}: h5tile cannot modify an attribute of this "
                                                             f"type keeping its type ({kind}); replace it with "
                                                             "attrs[name] = value"))
        target = (old.dtype if kind == "numbers" else np.dtype(f"S{max(width, 1)}") if kind == "fixed_strings"
                  else np.dtype(object))
        # As h5py: an array is converted as HDF5 converts it; anything else by NumPy, to the type.
        given = isinstance(value, np.ndarray)
        array = np.asarray(value, order="C", dtype=None if given else target)
        shape = tuple(shape)
        if array.shape != shape and not (array.size == 1 and int(np.prod(shape)) == 1):
            raise ArgumentTypeError(_args.without_secrets(f"{where}: Shape of data is incompatible with existing "
                                                          f"attribute (data {array.shape}, attribute {shape})"))
        if given:
            array = _hdf5_converted(array, target, kind, where)
        self._write(name, array.reshape(shape), "utf-8" if kind == "variable_strings" else None, value)

    def _new_value(self, name: str, data: Any, shape: Any, dtype: Any) -> "tuple[np.ndarray, Any]":
        """(array, variable-length string encoding or None) that h5py's create would write for
        ``data``, ``shape`` and ``dtype``: its ``array_for_new_object`` and shape checks."""
        if dtype is not None and not isinstance(dtype, np.dtype):
            if hasattr(dtype, "dtype") and not isinstance(dtype, (str, type)):  # a (named) Datatype
                dtype = dtype.dtype
            dtype = np.dtype(dtype)
        if dtype is not None and (dtype.kind == "f" and dtype.itemsize == 2 or not isinstance(data, np.ndarray)):
            as_dtype = dtype
        else:
            as_dtype = _guess_dtype(data)
        array = np.asarray(data, order="C", dtype=as_dtype)
        final = dtype if dtype is not None else as_dtype if as_dtype is not None else array.dtype
        metadata = final.metadata or {}
        if final.kind == "O" and (_vlen_encoding(final) is None and metadata.get("vlen") is not None
                                  or metadata.get("ref") is not None):
            raise _OnlyHdf5Writes()  # variable-length sequences, references
        if shape is None:
            shape = array.shape
        elif isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        shape = tuple(int(n) for n in shape)
        if final.subdtype is not None:
            subshape = final.subdtype[1]
            if shape[len(shape) - len(subshape):] != subshape:
                raise InvalidArgumentError(_args.without_secrets(f"attribute '{name}': Array dtype shape {subshape} "
                                                                 f"is incompatible with data shape {shape}"))
            raise _OnlyHdf5Writes()  # an HDF5 array type
        if int(np.prod(shape)) != array.size:
            raise InvalidArgumentError(_args.without_secrets(f"attribute '{name}': Shape of new attribute conflicts "
                                                             f"with shape of data ({shape} for {array.shape})"))
        array = np.asarray(array.reshape(shape), dtype=final)
        return array, _vlen_encoding(final)

    def _write(self, name: str, array: np.ndarray, vlen: Any, data: Any) -> None:
        """Writes ``array`` (a variable-length string one where ``vlen`` names an encoding), after
        checking, before the file changes, that HDF5 has a type for it as h5py does."""
        f = self._obj._file
        where = f"attribute '{name}' of '{self._obj._name}'"
        kind = array.dtype.kind
        if kind == "O" and vlen is not None:
            strings = []
            for s in array.ravel().tolist():
                if isinstance(s, str):
                    s = s.encode("utf-8")
                elif not isinstance(s, bytes):
                    raise ArgumentTypeError(_args.without_secrets(
                        f"{where}: Can't implicitly convert non-string objects to strings (an element of type "
                        f"{type(s).__name__} in a variable-length string attribute)"))
                if b"\0" in s:
                    raise InvalidArgumentError(_args.without_secrets(
                        f"{where}: VLEN strings do not support embedded NULLs (as in h5py; store bytes with NULs "
                        "as fixed-length: np.bytes_(value) or an S<n> array)"))
                strings.append(s)
            _h5tile.write_string_attribute(f.filename, self._obj._name, name, strings, list(array.shape), 0)
            return
        if kind in "OU":
            item = _find_item_type(data)
            if kind == "O" and _is_h5py_reference_type(item):
                raise _OnlyHdf5Writes()
            what = (f"NumPy makes it a str array (dtype {array.dtype}), for which HDF5 has no type (h5py refuses "
                    "it too): store a str or a list of str (variable-length UTF-8), or array.astype(object)"
                    if kind == "U" else
                    "HDF5 has no type for it (h5py refuses it too): attributes hold numbers, str, bytes and "
                    "arrays of them (convert it first, e.g. with str() or json.dumps())")
            raise ArgumentTypeError(_args.without_secrets(f"{where}: cannot store a value of type "
                                                          f"{type(data).__name__}: {what}"))
        if kind == "S":
            strings = [bytes(s) for s in array.ravel().tolist()]
            _h5tile.write_string_attribute(f.filename, self._obj._name, name, strings, list(array.shape),
                                           max(array.dtype.itemsize, 1))
            return
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("="))
        core, sized = prepare(_core_strides(np.array(array, order="C", copy=True)), f"attribute '{name}'")
        _h5tile.write_attribute(f.filename, self._obj._name, name, core, sized)

    @_writing
    def __delitem__(self, name: str) -> None:
        name = _text_name(name)
        f = self._obj._file
        f._check_writable(f"delete attribute '{name}' of '{self._obj._name}'")
        _h5tile.delete_attribute(f.filename, self._obj._name, name)

    @_writing
    def _write_raw(self, name: str, raw: tuple) -> None:
        kind, shape, value, width = raw
        f = self._obj._file
        if kind in ("fixed_strings", "variable_strings"):
            _h5tile.write_string_attribute(f.filename, self._obj._name, name, list(value), list(shape),
                                           width if kind == "fixed_strings" else 0)
        elif kind == "empty":
            self.create(name, Empty(value.dtype))
        else:
            self.create(name, value)

    def __repr__(self) -> str:
        return _args.without_secrets(f"<Attributes of h5tile object \"{self._obj._name}\">")


# The kinds of attribute value the core reads (_attribute_value); any other is a type it does not.
_READ_KINDS = ("numbers", "fixed_strings", "variable_strings", "empty", "references")


def _attribute_value(kind: str, shape: tuple, value: Any, width: int) -> Any:
    if kind == "numbers":
        return value[()] if shape == () else value
    if kind == "fixed_strings":
        if shape == ():
            return np.bytes_(value[0])
        # No elements: the core gives None for the strings.
        return np.array(value if value is not None else [], dtype=f"S{max(width, 1)}").reshape(shape)
    if kind == "variable_strings":
        texts = [v.decode("utf-8", "surrogateescape") for v in value or ()]  # None: no elements
        if shape == ():
            return texts[0]
        out = np.empty(len(texts), dtype=object)
        out[:] = texts
        return out.reshape(shape)
    if kind == "empty":
        return Empty(None if value is None else value.dtype)
    if kind == "references":  # each element: the paths of the objects it refers to
        out = np.empty(len(value), dtype=object)
        out[:] = value
        return out[0] if shape == () else out.reshape(shape)
    raise UnsupportedTypeError(_args.without_secrets(str(value)))
