"""Attributes of h5tile's h5py-style objects: :class:`AttributeManager` (``obj.attrs``) and
:class:`Empty` (the value of an attribute with no elements), read and written through the core's
attribute functions; the file is opened by path on each call, as the objects do."""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from . import _arguments as _args
from . import _via_h5py
from . import _h5tile
from ._arrays import prepare
from ._h5tile import DatasetNotFoundError, InvalidArgumentError, UnsupportedTypeError

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


class AttributeManager(MutableMapping):
    """The attributes of a group or dataset (``obj.attrs``), as h5py's: a mapping from names to
    values. Numbers read as NumPy scalars or arrays, fixed-length strings as ``bytes``
    (``numpy.bytes_``), variable-length ones as ``str``, a null dataspace as :class:`Empty`,
    object references (and lists of them, as netCDF-4's ``DIMENSION_LIST``) as an object array
    whose elements are tuples of the paths referred to (h5py gives ``Reference`` objects).
    Writes (mode "a"/"r+") change the file in place: ``str`` is stored as h5py stores it
    (variable-length UTF-8), ``bytes`` as fixed-length, numbers with their dtype.

    >>> with h5tile.File("data.h5", "a") as f:    # doctest: +SKIP
    ...     f["x"].attrs["units"] = "m/s"
    ...     dict(f["x"].attrs)                     # {'units': 'm/s'}
    """

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

    def create(self, name: str, data: Any, shape: Any = None, dtype: Any = None) -> None:
        """Creates (or replaces) attribute ``name`` from ``data``, as ``np.asarray(data, dtype)``
        reshaped to ``shape`` where given."""
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
        if isinstance(data, str) and dtype is None and shape is None:
            _h5tile.write_string_attribute(f.filename, self._obj._name, name, [data.encode()], [], 0)
            return
        array = np.asarray(data, dtype=dtype)
        if shape is not None:
            array = array.reshape(shape)
        if array.dtype.kind in "UO":
            strings = [s if isinstance(s, bytes) else str(s).encode() for s in array.ravel().tolist()]
            _h5tile.write_string_attribute(f.filename, self._obj._name, name, strings, list(array.shape), 0)
            return
        if array.dtype.kind == "S":
            strings = [bytes(s) for s in array.ravel().tolist()]
            _h5tile.write_string_attribute(f.filename, self._obj._name, name, strings, list(array.shape),
                                           max(array.dtype.itemsize, 1))
            return
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("="))
        core, sized = prepare(np.array(array, order="C", copy=True), f"attribute '{name}'")
        _h5tile.write_attribute(f.filename, self._obj._name, name, core, sized)

    def modify(self, name: str, value: Any) -> None:
        """As ``attrs[name] = value``."""
        self.create(name, value)

    def __delitem__(self, name: str) -> None:
        name = _text_name(name)
        f = self._obj._file
        f._check_writable(f"delete attribute '{name}' of '{self._obj._name}'")
        _h5tile.delete_attribute(f.filename, self._obj._name, name)

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
        return np.bytes_(value[0]) if shape == () else np.array(value, dtype=f"S{max(width, 1)}").reshape(shape)
    if kind == "variable_strings":
        texts = [v.decode("utf-8", "surrogateescape") for v in value]
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
