"""h5py-style objects over h5tile's parallel engine: :class:`File`, :class:`Group`,
:class:`Dataset` (_dataset.py) and :class:`AttributeManager` (_attributes.py), all importable from
here.

They hold no HDF5 handle between calls: every read opens the file by path (or URL), as the
module-level functions do, and reads in parallel. A :class:`File` caches what it has listed and
described; objects pickle as (path, name) and reopen where they are unpickled (a Dask worker).
"""
from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import ItemsView, KeysView, MutableMapping, ValuesView
from typing import Any, Callable, Iterator, Optional, Union

import numpy as np

from . import _arguments as _args
from . import _h5tile
from . import _creation, _file_objects, _storage_options, _via_h5py
from ._datatype import Datatype
from ._attributes import AttributeManager, Empty, _by_name  # noqa: F401 (Empty: re-exported)
from ._base import _Object
# _dataset_from_state: re-exported, as Datasets pickled before the split name it here.
from ._dataset import Dataset, _dataset_from_state  # noqa: F401
from ._h5tile import (DatasetNotFoundError, InvalidArgumentError, IoError, NoSuchFileError, NotADatasetError,
                      UnsupportedTypeError)

__all__ = ["File", "Group", "Dataset", "AttributeManager", "Empty", "HardLink", "SoftLink", "ExternalLink"]

_FILE_MODES = ("r", "r+", "a", "w", "w-", "x")
# Modes that make a new file (as h5py: "a" where none is at the path).
_CREATING_MODES = ("w", "w-", "x")


def _read_only(what: str, path: str) -> IoError:
    """An OSError (EBADF), as h5py raises for a write to a file opened read-only."""
    return IoError(errno.EBADF, _args.without_secrets(f"cannot {what}: '{_args.redacted(path)}' is open read-only "
                                                      "(mode 'r'); open it with h5tile.File(path, 'a') to change it"))


class HardLink:
    """A hard link, as h5py's: what ``Group.get(name, getlink=True)`` gives for a name that leads
    straight to an object."""


class SoftLink:
    """A soft link to ``path`` (absolute, or relative to the group holding it), as h5py's."""

    def __init__(self, path: str):
        self._path = str(path)

    @property
    def path(self) -> str:
        return self._path

    def __repr__(self) -> str:
        return _args.without_secrets(f'<SoftLink to "{self.path}">')


class ExternalLink:
    """A link to ``path`` in another file ``filename``, as h5py's."""

    def __init__(self, filename: str, path: str):
        self._filename, self._path = str(filename), str(path)

    @property
    def filename(self) -> str:
        return self._filename

    @property
    def path(self) -> str:
        return self._path

    def __repr__(self) -> str:
        return _args.without_secrets(f'<ExternalLink to "{self.path}" in file "{self.filename}"')


class _Catalog:
    """What a File knows of its file: the objects listed (once) and the datasets described (each
    once). Shared by every object of one File; reset where the File changes the file."""

    def __init__(self):
        self.lock = threading.Lock()
        self.kinds: Optional[dict] = None  # full name -> "group" | "dataset" | "datatype"
        self.links: Optional[_LinkTables] = None  # every group's links (list_links), read once
        self.described: dict = {}
        # Full name -> {attribute name: (kind, shape, value, width)}, where File._preload read
        # them all (a File in mode "r"); otherwise every access reads the attributes anew.
        self.attributes: dict = {}
        # Objects a visititems walk handed out (mode "r"): the first of them whose attributes are
        # asked for reads all of theirs in one call (File._attributes_of).
        self.visited: "set[str]" = set()

    def reset(self) -> None:
        with self.lock:
            self.kinds, self.links, self.described, self.attributes = None, None, {}, {}
            self.visited = set()


def _normalised(path: str) -> str:
    """``path`` (absolute) as HDF5 walks it: empty parts and "." dropped, ".." kept as the literal
    link name it is to HDF5 (it never means the parent group there)."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return "/" + "/".join(parts)


class _Link:
    """One link of a group (the core's list_links): ``kind`` "hard", "soft" or "external"."""
    __slots__ = ("name", "kind", "object", "object_id", "target", "file")

    def __init__(self, name, kind, object, object_id, target, file):  # noqa: A002 (the core's field names)
        self.name, self.kind, self.object, self.object_id, self.target, self.file = (name, kind, object, object_id,
                                                                                      target, file)


class _LinkTables:
    """The links of the groups of a file, and what a path leads to through them: hard links to
    objects, soft links followed as HDF5 follows them (relative to the group holding them, at
    most 16 deep), external links left for the core (which opens them under its confinement).

    Groups of the file at `path` are listed as they are first needed, one core call each
    (list_group_links: a group's keys in a file of 10,000 objects read that group, not the file);
    a walk of everything lists every group in one call (list_links)."""

    _MAX_SOFT = 16

    def __init__(self, path: str, complete: bool = False):
        """`complete`: every group listed now, in one call (for a walk of everything)."""
        self._path = path
        self.groups: dict = {}
        self._paths: dict = {}  # group id -> a path that leads to it, to list it by
        self.complete = False
        if complete:
            self._complete()
            self.root = next(iter(self.groups))  # list_links lists the root first
        else:
            self.root = self._add(_h5tile.list_group_links(path, "/"))

    def _add(self, row: tuple) -> str:
        path, group_id, links = row
        self.groups[group_id] = {link[0]: _Link(*link) for link in links}
        self._paths.setdefault(group_id, path)
        return group_id

    def _group(self, group_id: str) -> dict:
        """The links of group `group_id`, listed now where not yet."""
        links = self.groups.get(group_id)
        if links is None and not self.complete and group_id in self._paths:
            self._add(_h5tile.list_group_links(self._path, self._paths[group_id]))
            links = self.groups.get(group_id)
            if links is None:  # its path leads elsewhere now (the file changed): one snapshot of it all
                self._complete()
                links = self.groups.get(group_id)
        return links or {}

    def _complete(self) -> None:
        if not self.complete:
            for row in _h5tile.list_links(self._path):
                self._add(row)
            self.complete = True

    def names(self, group_id: str) -> "list[str]":
        return list(self._group(group_id))

    def resolve(self, full: str) -> "tuple[str, Optional[str]]":
        """(kind, id) of what ``full`` (an absolute, normalised path) leads to: kind "group",
        "dataset" or "datatype" (id: the object's), "external" (id None: the core follows it),
        "missing" or "dangling"."""
        return self._walk(full, 0)[:2]

    def external(self, full: str) -> "Optional[tuple[str, str]]":
        """Where ``full`` leads through an external link of this file: (the path of that link
        in this file, soft links resolved; the rest of ``full`` after it), else None."""
        return self._walk(full, 0)[2]

    def _walk(self, full: str, depth: int) -> "tuple[str, Optional[str], Optional[tuple[str, str]]]":
        group_id, where = self.root, "/"
        parts = [p for p in full.split("/") if p]
        for i, part in enumerate(parts):
            link = self._group(group_id).get(part)
            if link is None:
                return ("missing", None, None)
            last = i == len(parts) - 1
            if link.kind == "external":
                return ("external", None, (posixpath.join(where, part), "/".join(parts[i + 1:])))
            if link.kind == "soft":
                if depth >= self._MAX_SOFT:
                    return ("dangling", None, None)
                target = _normalised(posixpath.join(where, link.target, *parts[i + 1:]))
                kind, found, external = self._walk(target, depth + 1)
                return ("dangling", None, None) if kind == "missing" else (kind, found, external)
            if link.object == "group":
                self._paths.setdefault(link.object_id, posixpath.join(where, part))
            if last:
                return (link.object, link.object_id, None)
            if link.object != "group":
                return ("missing", None, None)
            group_id, where = link.object_id, posixpath.join(where, part)
        return ("group", group_id, None)

    def objects(self, start: Optional[str] = None, where: str = "/") -> dict:
        """Full name -> "group" | "dataset" | "datatype" of every object below group ``start``
        (the root; its full name ``where``), each once under the first name found, depth first in
        name order (as h5py's ``visit``, HDF5's H5Ovisit by name, whatever order the groups
        track)."""
        self._complete()
        start = self.root if start is None else start
        out: dict = {}
        seen = {start}
        # Depth first without recursion (files nest groups thousands deep): a stack of iterators.
        stack = [(iter(self._by_name(start)), where)]
        while stack:
            links, at = stack[-1]
            link = next(links, None)
            if link is None:
                stack.pop()
                continue
            if link.kind != "hard" or link.object_id in seen:
                continue
            seen.add(link.object_id)
            full = posixpath.join(at, link.name)
            out[full] = link.object
            if link.object == "group":
                stack.append((iter(self._by_name(link.object_id)), full))
        return out

    def _by_name(self, group_id: str) -> list:
        return sorted(self._group(group_id).values(),
                      key=lambda link: link.name.encode("utf-8", "surrogateescape"))

    def link(self, full: str) -> "Optional[_Link]":
        """The link ``full`` names itself (its last part, in the group its parent leads to)."""
        parent, name = posixpath.split(full)
        kind, group_id = self.resolve(parent) if parent != "/" else ("group", self.root)
        return self._group(group_id).get(name) if kind == "group" else None

    def links_below(self, start: str) -> "Iterator[tuple[str, _Link]]":
        """(name relative to group ``start``, link) of every link below it, as HDF5's H5Lvisit by
        name gives them to h5py's ``visit_links``: depth first, each group's links in name order
        (whatever order the group tracks), every link once, soft and external ones included; a
        group reached again through another hard link is listed under that name too, but not
        entered again (nor is ``start``)."""
        self._complete()
        entered = {start}
        # Depth first without recursion (files nest groups thousands deep), as objects().
        stack = [(iter(self._by_name(start)), "")]
        while stack:
            links, prefix = stack[-1]
            link = next(links, None)
            if link is None:
                stack.pop()
                continue
            name = prefix + link.name
            yield name, link
            if link.kind == "hard" and link.object == "group" and link.object_id not in entered:
                entered.add(link.object_id)
                stack.append((iter(self._by_name(link.object_id)), name + "/"))


def _h5py_link_as_ours(obj: Any) -> Any:
    """h5py's SoftLink or ExternalLink (a program may use both libraries) as h5tile's; anything
    else as it is."""
    kind = type(obj)
    if not kind.__module__.startswith("h5py") or kind.__name__ not in ("SoftLink", "ExternalLink"):
        return obj
    return SoftLink(obj.path) if kind.__name__ == "SoftLink" else ExternalLink(obj.filename, obj.path)


def _link_object(link: _Link) -> "Union[HardLink, SoftLink, ExternalLink]":
    """h5py's object for a link: what ``get(name, getlink=True)`` and ``visititems_links`` give."""
    if link.kind == "soft":
        return SoftLink(link.target)
    if link.kind == "external":
        return ExternalLink(link.file, link.target)
    return HardLink()


class _KeysView(KeysView):
    """``Group.keys()``: reversible, and shown with its names, as h5py's."""

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._mapping)

    def __repr__(self) -> str:
        return _args.without_secrets(f"<KeysView {list(self)!r}>")


