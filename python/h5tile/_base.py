"""What h5tile's groups and datasets share: :class:`_Object`, a name in a file, its attributes and
its parent (:class:`File` and :class:`Group` are in _objects.py, :class:`Dataset` in _dataset.py)."""
from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING, Any

from . import _arguments as _args
from . import _via_h5py
from ._attributes import AttributeManager

if TYPE_CHECKING:
    from ._objects import File, Group



class _Object:
    """What groups and datasets share: a name in a file, attributes, a parent."""

    def __init__(self, file: File, name: str):
        self._file = file
        self._name = name

    @property
    def name(self) -> str:
        """The full path of the object in its file ("/", "/grp/temp")."""
        return self._name

    @property
    def file(self) -> File:
        """The :class:`File` this object belongs to."""
        return self._file

    @property
    def parent(self) -> Group:
        """The group holding this object (the root group's parent is the root group)."""
        return self._file[posixpath.dirname(self._name) or "/"]

    @property
    def id(self) -> Any:
        """h5py's low-level identifier of this object (a ``DatasetID``, ``GroupID``, ``TypeID``),
        from h5py's own open of the file (h5py must be installed; local files and file objects): in
        mode "r" read-only, for what h5py's low-level API inspects (the type, property lists,
        storage, chunk info); in a write mode read-write, h5tile lending the file to h5py (its
        low-level writers work: ``h5ds.set_scale``, ``h5d.create``). The next change through this
        File closes it (take it again to see the change), and so does closing the File, as h5py's."""
        return self._file._low_level_id(lambda view: _via_h5py.object_of(view, self._name).id, self)

    @property
    def _id(self) -> Any:
        """``id`` by h5py's private name, which h5py's own tests and some programs use."""
        return self.id

    @property
    def ref(self) -> Any:
        """An object reference to this object (h5py's ``Reference``), made by h5py on its read-only
        open of the file (see ``id``): store it where h5py stores references, or give it back as a
        name (``f[ref]``)."""
        return _via_h5py.object_of(self._file._h5py_view(), self._name).ref

    @property
    def attrs(self) -> AttributeManager:
        """The object's attributes, as a mapping (read; write in mode "a" or "r+")."""
        return AttributeManager(self)

    def _identity(self) -> Any:
        """What tells this object from another, as h5py's equality does: the file (its real path,
        however it was spelled) and the object its name leads to (two names of one object,
        through hard or soft links, are equal), or the name itself where the links do not say
        (behind an external link, or a File closed before it was asked). Asked once: the hash of an
        object stays what it was after its File closes."""
        cached = self.__dict__.get("_identity_cached")
        if cached is not None:
            return cached
        path = self._file.filename
        where = path if _args.is_url(path) else os.path.realpath(path)
        try:
            kind, object_id = self._file._links().resolve(self._name)
            identity = (where, "object", object_id) if object_id is not None else (where, "name", self._name)
        except Exception:  # noqa: BLE001 (a closed File, an unreadable file: the name decides)
            return (where, "name", self._name)
        self.__dict__["_identity_cached"] = identity
        return identity

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._identity()))

    def __bool__(self) -> bool:
        return self._file._open
