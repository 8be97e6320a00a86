"""Datasets whose type h5tile's core does not read, read through h5py (HDF5 itself) where h5py is
installed: variable-length sequences, object and region references, compounds with variable-
length or reference members, 128-bit floats. Their elements are not fixed-size bytes in the file
(they live in its global heap, or point into it), so no parallel engine reads them faster than
HDF5 does; h5py returns them exactly as h5py does (it is h5py), one call at a time.

Only local files, and only names reached without an external link (h5tile.File opens the other
file itself, under its confinement, before it gets here): h5py would follow an external link
anywhere. Without h5py, the core's UnsupportedTypeError stands."""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Optional

from . import _h5tile

_LAYOUTS = {0: "compact", 1: "contiguous", 2: "chunked", 3: "virtual"}


def _h5py_file() -> Any:
    """h5py's File class, or None. Taken from its module (h5py._hl.files), not from the
    package's top level, which a program (or a test harness) may have rebound."""
    try:
        from h5py._hl.files import File
    except ImportError:
        return None
    return File


# Held by every write through h5tile.File in this process (Dataset writes, changes of structure,
# attributes) and by every read through h5py of a file this process holds for writing: h5py's
# HDF5 must not read the file while h5tile's changes it.
WRITES = threading.RLock()


@contextlib.contextmanager
def _reading(path: str) -> Iterator[Any]:
    """h5py's File of `path` (see _open), with no h5tile write of this process meanwhile."""
    with WRITES, _open(path) as f:
        yield f


def _open(path: str) -> Any:
    """h5py's File of `path`, read-only (h5py must be installed). Where this process holds the file
    open for writing (an h5tile.File in a write mode), what h5tile changed is flushed first, and
    h5py opens it without HDF5's file locking, which h5tile's own open would refuse it (h5py's
    HDF5 is another library in this process)."""
    file_class = _h5py_file()
    if _h5tile.held_for_writing(path):
        _h5tile.flush_writes(path)
        return file_class(path, "r", locking=False)
    return file_class(path, "r")


def view(path: str) -> Any:
    """An open h5py File of the local file `path`, read-only, for h5py's low-level identifiers
    (``.id``): opened as _open opens it (h5tile's changes flushed first where this process holds the
    file); the caller closes it. UnsupportedTypeError where h5py is not installed."""
    if _h5py_file() is None:
        raise _h5tile.UnsupportedTypeError("h5py's low-level identifiers (.id) need h5py, which is not installed")
    return _open(path)


def _filters(dataset: Any, names: dict) -> "tuple[list, list]":
    """(names as h5tile's core names them, client data) of the dataset's filter pipeline."""
    dcpl = dataset.id.get_create_plist()
    found, values = [], []
    for i in range(dcpl.get_nfilters()):
        code, _, data, _ = dcpl.get_filter(i)
        found.append(names.get(code, f"filter {code} (unknown to h5tile)"))
        values.append(list(data))
    return found, values


def describe(path: str, name: str, filter_names: dict) -> Optional[dict]:
    """Dataset `name` of the local file `path` described as the core describes one, from h5py
    ("via_h5py": its reads go through h5py); None where h5py is not installed."""
    file_class = _h5py_file()
    if file_class is None:
        return None
    with _reading(path) as f:
        dataset = f[name]
        filters, values = _filters(dataset, filter_names)
        layout = _LAYOUTS.get(dataset.id.get_create_plist().get_layout(), "other")
        shape = dataset.shape
        return {
            "via_h5py": True, "_numpy_dtype": dataset.dtype, "dtype": "object" if dataset.dtype.hasobject
            else f"V{dataset.dtype.itemsize}", "numpy_type": None, "charset": None,
            "shape": shape or (), "max_shape": dataset.maxshape or (), "null_space": shape is None,
            "layout": layout, "chunk": dataset.chunks, "filters": filters, "filter_values": values,
            "decoder": "hdf5" if filters else None, "decoder_reason": "read through h5py" if filters else None,
            "virtual_sources": 0, "fill_value": b"",
        }


def read(path: str, name: str, key: Any) -> Any:
    """``h5py.File(path)[name][key]``: what h5py reads, as h5py returns it."""
    with _reading(path) as f:
        return f[name][key]


# attribute()'s answer where h5py cannot be used.
MISSING = object()


def attribute(path: str, obj: str, name: str) -> Any:
    """Attribute `name` of object `obj` as h5py reads it, or MISSING where h5py is not installed."""
    file_class = _h5py_file()
    if file_class is None:
        return MISSING
    with _reading(path) as f:
        return f[obj].attrs[name]


def dataset_attribute(path: str, name: str, attribute: str) -> Any:
    """``h5py.File(path)[name].<attribute>`` (a bound method stays callable after the file
    closes only where it needs nothing of the file: ``virtual_sources`` is called here), or
    MISSING where h5py is not installed."""
    file_class = _h5py_file()
    if file_class is None:
        return MISSING
    with _reading(path) as f:
        value = getattr(f[name], attribute)
        if attribute == "virtual_sources":
            sources = value()
            return lambda: sources
        return value


def is_region_reference(key: Any) -> bool:
    """Whether `key` is h5py's RegionReference (a selection only HDF5 can apply)."""
    return type(key).__name__ == "RegionReference" and type(key).__module__.startswith("h5py")


def is_reference(name: Any) -> bool:
    """Whether `name` is h5py's (object) Reference, which ``group[ref]`` opens."""
    return type(name).__name__ in ("Reference", "RegionReference") and type(name).__module__.startswith("h5py")


def referenced_name(path: str, reference: Any) -> str:
    """The path of the object `reference` points to in the file `path` (h5py: ``f[ref].name``)."""
    with _reading(path) as f:
        return f[reference].name