class _ValuesView(ValuesView):
    """``Group.values()`` as h5py's: each member as ``get`` gives it (None for a dangling link,
    where ``group[name]`` raises), in order or reversed."""

    def __iter__(self) -> Iterator[Any]:
        return (self._mapping.get(name) for name in self._mapping)

    def __reversed__(self) -> Iterator[Any]:
        return (self._mapping.get(name) for name in reversed(self._mapping))

    def __contains__(self, value: object) -> bool:
        return any(value == member for member in self)

    def __repr__(self) -> str:
        return _args.without_secrets(f"ValuesView({self._mapping!r})")


class _ItemsView(ItemsView):
    """``Group.items()`` as h5py's: (name, member as ``get`` gives it), in order or reversed."""

    def __iter__(self) -> Iterator["tuple[str, Any]"]:
        return ((name, self._mapping.get(name)) for name in self._mapping)

    def __reversed__(self) -> Iterator["tuple[str, Any]"]:
        return ((name, self._mapping.get(name)) for name in reversed(self._mapping))

    def __contains__(self, item: object) -> bool:
        name, value = item  # type: ignore[misc]
        return name in self._mapping and value == self._mapping.get(name)

    def __repr__(self) -> str:
        return _args.without_secrets(f"ItemsView({self._mapping!r})")


