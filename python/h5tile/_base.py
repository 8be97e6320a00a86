"""What h5tile's groups and datasets share: :class:`_Object`, a name in a file, its attributes and
its parent (:class:`File` and :class:`Group` are in _objects.py, :class:`Dataset` in _dataset.py)."""
from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

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
    def attrs(self) -> AttributeManager:
        """The object's attributes, as a mapping (read; write in mode "a" or "r+")."""
        return AttributeManager(self)

    def _identity(self) -> Any:
        """What tells this object from another, as h5py's equality does: the object its name leads
        to (two names of one object, through hard or soft links, are equal), or the name itself
        where the links do not say (behind an external link, or a closed File)."""
        try:
            kind, object_id = self._file._links().resolve(self._name)
        except Exception:  # noqa: BLE001 (a closed File, an unreadable file: the name decides)
            return ("name", self._name)
        return ("object", object_id) if object_id is not None else ("name", self._name)

    def __eq__(self, other: Any) -> bool:
        return (type(other) is type(self) and self._file.filename == other._file.filename
                and self._identity() == other._identity())

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._file.filename, self._identity()))

    def __bool__(self) -> bool:
        return self._file._open
