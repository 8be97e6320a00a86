"""Reads of h5py's own objects answered by h5tile (the harness's second half; h5tile_swap.py is the
first and loads this).

h5py's tests mostly write a file through ``self.f`` (an ``h5py.File`` in mode "w") and read it
back through the same objects. Here every *read* a test asks of an h5py Group, Dataset or
AttributeManager (``ds[...]``, ``ds.shape``, ``grp.keys()``, ``obj.attrs["x"]``...) is answered by
h5tile instead: h5py's handles of that file are flushed, the file is opened afresh with
:class:`h5tile.File` (mode "r"), the same object is looked up by its name, and the same read is
asked of it. Its answer, or its exception, is what the test sees. Writes, and every attribute that
is not a read (``id``, ``resize``, ``file``, ``parent``...), stay h5py's.

Only reads the test itself asks for are answered by h5tile: h5py's own code calls the same
methods while it writes (``Dataset.__setitem__`` reads ``self.shape``), and those calls, from
modules of the h5py package, get h5py's answers as before (the caller's frame tells them apart).

Objects h5tile cannot open by path keep h5py's answers: files in memory (driver "core"), on a
Python file object, split over several files (drivers "split", "family", "multi"), and anonymous
objects (no name). Tests whose every read is such are not read-side tests.

h5py's HDF5 and h5tile's are two separate libraries in one process: HDF5's file locks would stop
one opening what the other holds open, so the harness runs with HDF5_USE_FILE_LOCKING=FALSE
(h5tile_swap.py sets it; h5py's locking tests then skip themselves, saying so).
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Optional

import h5py
import h5tile
from h5py import h5f, h5i
from h5py._hl.attrs import AttributeManager as _AttributeManager
from h5py._hl.dataset import Dataset as _Dataset
from h5py._hl.datatype import Datatype as _Datatype
from h5py._hl.group import Group as _Group

# h5py's Group.get, kept before it is routed (values() and items() find h5py's objects with it).
_H5PY_GROUP_GET = _Group.get

# Drivers whose file on disk is the whole file once flushed (h5tile opens it by path).
_ON_DISK_DRIVERS = ("sec2", "stdio", "direct")

# Set by h5tile_swap: called each time a read is answered by h5tile (the test is read-side).
on_h5tile_read: Callable[[], None] = lambda: None

# Who answers the reads (H5PY_SUITE_READER): "h5tile"; or, to check the harness itself, "h5py"
# (every read answered through the same plumbing by h5py, a second read-only h5py File: outcomes
# other than those of "off" are the harness's fault) or "off" (nothing replaced: plain h5py).
READER = os.environ.get("H5PY_SUITE_READER", "h5tile")
if READER not in ("h5tile", "h5py", "off"):
    raise RuntimeError(f"H5PY_SUITE_READER must be 'h5tile', 'h5py' or 'off', not {READER!r}")


def open_for_reading(*args, **kwargs):
    """The reader's File: h5tile.File, or h5py's (the self-check)."""
    if READER == "h5py":
        return h5py._hl.files.File(*args, **kwargs)
    return h5tile.File(*args, **kwargs)


# Who opens the files tests open for writing (H5PY_SUITE_WRITES, issue 41): "h5py" (the default:
# every mode other than "r" is a real h5py.File, the test's writes are h5py's) or "h5tile" (every
# mode on a path that h5tile opens by path is an h5tile.File: the test's writes are h5tile's;
# h5tile_swap.py says which). With H5PY_SUITE_READER=h5py the same opens are h5py's (the
# self-check of that plumbing); with H5PY_SUITE_READER=off nothing is replaced.
WRITES = os.environ.get("H5PY_SUITE_WRITES") or "h5py"
if WRITES not in ("h5py", "h5tile"):
    raise RuntimeError(f"H5PY_SUITE_WRITES must be 'h5py' or 'h5tile', not {WRITES!r}")


def open_for_writing(*args, **kwargs):
    """The writer's File (H5PY_SUITE_WRITES=h5tile): h5tile.File, or h5py's (the self-check)."""
    if READER == "h5py":
        return h5py._hl.files.File(*args, **kwargs)
    return h5tile.File(*args, **kwargs)


# Set while a read is being answered: what the answer itself calls is not answered again (only
# the self-check's h5py reader calls routed methods).
_ANSWERING = threading.local()


def flush_h5py_handles(path: str) -> None:
    """Flushes every handle h5py holds open on the file ``path``, so that h5tile (a separate
    HDF5 library, reading the disk) sees what h5py has written; h5py's own second handle of a
    file would share the first's state."""
    try:
        wanted = os.path.realpath(path)
    except (TypeError, ValueError):
        return
    for fid in h5f.get_obj_ids(types=h5f.OBJ_FILE):
        try:
            if os.path.realpath(os.fsdecode(h5f.get_name(fid))) == wanted:
                h5f.flush(fid)
        except Exception:  # noqa: BLE001 - a handle closing meanwhile, a read-only one: nothing to flush
            pass