class Group(_Object, MutableMapping):
    """A group of an HDF5 file: a mapping from member names to :class:`Group` and :class:`Dataset`
    objects, as h5py's ``Group``.

    >>> with h5tile.File("data.h5") as f:           # doctest: +SKIP
    ...     list(f.keys())                            # ['grp', 'x']
    ...     temp = f["grp/temp"]                      # a Dataset; nothing read yet
    ...     block = temp[10:20, ::2]                  # numpy.ndarray, read in parallel
    ...     f.visit(print)                            # grp, grp/temp, x
    """

    def _path(self, name: str) -> str:
        if isinstance(name, bytes):
            name = os.fsdecode(name)  # a name that is not UTF-8 keeps its bytes (surrogateescape)
        if not isinstance(name, str):
            raise TypeError(_args.without_secrets(f"member names are strings, not {type(name).__name__} ({name!r})"))
        full = name if name.startswith("/") else posixpath.join(self._name, name)
        return _normalised(full)

    def _members(self) -> list:
        """The names of this group's links, every one (hard links to one object under each name,
        soft and external links, dangling ones too), in h5py's order."""
        tables = self._file._links()
        kind, group_id = tables.resolve(self._name)
        return tables.names(group_id) if kind == "group" else []

    def __getitem__(self, name: str) -> "Union[Group, Dataset]":
        """The member ``name``: a path relative to this group ("temp", "sub/temp") or absolute
        ("/grp/temp"), through hard, soft and external links as h5py follows them. Raises
        :class:`DatasetNotFoundError` (a ``KeyError``) where there is none. An h5py object
        reference (read from a dataset or attribute of references) opens what it points to."""
        if _via_h5py.is_reference(name) and not self._file._is_url():
            name = _via_h5py.referenced_name(self._file._path_text, name)
        elif isinstance(name, tuple) and len(name) == 1 and isinstance(name[0], str):
            name = name[0]  # a reference as h5tile reads one from an attribute: the path it leads to
        full = self._path(name)
        if name in ("", b""):
            raise DatasetNotFoundError(_args.without_secrets(f"'' is not a name in '{self._file._shown}' (h5py raises "
                                                             "KeyError too): the group itself is '.'"))
        if full == "/":
            return self._file._root()
        kind, _ = self._file._links().resolve(full)
        if kind == "group":
            return Group(self._file, full)
        if kind == "dataset":
            return Dataset(self._file, full)
        if kind in ("missing", "dangling") and ".." in full.split("/"):
            # The core refuses '..' parts by name; HDF5 looks for a link of that name, here none.
            raise DatasetNotFoundError(_args.without_secrets(f"'{full}' does not exist in '{self._file._shown}' ('..' "
                                                             "is a link name to HDF5, never the parent group)"))
        if kind == "external":
            return self._file._through_external(full)
        if kind in ("missing", "dangling"):
            self._file._describe(full)  # raises, saying so, as for any name
            return Dataset(self._file, full)
        return Datatype(self._file, full)  # a named datatype

    def __iter__(self) -> Iterator[str]:
        return iter(self._members())

    def __reversed__(self) -> Iterator[str]:
        """The names in the reverse of h5py's order (h5py's ``reversed(group)``)."""
        return reversed(self._members())

    def __len__(self) -> int:
        return len(self._members())

    def keys(self) -> _KeysView:
        return _KeysView(self)

    def values(self) -> _ValuesView:
        return _ValuesView(self)

    def items(self) -> _ItemsView:
        return _ItemsView(self)

    def __contains__(self, name: object) -> bool:
        """Whether the link ``name`` exists, as h5py says: every part but the last must lead to a
        group, the last must be a link of it (a dangling soft link or an external link counts; its
        target is not opened). "" and paths through ".." are not names."""
        full = self._path(name)  # type: ignore[arg-type]  (TypeError for a name that is not text, as h5py)
        if name in ("", b"") or not self._file._open:  # a closed File has no members (h5py: False)
            return False
        if full == "/" or self._file._links().link(full) is not None:
            return True
        parent = posixpath.dirname(full)
        if self._file._links().resolve(parent)[0] == "external":  # a name in another file: asked there
            try:
                self[name]  # type: ignore[index]
            except (KeyError, NotADatasetError, InvalidArgumentError):
                return False
            return True
        return False

    def get(self, name: str, default: Any = None, getclass: bool = False, getlink: bool = False,
            elink_mode: Optional[str] = None, elink_locking: Any = None, elink_swmr: Optional[bool] = None) -> Any:
        """As h5py's ``Group.get``: the member ``name``, or ``default`` where there is none; with
        ``getlink=True`` the link itself (:class:`HardLink`, :class:`SoftLink` or
        :class:`ExternalLink`), with ``getclass=True`` its class. ``elink_mode``, ``elink_locking``
        and ``elink_swmr`` are checked as h5py checks them (_check_elink_options)."""
        _check_elink_options(self._file, elink_mode, elink_locking, elink_swmr)
        full = self._path(name)
        if name in ("", b""):
            return default
        if getlink:
            link = self._file._links().link(full) if full != "/" else None
            if link is None:
                if full == "/":
                    return HardLink if getclass else HardLink()
                return default
            made = _link_object(link)
            return type(made) if getclass else made
        if name not in self:
            return default
        try:
            if elink_mode is not None and self._file._links().resolve(full)[0] == "external":
                obj = self._file._through_external(full, elink_mode)
            else:
                obj = self[name]
        except KeyError:  # a dangling link, or an external one whose target is missing: h5py's default
            return default
        return type(obj) if getclass else obj

    def visit(self, func: Callable[[str], Any]) -> Any:
        """Calls ``func(name)`` for every group and dataset below this one (names relative to it),
        depth first in name order, as h5py's ``visit``; stops at, and returns, the first value
        that is not None."""
        return self._visit(lambda name, _: func(name), objects=False)

    def visititems(self, func: Callable[[str, Any], Any]) -> Any:
        """Calls ``func(name, obj)`` for every group and dataset below this one, as h5py's
        ``visititems``; stops at, and returns, the first value that is not None."""
        return self._visit(func, objects=True)

    def visit_links(self, func: Callable[[str], Any]) -> Any:
        """Calls ``func(name)`` for every link below this group (names relative to it): soft,
        external and hard links, each once, however many lead to one object; groups entered once
        each. Depth first in name order, as h5py's ``visit_links`` (HDF5's H5Lvisit). Stops at,
        and returns, the first value that is not None."""
        return self._visit_links(lambda name, link: func(name))

    def visititems_links(self, func: Callable[[str, Any], Any]) -> Any:
        """Calls ``func(name, link)`` for every link below this group, as :meth:`visit_links`,
        with the link as ``get(name, getlink=True)`` gives it (:class:`HardLink`,
        :class:`SoftLink` or :class:`ExternalLink`), as h5py's ``visititems_links``."""
        return self._visit_links(lambda name, link: func(name, _link_object(link)))

    def _visit_links(self, func: Callable[[str, _Link], Any]) -> Any:
        tables = self._file._links()
        kind, group_id = tables.resolve(self._name)
        if kind != "group":  # behind an external link: its links are the other file's
            return None
        for name, link in tables.links_below(group_id):
            result = func(name, link)
            if result is not None:
                return result
        return None

    def _visit(self, func: Callable[[str, Any], Any], objects: bool) -> Any:
        # Every object below this group once (h5py's H5Ovisit from the group), named datatypes
        # too, as Datatype objects in visititems.
        tables = self._file._links()
        kind, group_id = tables.resolve(self._name)
        members = self._file._kinds() if self._name == "/" else \
            tables.objects(group_id, self._name) if kind == "group" else {}
        prefix = self._name.rstrip("/") + "/"
        if objects and self._file._mode == "r":
            with self._file._catalog.lock:
                self._file._catalog.visited.update(full for full, kind in members.items() if kind != "datatype")
        for full, kind in members.items():
            obj = {"group": Group, "dataset": Dataset}.get(kind, Datatype)(self._file, full) if objects else None
            result = func(full[len(prefix):], obj)
            if result is not None:
                return result
        return None

    # -- writes (mode "r+", "a", "w", "x"): each changes the file in place, as h5py's do
    def _change(self, what: str, change: Callable[[], Any], refusal: Optional[type] = InvalidArgumentError) -> Any:
        """Runs `change` (a core call that changes the file) after the checks every change makes
        (`refusal`: h5py's class for it in mode "r"), and lets go of what this File knew of the
        file (its listings, its kept datasets)."""
        self._file._check_writable(what, refusal)
        self._file._written()
        try:
            with _via_h5py.WRITES:  # no read through h5py of this process meanwhile
                return change()
        finally:
            self._file._written()

    def create_group(self, name: str, track_order: Optional[bool] = None) -> "Group":
        """h5py's ``create_group``: a new group ``name`` (the groups on its way made too); it
        tracks the creation order of its members and attributes where ``track_order``. Raises
        ValueError where the name exists (as h5py)."""
        full = self._path(name)
        self._change(f"create group '{full}'",
                     lambda: _h5tile.create_group(self._file._path_text, full, bool(track_order)))
        return Group(self._file, full)

    def require_group(self, name: str) -> "Group":
        """The group ``name``, made where it does not exist (h5py's ``require_group``); TypeError
        where the name is something else."""
        if name not in self:
            return self.create_group(name)
        found = self[name]
        if not isinstance(found, Group):
            raise TypeError(_args.without_secrets(f"Incompatible object ({type(found).__name__}) already exists"))
        return found

    def __delitem__(self, name: str) -> None:
        """h5py's ``del group[name]``: removes the link (the object stays while another name leads
        to it). KeyError where there is no such link."""
        full = self._path(name)
        if full == "/":  # h5py: KeyError ("can't delete '.'")
            raise DatasetNotFoundError(_args.without_secrets(f"cannot delete '/' in '{self._file._shown}': it is the "
                                                             "root group"))
        self._change(f"delete '{full}'", lambda: _h5tile.delete_link(self._file._path_text, full),
                     DatasetNotFoundError)

    def move(self, source: str, dest: str) -> None:
        """h5py's ``move``: renames the link ``source`` to ``dest`` (paths relative to this group).
        ValueError where ``source`` does not exist or ``dest`` does."""
        src, dst = self._path(source), self._path(dest)
        self._change(f"move '{src}'", lambda: _h5tile.move_link(self._file._path_text, src, dst))

    def __setitem__(self, name: str, obj: Any) -> None:
        """h5py's ``group[name] = obj``: a SoftLink or ExternalLink makes that link, a Group or
        Dataset of this file a hard link to it, a NumPy dtype a named datatype, anything else a new
        dataset of it
        (``create_dataset(name, data=obj)``). OSError where the name exists (as h5py)."""
        full = self._path(name)
        obj = _h5py_link_as_ours(obj)
        # h5py's classes: a soft link OSError, an external link RuntimeError, a hard link OSError
        # (in mode "r" and where the name exists), a dataset ValueError in mode "r", OSError where
        # the name exists or a dataset is on its way.
        refusal = (RuntimeError if isinstance(obj, ExternalLink) else IoError
                   if isinstance(obj, (SoftLink, Group, Dataset, Datatype)) else InvalidArgumentError)
        self._file._check_writable(f"create '{full}'", refusal)
        if self.get(name, getlink=True) is not None:
            message = f"Unable to create link '{full}' in '{self._file._shown}' (name already exists)"
            if refusal is RuntimeError:
                raise RuntimeError(_args.without_secrets(message))
            if isinstance(obj, np.dtype):  # h5py: HDF5's commit fails, a KeyError
                raise KeyError(_args.without_secrets(message))
            raise IoError(errno.EEXIST, _args.without_secrets(message))
        path = self._file._path_text
        if isinstance(obj, SoftLink):
            self._change(f"link '{full}'", lambda: _h5tile.create_link(path, full, "soft", obj.path))
        elif isinstance(obj, ExternalLink):
            self._change(f"link '{full}'",
                         lambda: _h5tile.create_link(path, full, "external", obj.path, os.fspath(obj.filename)))
        elif isinstance(obj, (Group, Dataset, Datatype)):
            if os.path.abspath(obj.file.filename) != os.path.abspath(self._file.filename):
                raise IoError(errno.EXDEV, _args.without_secrets(f"cannot link '{full}' to '{obj.name}' of another "
                                                                 "file: interfile hard links are not allowed (use "
                                                                 "an ExternalLink)"))
            self._change(f"link '{full}'", lambda: _h5tile.create_link(path, full, "hard", obj.name))
        elif isinstance(obj, np.dtype):  # a named datatype, committed (h5py's)
            type_keywords = _creation.type_keywords(obj)
            self._change(f"commit datatype '{full}'", lambda: _h5tile.commit_datatype(path, full, **type_keywords))
        else:
            try:
                self.create_dataset(name, data=obj)
            except TypeError as e:
                if "already exists" not in str(e):
                    raise
                raise IoError(errno.ENOTDIR, _args.without_secrets(str(e))) from None

    def copy(self, source: Any, dest: Any, name: Optional[str] = None, shallow: bool = False,
             expand_soft: bool = False, expand_external: bool = False, expand_refs: bool = False,
             without_attrs: bool = False) -> None:
        """h5py's ``copy``: the group or dataset ``source`` (a path relative to this group, or an
        object of any file) copied to ``dest`` (a path relative to this group, or a Group of any
        writable file; then named ``name``, else as the source), by HDF5 (H5Ocopy) with h5py's
        flags."""
        if isinstance(source, _Object):
            src_file, src_name = source.file.filename, source.name
        else:
            src_file, src_name = self._file._path_text, self._path(source)
        if isinstance(dest, Group):
            if name is None and not isinstance(source, _Object):
                self[source]  # h5py looks the source up for its name first: KeyError where missing
            base = name if name is not None else posixpath.basename(src_name.rstrip("/")) or "/"
            dst_owner, dst_name = dest, dest._path(base)
        elif isinstance(dest, _Object):
            raise TypeError("Destination must be path or Group object")
        else:
            dst_owner, dst_name = self, self._path(dest)
        try:
            dst_owner._change(f"copy '{src_name}'", lambda: _h5tile.copy_object(
                src_file, src_name, dst_owner._file._path_text, dst_name, shallow, expand_soft, expand_external,
                expand_refs, without_attrs), RuntimeError)
        except InvalidArgumentError as e:  # a missing source, a name that exists: h5py's RuntimeError
            raise RuntimeError(_args.without_secrets(str(e))) from None

    def create_dataset(self, name: Optional[str], shape: Any = None, dtype: Any = None, data: Any = None,
                       **kwds: Any) -> Dataset:
        """h5py's ``create_dataset``: a new dataset ``name`` of ``data`` (or of ``shape`` and
        ``dtype``, read as the fill value until written) with h5py's keywords: ``chunks`` (True:
        guessed as h5py guesses them), ``maxshape`` (None for an unlimited axis), ``compression``
        ("gzip" or a level 0-9; hdf5plugin's zstd, lz4 and blosc numbers) and
        ``compression_opts``, ``shuffle``, ``fletcher32``, ``fillvalue``, ``track_order``. The data
        is written in parallel (compressed chunks encoded on every core). ValueError where the
        name exists (as h5py)."""
        if name is None:
            raise InvalidArgumentError("h5tile does not make anonymous datasets (name=None): give a name")
        full = self._path(name)
        self._file._check_writable(f"create dataset '{full}'", InvalidArgumentError)
        dtype, named = self._named_type(dtype)
        if _creation.only_hdf5_writes(dtype, data):  # made by h5py, which h5tile lends the file to
            if name in self:
                raise InvalidArgumentError(_args.without_secrets(f"Unable to synchronously create dataset "
                                                                 f"'{full}' (name already exists)"))
            with self._file._through_h5py(f"create dataset '{full}'") as f:
                f.create_dataset(full, shape, dtype, data, **kwds)
            return Dataset(self._file, full)
        core, data = _creation.plan(shape, dtype, data, kwds)
        core["named_type"] = named
        try:
            self._change(f"create dataset '{full}'",
                         lambda: _h5tile.create_dataset(self._file._path_text, full, **core))
        except InvalidArgumentError as e:
            if "is not a group" not in str(e):
                raise
            raise TypeError(_args.without_secrets(f"Incompatible object (Dataset) already exists: {e}")) from None
        dataset = Dataset(self._file, full)
        if data is not None and data.size:
            dataset[...] = data
        return dataset

    def create_dataset_like(self, name: Optional[str], other: Any, **kwupdate: Any) -> Dataset:
        """A new dataset ``name`` made as ``other`` (an h5tile or h5py Dataset) is: its shape, dtype,
        chunks, filters, fill value and whether it records times, and its maximum shape where that
        differs from its shape; ``kwupdate`` overrides any of them (h5py's ``create_dataset_like``)."""
        for key in ("shape", "dtype", "chunks", "compression", "compression_opts", "scaleoffset", "shuffle",
                    "fletcher32", "fillvalue"):
            kwupdate.setdefault(key, getattr(other, key))
        if other.maxshape != other.shape:
            kwupdate.setdefault("maxshape", other.maxshape)
        if "track_times" not in kwupdate and (not isinstance(other, _Object) or not other.file._is_url()):
            try:  # a dataset that records times has a modification time (HDF5's reopened dcpl says True always)
                from h5py import h5g
                kwupdate["track_times"] = h5g.get_objinfo(other.id).mtime != 0
            except (ImportError, UnsupportedTypeError):  # without h5py: h5py's default
                pass
        return self.create_dataset(name, **kwupdate)

    def _named_type(self, dtype: Any) -> "tuple[Any, str]":
        """(the dtype, the path of the named datatype a new dataset's type is, or "") of a
        ``dtype`` argument: a named datatype of this file is used as it is (h5py's way); one of
        another file gives its dtype only."""
        if not isinstance(dtype, Datatype):
            return dtype, ""
        same = os.path.abspath(dtype.file.filename) == os.path.abspath(self._file.filename)
        return dtype.dtype, dtype.name if same else ""

    def create_virtual_dataset(self, name: str, layout: Any, fillvalue: Any = None) -> Dataset:
        """h5py's ``create_virtual_dataset``: a virtual dataset ``name`` of h5py's ``VirtualLayout``
        (its shape, maxshape, dtype and mappings, made with h5py's ``VirtualSource``), reading
        ``fillvalue`` where no source maps. Its sources are read under h5tile's confinement, as
        every virtual dataset's (a source outside the file's folder needs allow_external_sources)."""
        full = self._path(name)
        self._file._check_writable(f"create virtual dataset '{full}'", InvalidArgumentError)
        dcpl = layout._get_dcpl(self._file.filename)  # h5py's mappings ('.' for sources in this file)
        mappings = [(dcpl.get_virtual_vspace(i).encode(), dcpl.get_virtual_filename(i),
                     dcpl.get_virtual_dsetname(i), dcpl.get_virtual_srcspace(i).encode())
                    for i in range(dcpl.get_virtual_count())]
        dtype, named = self._named_type(layout.dtype)
        dtype = np.dtype(dtype)
        fill = b"" if fillvalue is None else np.array(fillvalue, dtype=dtype).tobytes()
        maxshape = layout.maxshape if layout.maxshape is not None else layout.shape
        keywords = _creation.type_keywords(dtype)
        self._change(f"create virtual dataset '{full}'", lambda: _h5tile.create_virtual_dataset(
            self._file._path_text, full, keywords["dtype"], keywords["numpy_type"], keywords["charset"], named,
            list(layout.shape), list(maxshape), fill, mappings))
        return Dataset(self._file, full)

    @contextlib.contextmanager
    def build_virtual_dataset(self, name: str, shape: Any, dtype: Any, maxshape: Any = None,
                              fillvalue: Any = None) -> Iterator[Any]:
        """h5py's ``build_virtual_dataset``: ``with group.build_virtual_dataset(name, shape, dtype)
        as layout: layout[0] = h5py.VirtualSource(...)`` makes the dataset when the block ends."""
        from h5py import VirtualLayout  # h5py's layouts and sources are how mappings are written
        layout = VirtualLayout(shape, dtype, maxshape, self._file.filename)
        yield layout
        self.create_virtual_dataset(name, layout, fillvalue)

    def require_dataset(self, name: str, shape: Any, dtype: Any, exact: bool = False, **kwds: Any) -> Dataset:
        """The dataset ``name`` where it exists with this shape (or, with ``maxshape``, this maximum
        shape) and a dtype ``dtype`` converts to safely (``exact``: the same dtype), else TypeError;
        made (create_dataset) where it does not exist (h5py's ``require_dataset``)."""
        if name not in self:
            return self.create_dataset(name, shape, dtype, **kwds)
        found = self[name]
        if not isinstance(found, Dataset):
            raise TypeError(_args.without_secrets(f"Incompatible object ({type(found).__name__}) already exists"))
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if shape != found.shape:
            if "maxshape" not in kwds:
                raise TypeError(_args.without_secrets(f"Shapes do not match (existing {found.shape} vs new {shape})"))
            maxshape = kwds["maxshape"]
            maxshape = (maxshape,) if isinstance(maxshape, (int, np.integer)) or maxshape is None else tuple(maxshape)
            if maxshape != found.maxshape:  # a shape within the same maximum shape: the dataset it may grow to
                raise TypeError(_args.without_secrets(f"Max shapes do not match (existing {found.maxshape} vs new "
                                                      f"{maxshape})"))
        dtype = np.dtype(dtype)
        if exact and dtype != found.dtype:
            raise TypeError(_args.without_secrets(f"Datatypes do not exactly match (existing {found.dtype} vs new "
                                                  f"{dtype})"))
        if not np.can_cast(dtype, found.dtype):
            raise TypeError(_args.without_secrets(f"Datatypes cannot be safely cast (existing {found.dtype} vs new "
                                                  f"{dtype})"))
        return found

    def __repr__(self) -> str:
        if not self._file._open:
            return "<Closed h5tile Group>"
        return _args.without_secrets(f'<h5tile Group "{self._name}" ({len(self)} members) in '
                                     f'\'{self._file._shown}\'>')


