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
import os
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


def identity(path: Any) -> Optional[tuple]:
    """(device, inode) of the local file `path`, or None (a URL, or a file that does not exist):
    what HDF5 tells one file from another by, whatever its path is spelled as (symbolic links,
    hard links)."""
    try:
        st = os.stat(path)
    except (OSError, TypeError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


# Files lent to h5py for writing (lend), by the identity of the file h5py opened: (h5py's
# read-write File, the path lent).
LENT: dict = {}

# Changes made through h5tile.Files of this process and through h5py while lent, by identity and
# by path (a file replaced by rename keeps its path, a link gives another path to one identity): a
# File whose counts differ from the ones it last saw forgets what it read (_objects.File).
CHANGES: dict = {}


def changed(key: Optional[tuple], path: Optional[str] = None) -> int:
    """Counts a change of the file of identity `key` (and path `path`, where given); the File that
    made it sees the counts it returns (seen)."""
    for k in (key, path):
        if k is not None:
            CHANGES[k] = CHANGES.get(k, 0) + 1
    return seen(key, path)


def seen(key: Optional[tuple], path: Optional[str]) -> int:
    """The count of changes a File of identity `key` and path `path` compares with its own."""
    return CHANGES.get(key, 0) + CHANGES.get(path, 0)


def _fd_identity(opened: Any) -> Optional[tuple]:
    """(device, inode) of the file h5py's File `opened` has open (sec2), or None."""
    try:
        st = os.fstat(opened.id.get_vfd_handle())
    except Exception:  # noqa: BLE001 - not a descriptor: another driver
        return None
    return (st.st_dev, st.st_ino)


def _close_every_open_of(key: Optional[tuple]) -> None:
    """Closes every identifier h5py's HDF5 has of the file `key` (the lent File's, read-only
    views behind ``.id`` of Files in mode "r", identifiers a program kept from them, its own
    h5py.File of the file): h5py's HDF5 shares one open of a file among all its opens of it, and
    one left open would keep it alive past take_back, h5py's HDF5 then writing its stale metadata
    over h5tile's changes when it closes (or, before a lend, make the read-write open fail)."""
    if key is None:
        return
    from h5py import h5f
    for fid in h5f.get_obj_ids(h5f.OBJ_ALL, h5f.OBJ_FILE):
        try:
            st = os.fstat(fid.get_vfd_handle())
        except Exception:  # noqa: BLE001 - closed meanwhile, or not a descriptor (not this file)
            continue
        if (st.st_dev, st.st_ino) == key:
            fid._close_open_objects(h5f.OBJ_ALL)  # h5py's File.close() without OBJ_LOCAL: all of them


def _lent_key(path: str, key: Optional[tuple]) -> Optional[tuple]:
    """The LENT entry of the file lent under `path` or of identity `key` (a File's identity may be
    an old one: the path replaced by rename since), or None."""
    if key is not None and key in LENT:
        return key
    for k, (_, lent_path) in LENT.items():
        if lent_path == path:
            return k
    if key is not None:  # a File's own lookup (each of its reads): no stat
        return None
    now = identity(path)
    return now if now in LENT else None


def settle(path: Any) -> None:
    """Before a module-level read of `path` (from_file, read_box, describe...): where this process
    lent it to h5py, h5py's changes are flushed first (see sync). Nothing otherwise."""
    if LENT and isinstance(path, (str, os.PathLike)):
        sync(os.path.abspath(os.fspath(path)))


def reclaim(path: Any) -> None:
    """Before a module-level write of `path` (to_file...): where this process lent it to h5py, it
    is taken back (see take_back); the change is counted (CHANGES)."""
    if isinstance(path, (str, os.PathLike)) and "://" not in str(os.fspath(path)):  # a URL is no local file
        path = os.path.abspath(os.fspath(path))
        key = identity(path)
        if LENT:
            take_back(path, key)
        changed(key, path)


def lend(path: str, key: Optional[tuple] = None) -> Any:
    """h5py's read-write File of the held local file `path`, to which h5tile lends it (for h5py's
    low-level identifiers, ``.id``, in a write mode, and for writes h5tile does not make itself):
    h5tile flushes what it changed and closes its own open first (_h5tile.lend_for_writing), and
    h5py's HDF5 has no other open of it, so that two HDF5 libraries never change one file at once.
    Kept until take_back; h5tile's reads meanwhile call sync first. `key`: the identity the
    caller knows the file by (found again by path where it is an old one)."""
    if _h5py_file() is None:
        raise _h5tile.UnsupportedTypeError("h5py's low-level identifiers (.id), and writes of types h5tile does not "
                                           "write itself, need h5py, which is not installed")
    with WRITES:
        found = _lent_key(path, key)
        if found is not None:
            return LENT[found][0]
        _close_every_open_of(identity(path))  # the file at the path now
        _h5tile.lend_for_writing(path)
        try:
            opened = _h5py_file()(path, "r+", locking=False)  # h5tile's reads meanwhile: see sync
        except BaseException:
            _h5tile.take_back_for_writing(path)
            raise
        LENT[_fd_identity(opened) or identity(path)] = (opened, path)  # the file h5py has open
        return opened


def sync(path: str, key: Optional[tuple] = None) -> bool:
    """Before h5tile reads the file `path` (of identity `key`, where known): where it is lent to
    h5py, h5py's changes are flushed and h5tile's readers let go of what they kept open of the
    file (their opens would not see them). Whether it is lent (the caller then forgets what it
    read of the file before)."""
    with WRITES:
        found = _lent_key(path, key)
        if found is None:
            return False
        opened, lent_path = LENT[found]
        opened.flush()
        _h5tile.lend_for_writing(lent_path)  # lent already: lets go of the readers' kept opens again
        return True


def take_back(path: str, key: Optional[tuple] = None) -> None:
    """Ends lend: every open h5py's HDF5 has of the file closed (the lent File's, with every
    identifier taken from it; see _close_every_open_of), and the file open for h5tile's changes
    again; the change counted (CHANGES: h5py may have changed anything). Nothing where the file of
    `path` (of identity `key`, where known) is not lent."""
    with WRITES:
        found = _lent_key(path, key)
        if found is None:
            return
        _, lent_path = LENT.pop(found)
        try:
            _close_every_open_of(found)
        finally:
            changed(found, lent_path)
            _h5tile.take_back_for_writing(lent_path)


def object_of(file: Any, name: str) -> Any:
    """h5py's object `name` of h5py's File `file`, made from its low-level identifier with h5py's
    classes from their modules (``file[name]``, and the classes' names at h5py's top level, a
    program or a test harness may have rebound)."""
    from h5py import h5d, h5g, h5o
    from h5py._hl.dataset import Dataset
    from h5py._hl.datatype import Datatype
    from h5py._hl.group import Group
    identifier = h5o.open(file.id, name.encode("utf-8"))
    if isinstance(identifier, h5d.DatasetID):
        return Dataset(identifier)
    return Group(identifier) if isinstance(identifier, h5g.GroupID) else Datatype(identifier)


def view(source: Any) -> Any:
    """An open h5py File of the local file `source` (a path, or a file object h5tile.File reads),
    read-only, for h5py's low-level identifiers (``.id``): a path opened as _open opens it (h5tile's
    changes flushed first where this process holds the file); the caller closes it.
    UnsupportedTypeError where h5py is not installed."""
    if _h5py_file() is None:
        raise _h5tile.UnsupportedTypeError("h5py's low-level identifiers (.id) need h5py, which is not installed")
    return _open(source) if isinstance(source, str) else _h5py_file()(source, "r")


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