def _path_on_disk(file_id) -> Optional[str]:
    """The path of the file of ``file_id`` where h5tile can open it (see the module's docstring),
    else None.

    Also None for a file h5py holds open for writing whose superblock is version 3 (HDF5 1.10's,
    written with libver "v110" or later, or SWMR): HDF5 marks such a file open for writing on disk
    and refuses it to every other library or process until the writer closes it, h5py in another
    process as well as h5tile, so it says nothing about h5tile."""
    try:
        fid = h5i.get_file_id(file_id)
        f = h5py._hl.files.File(fid)
        if f.driver not in _ON_DISK_DRIVERS or not os.path.isfile(f.filename):
            return None
        if f.mode == "r+" and fid.get_create_plist().get_version()[0] >= 3:
            return None
        return f.filename
    except Exception:  # noqa: BLE001 - an identifier closed or invalid: h5py answers (and raises)
        return None


def _object_name(obj_id) -> Optional[str]:
    name = h5i.get_name(obj_id)
    return None if name is None else name.decode("utf-8", "surrogateescape")


def _twin(obj_id) -> Any:
    """The h5tile object (File, Group or Dataset) at the same name in the same file as the h5py
    object of ``obj_id``, the file flushed and opened afresh; None where h5tile cannot open it.
    Errors of h5tile's opening or lookup are raised as h5tile raises them."""
    path, name = _path_on_disk(obj_id), _object_name(obj_id)
    if path is None or name is None:
        return None
    flush_h5py_handles(path)
    on_h5tile_read()
    f = open_for_reading(path, "r")
    return f if name == "/" else f[name]


def _asked_by_h5py(depth: int) -> bool:
    """Whether the caller ``depth`` frames up is h5py's own code (h5py.*, not its tests), or the
    read is part of answering another."""
    if getattr(_ANSWERING, "active", False):
        return True
    module = sys._getframe(depth + 1).f_globals.get("__name__", "")
    return module.startswith("h5py.") and not module.startswith("h5py.tests")


def _answering(function: Callable, *args, **kwargs) -> Any:
    """``function(*args, **kwargs)``, marked as answering a read."""
    before, _ANSWERING.active = getattr(_ANSWERING, "active", False), True
    try:
        return function(*args, **kwargs)
    finally:
        _ANSWERING.active = before


def _routed_method(cls: type, attr: str, answer: Callable) -> None:
    """Replaces ``cls.attr`` (a method) by one that answers through h5tile: ``answer(twin,
    self, *args, **kwargs)`` where the test asks and h5tile can open the object; h5py's method
    otherwise."""
    original = getattr(cls, attr)

    def method(self, *args, **kwargs):
        if not _asked_by_h5py(1):
            twin = _answering(_twin, self._id if isinstance(self, _AttributeManager) else self.id)
            if twin is not None:
                return _answering(answer, twin, self, original, *args, **kwargs)
        return original(self, *args, **kwargs)

    method.__name__, method.__doc__ = attr, getattr(original, "__doc__", None)
    setattr(cls, attr, method)


def _routed_property(cls: type, attr: str) -> None:
    """Replaces the property ``cls.attr`` by one whose value (where the test asks) is the h5tile
    twin's attribute of that name; setting it stays h5py's."""
    original = getattr(cls, attr)

    def getter(self):
        if not _asked_by_h5py(1):
            twin = _answering(_twin, self.id)
            if twin is not None:
                return _answering(getattr, twin, attr)
        return original.fget(self)

    setattr(cls, attr, property(getter, original.fset, original.fdel, original.__doc__))


# -- what h5tile answers

def _same_as(attr: str) -> Callable:
    """The twin's method ``attr`` (h5tile's of the same name), called with the test's arguments;
    an AttributeError where h5tile has none."""
    def answer(twin, self, original, *args, **kwargs):
        return getattr(twin, attr)(*args, **kwargs)
    return answer


def _h5py_object_after(twin_result: Any, self, original, args, kwargs, name: Any) -> Any:
    """Where h5tile found a group or dataset: h5py's object for the same name (the test may go on
    writing through it), after checking that h5py finds the same kind; anything else h5tile gave
    (a link, a class, the default) as h5tile gave it."""
    kinds = {"Group": (h5tile.Group, _Group), "Dataset": (h5tile.Dataset, _Dataset), "Datatype": (_Datatype,)}
    kind = next((k for k, classes in kinds.items() if isinstance(twin_result, classes)), None)
    if kind is None:
        return twin_result
    ours = original(self, *args, **kwargs)
    if not isinstance(ours, kinds[kind][-1]):
        raise AssertionError(f"h5tile gives a {kind} for {name!r} where h5py gives {type(ours).__name__}")
    return ours