# -- h5py's keywords of File and Group.get. h5tile reads the one file at the path as it is: what
# h5py would tell HDF5 about caches, page buffers, locks, format versions or the layout of new
# files changes nothing it reads, and is taken (checked as h5py checks it) and left unused; what
# would change which bytes are read, or where writes go, is refused, naming it.

# Drivers that read the one file at the path (h5tile reads it with its own reads, as sec2 does),
# with the keywords h5py passes on to each.
_ONE_FILE_DRIVERS = {None: (), "sec2": (), "stdio": (), "direct": ("alignment", "block_size", "cbuf_size"),
                     "core": ("backing_store", "block_size")}
# Why h5tile cannot read through the other drivers h5py knows.
_REFUSED_DRIVERS = {
    "family": "it spreads one HDF5 file over several files", "split": "it keeps metadata and data in two files",
    "multi": "it keeps one HDF5 file in several files", "fileobj": "h5tile opens paths and URLs, not file objects",
    "mpio": "h5tile reads in parallel itself (h5tile.read_tile for MPI programs)",
    "mpiposix": "h5tile reads in parallel itself (h5tile.read_tile for MPI programs)",
    "ros3": "h5tile reads http(s):// and s3:// URLs itself: pass the URL as the name, without a driver",
}
# Keywords that set sizes and counts (caches, page buffers, alignment, new files' properties).
_SIZE_HINTS = ("rdcc_nslots", "rdcc_nbytes", "page_buf_size", "min_meta_keep", "min_raw_keep", "alignment_threshold",
               "alignment_interval", "meta_block_size", "fs_threshold", "fs_page_size")