def _group_getitem(twin, self, original, name):
    return _h5py_object_after(twin[name], self, original, (name,), {}, name)


def _group_get(twin, self, original, *args, **kwargs):
    name = args[0] if args else kwargs.get("name")
    return _h5py_object_after(twin.get(*args, **kwargs), self, original, args, kwargs, name)


def _group_members(twin, self) -> dict:
    """Name -> object for every name h5tile lists, as h5py's views give them (``get``: None for a
    dangling link); the objects are h5py's, found through h5tile as ``get`` finds them."""
    return {name: _h5py_object_after(twin.get(name), self, _H5PY_GROUP_GET, (name,), {}, name)
            for name in twin.keys()}


def _group_values(twin, self, original):
    return _group_members(twin, self).values()  # (a dict's view: reversible, as h5py's)


def _group_items(twin, self, original):
    return _group_members(twin, self).items()


def _group_iter(twin, self, original):
    return iter(list(twin))


def _group_visititems(twin, self, original, func):
    """h5tile's visititems, handing ``func`` h5py's object for each name (the test may compare it
    with others, or write through it), after checking h5py finds the same kind."""
    def h5py_object(name, obj):
        return _h5py_object_after(obj, self, _H5PY_GROUP_GET, (name,), {}, name)
    return twin.visititems(lambda name, obj: func(name, h5py_object(name, obj)))


def _builtin(function: Callable) -> Callable:
    """The answer of a built-in (``len``, ``iter``, ``reversed``, ``in``) asked of the twin, so
    that its error is the built-in's own ("not reversible") where h5tile's object has none."""
    return lambda twin, self, original, *args: function(twin, *args)


def _dataset_getitem(twin, self, original, args, new_dtype=None):
    if new_dtype is not None:  # h5py's own views (astype, asstr, fields) pass it: h5py's read
        return original(self, args, new_dtype=new_dtype)
    return twin[args]


# Reads routed to h5tile. Methods: attribute -> how h5tile answers; properties: their names.
_GROUP_METHODS = {
    "__getitem__": _group_getitem, "get": _group_get, "__contains__": _builtin(lambda t, name: name in t),
    "__iter__": _group_iter, "__len__": _builtin(len), "__reversed__": _builtin(reversed),
    "keys": _same_as("keys"), "values": _group_values, "items": _group_items,
    "visit": _same_as("visit"), "visititems": _group_visititems,
    "visit_links": _same_as("visit_links"), "visititems_links": _same_as("visititems_links"),
}
_DATASET_METHODS = {"__getitem__": _dataset_getitem, "__iter__": _builtin(iter), "__len__": _builtin(len)}
# Read attributes of h5py's Dataset, methods and properties, answered by h5tile's of that name.
_DATASET_READS = ("__array__", "read_direct", "len", "astype", "asstr", "fields",
                  "iter_chunks", "is_virtual", "virtual_sources", "shape", "dtype", "ndim", "size", "nbytes",
                  "maxshape", "chunks", "compression", "compression_opts", "shuffle", "fletcher32",
                  "scaleoffset", "fillvalue", "external", "is_scale", "dims", "filter_ids", "filter_names")
_ATTRIBUTE_METHODS = {
    "__getitem__": lambda twin, self, original, name: twin.attrs[name],
    "get": lambda twin, self, original, *a, **k: twin.attrs.get(*a, **k),
    "__contains__": lambda twin, self, original, name: name in twin.attrs,
    "__iter__": lambda twin, self, original: iter(list(twin.attrs)),
    "__len__": lambda twin, self, original: len(twin.attrs),
    "keys": lambda twin, self, original: twin.attrs.keys(),
    "values": lambda twin, self, original: twin.attrs.values(),
    "items": lambda twin, self, original: twin.attrs.items(),
}


def install() -> None:
    """Routes the reads above of h5py's Group (File too), Dataset and AttributeManager."""
    for attr, answer in _GROUP_METHODS.items():
        if hasattr(_Group, attr):
            _routed_method(_Group, attr, answer)
    for attr, answer in _DATASET_METHODS.items():
        _routed_method(_Dataset, attr, answer)
    for attr in _DATASET_READS:
        if isinstance(getattr(_Dataset, attr, None), property):
            _routed_property(_Dataset, attr)
        elif hasattr(_Dataset, attr):
            _routed_method(_Dataset, attr, _same_as(attr))
    for attr, answer in _ATTRIBUTE_METHODS.items():
        _routed_method(_AttributeManager, attr, answer)