_LIBVERS = ("earliest", "v108", "v110", "v112", "v114", "v200", "latest")


def _check_locking(name: str, value: Any) -> None:
    """h5py's values of ``locking``: h5tile takes HDF5's file locks as its HDF5 is set up to
    (``HDF5_USE_FILE_LOCKING``), which changes nothing that it reads."""
    if value is not None and value not in ("false", False, "true", True, "best-effort"):
        raise InvalidArgumentError(_args.without_secrets(f"Unsupported locking value: {value!r} (h5py's {name} "
                                                         "is True, False, 'true', 'false', 'best-effort' or None)"))


def _check_libver(libver: Any) -> None:
    """h5py's ``libver``: a version name or a (low, high) pair of them. The versions of the objects
    HDF5 writes; h5tile reads every version its HDF5 reads, and its writes choose their own."""
    bounds = libver if isinstance(libver, tuple) else (libver,)
    if libver is not None and (len(bounds) not in (1, 2) or any(b not in _LIBVERS for b in bounds)):
        raise InvalidArgumentError(_args.without_secrets(f"libver must be one of {', '.join(_LIBVERS)}, or a (low, "
                                                         f"high) pair of them, not {libver!r}"))


def _check_driver(driver: Any, mode: str, driver_options: dict) -> None:
    """Refuses a driver that reads anything other than the one file at the path, or keeps writes
    from it (core without a backing store), and keywords the driver does not take (TypeError,
    as h5py)."""
    if driver not in _ONE_FILE_DRIVERS:
        why = _REFUSED_DRIVERS.get(driver, "h5py knows no such driver") if isinstance(driver, str) else \
            "a driver is named by a str"
        raise InvalidArgumentError(_args.without_secrets(f"h5tile.File cannot open a file through HDF5's driver "
                                                         f"{driver!r}: {why}"))
    for key in driver_options:
        if key not in _ONE_FILE_DRIVERS[driver]:
            raise TypeError(_args.without_secrets(f"'{key}' is an invalid keyword argument for h5tile.File with driver "
                                                  f"{driver!r} (h5py's keywords, and threads, probe, "
                                                  "allow_external_sources, verify_checksums)"))
    if driver == "core" and mode != "r" and not driver_options.get("backing_store", True):
        raise InvalidArgumentError(_args.without_secrets(f"driver 'core' with backing_store=False keeps writes in "
                                                         f"memory, but h5tile.File in mode {mode!r} writes to the "
                                                         "file: open it without them"))


def _check_h5py_file_options(mode: str, options: dict) -> None:
    """h5py's keywords of ``File`` (h5py.File.__init__'s, its drivers' in ``options`` too), checked
    as h5py checks them; raises for what h5tile cannot do as asked."""
    options = dict(options)
    _check_libver(options.pop("libver", None))
    _check_locking("locking", options.pop("locking", None))
    for name in _SIZE_HINTS:
        if options.get(name) is not None:
            _args.whole(name, options[name], _args.UINT64_MAX)
        options.pop(name, None)
    w0 = options.pop("rdcc_w0", None)
    if w0 is not None and not (isinstance(w0, (int, float, np.integer, np.floating)) and 0 <= w0 <= 1):
        raise InvalidArgumentError(_args.without_secrets(f"rdcc_w0 must be a number from 0 to 1, not {w0!r}"))
    if options.pop("track_times", False) not in (True, False, None):
        raise TypeError("track_times must be either True or False")
    if options.pop("fs_strategy", None):
        raise InvalidArgumentError("Unable to set file space strategy of an existing file (h5py's fs_strategy is "
                                   "for new files: h5py.File in mode 'w')")
    if options.pop("swmr", False) and mode != "r":
        warnings.warn("swmr=True only affects read ('r') mode. For swmr write mode, set f.swmr_mode = True after "
                      "opening the file.", stacklevel=3)
    for name in ("track_order", "fs_persist", "userblock_size"):  # new files' (userblock: File._check_userblock)
        options.pop(name, None)
    _check_driver(options.pop("driver", None), mode, options)


def _check_elink_options(file: File, mode: Optional[str], locking: Any, swmr: Optional[bool]) -> None:
    """h5py's checks of ``Group.get``'s keywords for external links (its make_lapl). h5tile opens
    the file of an external link in ``elink_mode`` ("r" or "r+"; by default the linking File's
    mode, File._through_external); ``elink_swmr`` and ``elink_locking`` change nothing it reads
    (as File's swmr and locking); ``elink_mode="r+"`` from a file opened read-only is refused, as
    h5py refuses it."""
    if mode is None and locking is None and swmr is None:
        return
    if file.mode == "r" and mode == "r+":
        raise InvalidArgumentError("Opening external links in write mode from a file opened in read-only mode is "
                                   "not supported")
    if mode not in (None, "r", "r+"):
        raise RuntimeError(_args.without_secrets(f"Unsupported link access mode: {mode!r}"))
    _check_locking("elink_locking", locking)


def _userblock_size(path: str) -> int:
    """The size of the user block before the HDF5 data of the local file `path`: where HDF5 finds
    its signature, at 0, 512, 1024, 2048... (h5py's ``userblock_size``)."""
    with open(path, "rb") as f:
        end = os.fstat(f.fileno()).st_size
        at = 0
        while at + len(_HDF5_SIGNATURE) <= end:
            f.seek(at)
            if f.read(len(_HDF5_SIGNATURE)) == _HDF5_SIGNATURE:
                return at
            at = 512 if at == 0 else at * 2
    return 0


_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


class File(Group):
    """An HDF5 file as h5py's ``File``: the root :class:`Group`, used as a context manager.

    Args:
        name: a path (``str`` or ``os.PathLike``) or an ``http(s)://`` URL (read-only).
        mode: h5py's: "r" (read, the default), "r+" (read and write an existing file), "a"
            (read and write, made where missing), "w" (a new empty file, replacing what is there),
            "w-" or "x" (a new empty file; FileExistsError where one exists). Writes change the
            file in place as h5py's do: groups, links, datasets (parts of them in parallel),
            attributes, copies, resizes. ``track_order`` and ``userblock_size`` apply to a new file.
        threads: worker threads of each read (0: the ``threads`` setting).
        probe, allow_external_sources, verify_checksums: as in :func:`h5tile.from_file`.
        storage_options: for an ``s3://`` URL, its credentials, endpoint and region as fsspec
            (s3fs) takes them: ``anon``, ``key``/``secret``/``token``, ``profile``, ``endpoint_url``,
            ``region_name``, ``client_kwargs`` (``endpoint_url``, ``region_name``,
            ``aws_access_key_id``...). They replace the AWS variables of the environment for that
            URL, in this process (and where the File is unpickled); other keys, and options for a
            local path or an http(s) URL, are refused naming them (h5tile._storage_options).
        h5py's keywords (keyword only), checked as h5py checks them: those that change nothing
            h5tile reads are taken and left unused (``libver``, ``rdcc_nslots``, ``rdcc_nbytes``,
            ``rdcc_w0``, ``page_buf_size``, ``min_meta_keep``, ``min_raw_keep``, ``locking``,
            ``swmr``, ``alignment_*``, ``meta_block_size``, ``track_order``, ``track_times``,
            ``fs_persist``, ``fs_threshold``, ``fs_page_size``); ``driver`` None, "sec2",
            "stdio", "direct" or "core" (the file at the path, read by h5tile's own reads: the
            ``driver`` property says "sec2"); ``userblock_size`` in mode "a" where it is the
            file's. Other drivers, ``fs_strategy``, and ``userblock_size`` in modes "r" and "r+"
            are refused (ValueError), as what h5tile cannot do as asked. ``swmr=True`` is taken
            for reading a file no writer holds open: h5tile never opens a file in HDF5's SWMR
            mode (``swmr_mode`` is False), so a file a SWMR writer holds open is refused, as HDF5
            refuses it to any other reader.

    Like h5py's, an open File keeps the datasets it has read from open (at most 32, the least
    recently read let go first) until :meth:`close`, so that small reads do not open the file
    again each time; with HDF5's file locking, HDF5 programs cannot open it for writing meanwhile,
    as with h5py. Unlike h5py's, every read first checks (stat) that the file is still the one
    opened, and opens it again where it was replaced or rewritten: a File sees the file as it is
    at each call, as long as its datasets keep the shape and dtype they were described with (a
    dataset of another shape or dtype, other than grown along an unlimited axis, fails its reads
    naming both: open the File again). A URL's dataset is kept where the server names versions by
    a strong ETag (S3, nginx): every request asks for the version opened, each read first checks
    with a one-byte request that the object is still that version, and a read of an object changed
    since opens it again. WebHDFS URLs, and objects modified in the last 2 s, are opened by each read. It is
    picklable (it reopens where it is unpickled). What it lists and describes
    is cached until it writes.

    Raises:
        NoSuchFileError (FileNotFoundError; an empty name too), IsADirectoryPathError (IsADirectoryError),
        NotHdf5FileError (OSError), InvalidArgumentError (ValueError) for another mode.

    Example::

        with h5tile.File("data.h5") as f:
            ds = f["grp/temp"]
            ds.shape, ds.dtype, ds.chunks, ds.compression
            part = ds[10:20, ::2]          # numpy.ndarray
            whole = ds[...]                # or np.asarray(ds)
            units = ds.attrs["units"]
    """

    def __init__(self, name: Union[str, "os.PathLike[str]"], mode: str = "r", *, threads: int = 0,
                 probe: Optional[bool] = None, allow_external_sources: bool = False, verify_checksums: bool = False,
                 storage_options: Optional[dict] = None, **h5py_options: Any):
        self._file_object = None
        if _file_objects.is_file_object(name):
            if mode != "r":
                raise InvalidArgumentError(_args.without_secrets(f"a file-like object opens in mode 'r' only (not "
                                                                 f"{mode!r}): h5tile writes files at a path"))
            self._file_object = name  # kept alive (h5py keeps it too) while this File reads it
            name = _file_objects.register(name, self)
        path = _args.path("name", name)
        if not path:  # (h5py: OSError "invalid file name"; Python's open(""): FileNotFoundError)
            raise NoSuchFileError("cannot open '': the file name is empty; h5tile.File opens a path such as "
                                  "'data.h5' or a URL")
        self._path_text = os.fspath(path)
        s3_settings = _storage_options.s3_settings(storage_options, self._path_text)
        _storage_options.apply(s3_settings, self._path_text, self)  # before the first open of the URL
        # The file held (and lent), by this name whatever the working folder is then.
        self._held_path = os.path.abspath(self._path_text)
        self._file_identity = None  # the file's (device, inode), once it is open (_hold)
        if mode is None:
            mode = "r"
        if mode not in _FILE_MODES:
            raise InvalidArgumentError(_args.without_secrets("Invalid mode; must be one of r, r+, w, w-, x, a (h5py's "
                                                             f"modes), not {mode!r}"))
        _check_h5py_file_options(mode, h5py_options)
        userblock = h5py_options.get("userblock_size")
        url = _args.is_url(self._path_text)
        creating = mode in _CREATING_MODES or (mode == "a" and not url and not os.path.lexists(self._path_text))
        if userblock is not None and not creating and mode != "a":
            raise InvalidArgumentError("User block may only be specified when creating a file (h5py's "
                                       "userblock_size; in mode 'a', the size the file has)")
        if creating:
            if url:
                raise InvalidArgumentError(_args.without_secrets(f"'{_args.redacted(self._path_text)}' is a URL: "
                                                                 f"URLs open in mode 'r' only (not {mode!r})"))
            _via_h5py.reclaim(self._path_text)  # a file this process lent to h5py: taken back first
            _h5tile.create_file(self._path_text, mode != "w",
                                track_order=bool(h5py_options.get("track_order") or False),
                                userblock_size=_args.whole("userblock_size", userblock or 0, _args.UINT64_MAX))
            userblock = None  # the file's own now
        self._mode = "r" if mode == "r" else "r+"
        self._options = dict(threads=_args.whole("threads", threads), probe=_args.probe(probe),
                             allow_external_sources=_args.flag("allow_external_sources", allow_external_sources),
                             verify_checksums=_args.flag("verify_checksums", verify_checksums),
                             s3_settings=s3_settings)
        self._catalog = _Catalog()
        self._readers: "OrderedDict[str, Any]" = OrderedDict()  # name -> _h5tile._Reader, most recent last
        self._readers_lock = threading.Lock()
        self._open = True
        super().__init__(self, "/")
        if mode != "r" and self._is_url():
            raise InvalidArgumentError(_args.without_secrets(f"'{self._shown}' is a URL: URLs open in mode 'r' only "
                                                             f"(not {mode!r})"))
        _h5tile.read_attributes(self._path_text, "/")  # the file exists and is HDF5 (errors as h5py's)
        if userblock is not None:
            self._check_userblock(userblock)
        self._hold()

    def _hold(self) -> None:
        """In a write mode, the file is held open for writing until close() (or until this File
        is collected), as h5py holds it: each write goes through that open, not an open of its own."""
        self._release = None
        self._file_identity = _via_h5py.identity(self._held_path)  # (device, inode): how files are told apart
        if self._mode != "r" and self._open:
            _h5tile.hold_for_writing(self._held_path)
            self._release = weakref.finalize(self, _release_held, self._held_path, self._file_identity)

    def _check_userblock(self, size: Any) -> None:
        """h5py's check of ``userblock_size`` when it opens an existing file: the file's own."""
        try:
            size = int(size)
        except (TypeError, ValueError):
            raise InvalidArgumentError("User block size must be an integer") from None
        actual = self.userblock_size
        if size != actual:
            raise InvalidArgumentError(_args.without_secrets(f"Requested userblock size ({size}) does not match that "
                                                             f"of existing file ({actual})"))

    # -- File's own properties
    @property
    def filename(self) -> str:
        """The path or URL the file was opened with."""
        return self._path_text

    @property
    def mode(self) -> str:
        """"r" (read-only) or "r+" (read and write), as h5py reports it."""
        return "r" if self._mode == "r" else "r+"

    @property
    def driver(self) -> str:
        """The HDF5 driver h5tile opens the file with, by h5py's name: "sec2" for a path (h5tile's
        own reads of the file beside it), "unknown" for a URL (h5tile's own driver, which h5py has
        no name for); whatever ``driver`` the File was opened with."""
        return "unknown" if self._is_url() else "sec2"

    @property
    def userblock_size(self) -> Optional[int]:
        """The size in bytes of the user block before the HDF5 data (h5py's ``userblock_size``);
        None for a URL, whose bytes h5tile reads only through HDF5."""
        self._check_open()
        return None if self._is_url() else _userblock_size(self._path_text)

    @property
    def libver(self) -> tuple:
        """The bounds of the file format h5tile's changes use, as h5py names them: ("earliest", the
        newest format of the HDF5 h5tile was built with: "v110" for HDF5 1.10, "v114" for 1.14,
        "v200" for 2.0). h5tile's changes keep to its own HDF5's defaults whatever ``libver`` the
        File was given (checked as h5py checks it, not applied)."""
        major, minor, _ = _h5tile.hdf5_library_version()
        return ("earliest", f"v{major}{minor:02d}")

    @property
    def swmr_mode(self) -> bool:
        """False: h5tile never opens a file in HDF5's SWMR read mode (``swmr=True`` is taken for a
        file no writer holds open; every read sees the file as it is then)."""
        return False

    @property
    def id(self) -> Any:
        """h5py's low-level ``FileID`` of the file (see ``Dataset.id``)."""
        return self._low_level_id(lambda view: view.id)

    def _low_level_id(self, of: Callable[[Any], Any], kept: Optional[_Object] = None) -> Any:
        """``of(h5py's open behind .id)``, kept on `kept` (this File by default): for a closed File
        the last one taken is given back, closed (h5py's identifiers of a closed file are invalid,
        not an error); never taken, the closed File's error."""
        kept = self if kept is None else kept
        if not self._open and kept.__dict__.get("_last_id") is not None:
            return kept._last_id
        identifier = kept._last_id = of(self._h5py_view())
        return identifier

    def _h5py_view(self) -> Any:
        """h5py's open of this file behind ``.id``. In mode "r", h5py's own read-only open, made at
        the first use after the last change through any File of it (HDF5 shares one open of a
        file among all opens of it in the library, so only a fresh open sees a change). In a write
        mode, h5py's read-write open, to which h5tile lends the file (_via_h5py.lend): h5py's
        identifiers write it, h5tile's reads see what they wrote, and the next change through
        h5tile takes the file back, closing them."""
        self._check_open()
        if self._is_url() and self.__dict__.get("_file_object") is None:
            raise UnsupportedTypeError(_args.without_secrets(f"h5py's low-level identifiers (.id) of "
                                                             f"'{self._shown}': h5tile gives them for local files "
                                                             "and file objects, not for a URL"))
        if self._mode != "r":
            return _via_h5py.lend(self._held_path, self._file_identity)
        view = self.__dict__.get("_h5py_open")
        if view is None or not view.id.valid:  # (closed at a lend: _via_h5py._close_every_open_of)
            view = self._h5py_open = _via_h5py.view(self.__dict__.get("_file_object") or self._path_text)
        return view

    @contextlib.contextmanager
    def _through_h5py(self, what: str) -> Iterator[Any]:
        """h5py's read-write File of this file, for a change h5tile does not make itself (types
        only HDF5 writes: variable-length sequences, references; dimension scales): made through
        h5py, which h5tile lends the file to (see _h5py_view), as any change through this File,
        then taken back. UnsupportedTypeError where h5py is not installed."""
        self._check_writable(what)
        try:
            with _via_h5py.WRITES:
                yield _via_h5py.lend(self._held_path, self._file_identity)
        finally:
            self._written()

    def _drop_h5py_view(self) -> None:
        """Closes h5py's open behind ``.id`` (with the identifiers taken from it), if any: the
        read-only one, or the read-write one the file is lent to (taken back)."""
        view = self.__dict__.pop("_h5py_open", None)
        if view is not None:
            view.close()
        if _via_h5py.LENT and self._mode != "r":
            _via_h5py.take_back(self._held_path, self._file_identity)

    def close(self) -> None:
        """Closes the file: lets go of the datasets kept open (waiting for reads in progress) and
        marks the objects closed (h5py's identifiers taken from it too)."""
        self._open = False
        try:
            view = self.__dict__.pop("_h5py_open", None)
            if view is not None:
                view.close()
            for other in self.__dict__.pop("_external_files", {}).values():
                other.close()  # the files external links led to
            with self._readers_lock:
                readers, self._readers = list(self._readers.values()), OrderedDict()
            for reader in readers:
                reader.close()
            if self.__dict__.get("_file_object") is not None:
                _file_objects.unregister(self._path_text)  # the core lets go of its bytes or descriptor
        finally:  # the hold ends whatever failed above
            release = self.__dict__.get("_release")
            if release is not None and release.alive:
                release()  # takes the file back from h5py where lent, flushes what was written, lets go of it

    def flush(self) -> None:
        """Flushes what was written through this File to the file (h5py's ``flush``): other
        processes then read it; this process reads each write at once."""
        self._check_open()
        if self._mode != "r":
            _h5tile.flush_writes(self._path_text)

    def __enter__(self) -> File:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __reduce__(self):
        if self.__dict__.get("_file_object") is not None:
            raise TypeError("an h5tile.File over a file-like object cannot be pickled: open its file by path")
        return (_reopen_file, (self._path_text, self._mode, self._options, self._open))

    def __repr__(self) -> str:
        if not self._open:
            return "<Closed h5tile File>"
        return _args.without_secrets(f"<h5tile File '{self._shown}' (mode {self.mode})>")

    # -- what objects share
    @property
    def _shown(self) -> str:
        """The path or URL as messages and reprs show it (a URL without its secrets), made once."""
        shown = self.__dict__.get("_shown_text")
        if shown is None:
            shown = self.__dict__["_shown_text"] = _args.redacted(self._path_text)
        return shown

    def _is_url(self) -> bool:
        return _args.is_url(self._path_text)

    def _root(self) -> File:
        return self

    def _reader(self, name: str):
        """The reader of dataset `name`, which keeps it open between reads (h5tile.DatasetReader):
        at most _KEPT_DATASETS per File, the least recently read closed first."""
        with self._readers_lock:
            reader = self._readers.get(name)
            if reader is not None:
                self._readers.move_to_end(name)
                return reader
            o = self._options
            reader = _h5tile._Reader(self._path_text, name, -1, o["threads"], o["allow_external_sources"],
                                     o["verify_checksums"], o["probe"])
            with self._catalog.lock:
                info = self._catalog.described.get(name)
            if info is not None:  # what the File's Dataset says: a file replaced since fails the reads
                reader.expect(info["shape"], info["dtype"])
            self._readers[name] = reader
            oldest = self._readers.popitem(last=False)[1] if len(self._readers) > _KEPT_DATASETS else None
        if oldest is not None:
            oldest.close()  # waits for its reads in progress
        return reader

    def _through_external(self, full: str, mode: Optional[str] = None) -> "Union[Group, Dataset]":
        """The object `full` leads to through an external link, as h5py gives it: an object of
        the other file (its ``file`` that file, its ``name`` its path there), opened with this
        File's options in `mode` (h5py's ``elink_mode``; by default this File's: writes through
        the link change the other file, as h5py's do), one File for each file and mode, closed
        with this one (a File in a write mode holds its file until closed). The core says where
        the link leads, under the confinement of every external link h5tile follows (refused
        outside this file's folder unless allow_external_sources, naming the link and why)."""
        link, rest = self._links().external(full)
        hops = self.__dict__.get("_external_hops", 0) + 1
        if hops > _MAX_EXTERNAL_HOPS:  # a loop of external links (a.h5 -> b.h5 -> a.h5): as HDF5's nlinks
            raise DatasetNotFoundError(_args.without_secrets(f"cannot open '{full}' in '{self._shown}': too many "
                                                             f"links ({_MAX_EXTERNAL_HOPS} external links followed)"))
        o = self._options
        target, inside = _h5tile.external_link_target(self._path_text, link, o["allow_external_sources"])
        mode = mode or self.mode
        opened = self.__dict__.setdefault("_external_files", {})
        other = opened.get((target, mode))
        if other is None or not other._open:
            other = opened[(target, mode)] = File(
                target, mode, threads=o["threads"], probe=o["probe"], allow_external_sources=o["allow_external_sources"],
                verify_checksums=o["verify_checksums"])
            other._external_hops = hops
        return other[posixpath.join(inside, rest) if rest else inside]

    def _check_open(self) -> None:
        if not self._open:
            raise InvalidArgumentError(_args.without_secrets(f"'{self._shown}' is closed"))
        key = self._file_identity
        if key is None:  # a URL or a file object: never lent, never changed in this process
            return
        if _via_h5py.LENT and _via_h5py.sync(self._held_path, key):
            self._forget_reads()  # h5py's identifiers may have changed anything since
        if _via_h5py.CHANGES:
            count = _via_h5py.seen(key, self._held_path)
            if count != self.__dict__.get("_seen_changes", 0):
                # Another File of this process (or h5py) changed the file, or replaced it (to_file
                # renames a new file over the path): read anew, as the path's file is now.
                self._file_identity = _via_h5py.identity(self._held_path) or key
                self._seen_changes = _via_h5py.seen(self._file_identity, self._held_path)
                self._forget_reads()

    def _forget_reads(self) -> None:
        """Every description and link table read again, every dataset's reader made anew, h5py's
        read-only open behind ``.id`` (mode "r") opened anew."""
        view = self.__dict__.pop("_h5py_open", None)
        if view is not None:
            view.close()
        self._catalog.reset()
        with self._readers_lock:
            readers = list(self._readers.values())
            self._readers.clear()
        for reader in readers:
            reader.close()  # waits for its reads in progress

    def _check_writable(self, what: str, refusal: Optional[type] = None) -> None:
        """Raises for a write to a file open read-only: ``refusal`` (h5py's class for that write)
        or, by default, OSError (EBADF), each saying "no write intent on file" as HDF5 does."""
        self._check_open()
        if self._mode == "r":
            if refusal is None:
                raise _read_only(what, self._path_text)
            raise refusal(_args.without_secrets(f"cannot {what}: '{self._shown}' is open read-only (mode 'r'): no "
                                                "write intent on file"))
        self._drop_h5py_view()  # a change follows: h5py's identifiers taken before it closed

    def _links(self) -> _LinkTables:
        self._check_open()
        catalog = self._catalog
        with catalog.lock:
            if catalog.links is None:
                catalog.links = _LinkTables(self._path_text)
            return catalog.links

    def _kinds(self) -> dict:
        self._check_open()
        catalog = self._catalog
        with catalog.lock:
            if catalog.links is None:
                catalog.links = _LinkTables(self._path_text, complete=True)
            if catalog.kinds is None:
                catalog.kinds = catalog.links.objects()
            return catalog.kinds

    def _describe(self, name: str) -> dict:
        self._check_open()
        catalog = self._catalog
        with catalog.lock:
            info = catalog.described.get(name)
        if info is None:
            try:
                info = _h5tile.describe(self._path_text, name, self._options["probe"])
            except UnsupportedTypeError:
                info = self._describe_via_h5py(name)
                if info is None:
                    raise
            with catalog.lock:
                catalog.described[name] = info
        return info

    def _describe_via_h5py(self, name: str) -> Optional[dict]:
        """A dataset of a type the core does not read (variable-length sequences, references...)
        described by h5py, whose reads then go through h5py (_via_h5py.py): None where h5py is
        missing, the file is a URL or the name leads through an external link."""
        if self._is_url() or self._links().external(name) is not None:
            return None
        names = {code: filter_name for filter_name, code in Dataset._FILTER_IDS.items()}
        return _via_h5py.describe(self._path_text, name, names)

    def _preload(self) -> None:
        """Describes every dataset and reads every group's and dataset's attributes, with one
        open of the file for each (the xarray backend reads them all; an open for each object
        would fetch a URL's first block and metadata again for each). Where either fails as a
        whole (one object h5tile cannot describe), each object is left to be read on its own."""
        kinds = self._kinds()
        catalog = self._catalog
        with catalog.lock:
            datasets = [n for n, k in kinds.items() if k == "dataset" and n not in catalog.described]
        try:
            infos = _h5tile.describe_each(self._path_text, datasets, self._options["probe"]) if datasets else []
            with catalog.lock:
                catalog.described.update(zip(datasets, infos))
        except Exception:  # noqa: BLE001 - described one at a time, each error where it belongs
            pass
        if self._mode != "r":
            return  # attributes this File may write are read anew each time
        objects = ["/"] + [n for n, k in kinds.items() if k in ("group", "dataset")]
        try:
            each = _h5tile.read_attributes_of_each(self._path_text, objects)
        except Exception:  # noqa: BLE001 - as above
            return
        with catalog.lock:
            for name, attributes in zip(objects, each):
                catalog.attributes[name] = _by_name(attributes)

    def _attributes_of(self, name: str) -> Optional[dict]:
        """The attributes of object `name` as read_attributes' rows by name, from memory where a
        preload or walk read them; where `name` is one of a visititems walk's objects, every such
        object's are read now, in one call (a walk reading each object's attributes would
        otherwise open the file once per object). None: read them on their own."""
        catalog = self._catalog
        with catalog.lock:
            known = catalog.attributes.get(name)
            batch = sorted(catalog.visited) if known is None and name in catalog.visited else []
            if batch:
                catalog.visited.clear()
        if known is not None or not batch:
            return known
        try:
            each = _h5tile.read_attributes_of_each(self._path_text, batch)
        except Exception:  # noqa: BLE001 - one object h5tile cannot read: each read on its own
            return None
        with catalog.lock:
            for member, attributes in zip(batch, each):
                catalog.attributes.setdefault(member, _by_name(attributes))
            return catalog.attributes.get(name)

    def _written(self) -> None:
        """After a write through this File: every description read again, and every dataset's
        reader made anew from it (a reader fails the reads of a dataset that no longer has the
        description it was made with)."""
        self._drop_h5py_view()  # the next .id opens the file again, to see the change
        self._forget_reads()
        self._seen_changes = _via_h5py.changed(self._file_identity, self._held_path)

    def _attributes_changed(self) -> None:
        """After a write of attributes through this File: the attributes it read are read anew,
        and other Files of the file forget what they read (the count of changes)."""
        self._seen_changes = _via_h5py.changed(self._file_identity, self._held_path)
        with self._catalog.lock:
            self._catalog.attributes.clear()

    def _reshaped(self, name: str, shape: tuple) -> None:
        """After a resize of dataset `name` through this File: its description says the new shape,
        every other description is read again and every reader made anew (a link may lead to the
        same dataset under another name)."""
        self._drop_h5py_view()
        self._seen_changes = _via_h5py.changed(self._file_identity, self._held_path)
        with self._catalog.lock:
            info = self._catalog.described.get(name)
            # Other names may lead to the same dataset (links): their descriptions go.
            self._catalog.described.clear()
            if info is not None:
                self._catalog.described[name] = {**info, "shape": tuple(shape)}
        with self._readers_lock:
            readers, self._readers = list(self._readers.values()), OrderedDict()
        for reader in readers:
            reader.close()


def _release_held(path: str, key: Optional[tuple]) -> None:
    """Ends a File's hold of `path` (of identity `key`) at close(), or when it is collected: h5py's
    opens of it, where it is lent, closed first; the hold ends even where that fails (the file
    removed meanwhile)."""
    try:
        _via_h5py.take_back(path, key)
    finally:
        _h5tile.release_for_writing(path)


def _reopen_file(path: str, mode: str, options: dict, is_open: bool) -> File:
    f = File.__new__(File)
    f._path_text, f._mode, f._options = path, mode, dict(options)
    _storage_options.apply(f._options.get("s3_settings") or {}, path, f)  # where it is unpickled too
    f._held_path = os.path.abspath(path)
    f._catalog, f._open = _Catalog(), is_open
    f._readers, f._readers_lock = OrderedDict(), threading.Lock()
    _Object.__init__(f, f, "/")
    f._hold()
    return f


# External links followed one after another at most (HDF5's default nlinks, which h5py keeps).
_MAX_EXTERNAL_HOPS = 16

# Datasets a File keeps open at most (File._reader).
_KEPT_DATASETS = 32
